import { PassThrough } from 'node:stream';
import fs from 'node:fs';
import { loadConfig } from '../../src/config';
import { runCli } from '../../src/cli';
import { describeBoot } from '../../src/cli/serve';
import type { OutgoingMail } from '../../src/mail';
import { TRANSPORTS, type TransportDescriptor } from '../../src/notify';
import { setting } from '../../src/shared';
import { z } from 'zod';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, waitUntil } from '../helpers/relay-harness';

const SECRET = 'descriptor-webhook-secret';

/**
 * A tiny transport written here: it keeps each mail in memory. Its own setting, MEMORY_MAILBOX, chooses
 * it (first in the list); without it the relay's own transports are used.
 */
function createMemoryTransport(): {
  transport: TransportDescriptor<'memory', { mailbox: string }>;
  sent: OutgoingMail[];
  verified: string[];
} {
  const sent: OutgoingMail[] = [];
  const verified: string[] = [];
  const transport: TransportDescriptor<'memory', { mailbox: string }> = {
    name: 'memory',
    settings: {
      MEMORY_MAILBOX: setting(z.string().trim().optional(), { group: 'features', description: 'Keep mails in this in-memory mailbox.' }),
    },
    configure: (env) => (typeof env.MEMORY_MAILBOX === 'string' ? { mailbox: env.MEMORY_MAILBOX } : undefined),
    create: () => ({
      kind: 'memory',
      async send(mail) {
        sent.push(mail);
        return { status: 'sent', response: `kept as mail #${sent.length}` };
      },
      async verify(onStep) {
        verified.push('verify');
        onStep?.('the memory is there');
      },
      async close() {},
    }),
    describeStart: (memory) => `memory ${memory.mailbox} (kept in the test)`,
    describeVerified: (memory) => `The memory transport holds the mails in ${memory.mailbox}; no mail was sent.`,
    concurrency: () => 1,
    secrets: () => [],
    failures: {},
  };
  return { transport, sent, verified };
}

/** A transport added through its descriptor alone: the relay, serve's start line and verify-smtp all use it. */
describe('a transport described by its descriptor alone', () => {
  it('delivers the relay’s mails', async () => {
    const memory = createMemoryTransport();
    const relay = await startTestRelay(
      { MAIL_TO: 'oncall@example.com', WEBHOOK_SECRET: SECRET, MEMORY_MAILBOX: 'inbox' },
      { transports: [memory.transport, ...TRANSPORTS] },
    );
    try {
      const body = buildBody({ data: buildReportData({ id: 5 }) });
      const answer = await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
      expect(answer.status).toBe(202);
      await waitUntil(async () => ((await relay.relay.store.countByState()).sent === 1 ? true : undefined), 15_000, 'the mail sent');
      expect(memory.sent).toHaveLength(1);
      expect(memory.sent[0].envelope.to).toEqual(['oncall@example.com']);
      // Nothing went to the default transport's .eml files.
      expect(fs.existsSync(relay.config.mail.outboxDir)).toBe(false);
    } finally {
      await relay.stop();
    }
  });

  it('is chosen by its own setting, and names it on the start line', () => {
    const { transport } = createMemoryTransport();
    const transports = [transport, ...TRANSPORTS];
    const load = (env: Record<string, string>) =>
      loadConfig(
        { DATA_DIR: makeTempDir(), MAIL_TO: 'oncall@example.com', ...env },
        { readFile: (f) => fs.readFileSync(f, 'utf8'), transports },
      );
    const config = load({ MEMORY_MAILBOX: 'inbox' });
    expect(config.transport).toEqual({ name: 'memory', settings: { mailbox: 'inbox' } });
    expect(describeBoot(config, transports)).toContain('mail via memory inbox (kept in the test)');
    // Without its setting, the same relay writes .eml files.
    const without = load({});
    expect(describeBoot(without, transports)).toContain(`mail via .eml files in ${without.mail.outboxDir}`);
  });

  it('is checked by verify-smtp, with its own words', async () => {
    const memory = createMemoryTransport();
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await runCli(['node', 'compliance-relay', 'verify-smtp'], {
      env: { DATA_DIR: makeTempDir(), MAIL_TO: 'oncall@example.com', MEMORY_MAILBOX: 'inbox' },
      stdout,
      stderr: new PassThrough(),
      readFile: (f) => fs.readFileSync(f),
      cwd: process.cwd(),
      onSignal: () => undefined,
      transports: [memory.transport, ...TRANSPORTS],
    });
    expect(code).toBe(0);
    expect(memory.verified).toEqual(['verify']);
    expect(out).toContain('ok  the memory is there');
    expect(out).toContain('The memory transport holds the mails in inbox; no mail was sent.');
  });
});
