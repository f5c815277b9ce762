import { PassThrough } from 'node:stream';
import fs from 'node:fs';
import { loadConfig } from '../../src/config';
import { runCli } from '../../src/cli';
import { describeBoot } from '../../src/cli/serve';
import type { OutgoingMail } from '../../src/mail';
import { TRANSPORTS, type TransportDescriptor } from '../../src/notify';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, waitUntil } from '../helpers/relay-harness';

const SECRET = 'descriptor-webhook-secret';

/** A tiny transport written here: it keeps each mail in memory, and is chosen by being first in the list. */
function createMemoryTransport(): { transport: TransportDescriptor; sent: OutgoingMail[]; verified: string[] } {
  const sent: OutgoingMail[] = [];
  const verified: string[] = [];
  const transport: TransportDescriptor = {
    name: 'memory',
    selects: () => true,
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
    describeStart: () => 'memory (kept in the test)',
    describeVerified: () => 'The memory transport holds the mails; no mail was sent.',
  };
  return { transport, sent, verified };
}

/** A transport added through its descriptor alone: the relay, serve's start line and verify-smtp all use it. */
describe('a transport described by its descriptor alone', () => {
  it('delivers the relay’s mails', async () => {
    const memory = createMemoryTransport();
    const relay = await startTestRelay(
      { MAIL_TO: 'oncall@example.com', WEBHOOK_SECRET: SECRET },
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

  it('names it on the start line', () => {
    const config = loadConfig({ DATA_DIR: makeTempDir(), MAIL_TO: 'oncall@example.com' }, { readFile: (f) => fs.readFileSync(f, 'utf8') });
    const { transport } = createMemoryTransport();
    expect(describeBoot(config, [transport, ...TRANSPORTS])).toContain('mail via memory (kept in the test)');
    // Without it, the same configuration writes .eml files.
    expect(describeBoot(config)).toContain(`mail via .eml files in ${config.mail.outboxDir}`);
  });

  it('is checked by verify-smtp, with its own words', async () => {
    const memory = createMemoryTransport();
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    const code = await runCli(['node', 'compliance-relay', 'verify-smtp'], {
      env: { DATA_DIR: makeTempDir(), MAIL_TO: 'oncall@example.com' },
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
    expect(out).toContain('The memory transport holds the mails; no mail was sent.');
  });
});
