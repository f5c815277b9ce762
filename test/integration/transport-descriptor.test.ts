import fs from 'node:fs';
import path from 'node:path';
import { listBootWarnings, loadConfig } from '../../src/config';
import { describeBoot } from '../../src/cli/serve';
import type { OutgoingMail } from '../../src/mail';
import { buildFailureCatalogue, classifyFailure, TRANSPORTS, type Notifier, type TransportDescriptor } from '../../src/notify';
import { createTransportHealth } from '../../src/health';
import { sampleValue, scrape } from '../helpers/prometheus';
import { createSessionKeys, SESSION_COOKIE } from '../../src/dashboard';
import { textOf } from '../helpers/html';
import { createSilentLogger, positiveInt, setting } from '../../src/shared';
import { z } from 'zod';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, quickRetries, startTestRelay, waitUntil } from '../helpers/relay-harness';
import { runCliCaptured } from '../helpers/run-cli';

const SECRET = 'descriptor-webhook-secret';

/**
 * A tiny transport written here: it keeps each mail in memory. Its own setting, MEMORY_MAILBOX, chooses
 * it (first in the list); without it the relay's own transports are used. MEMORY_LIMIT has a default.
 */
function createMemoryTransport(
  options: {
    full?: boolean;
    /** Fails one mail with this error instead (a route's own answer); undefined: as `full` says. */
    refuse?: (mail: OutgoingMail) => Error | undefined;
  } = {},
): {
  transport: TransportDescriptor<'memory', { mailbox: string; limit: number }>;
  sent: OutgoingMail[];
  verified: string[];
} {
  const sent: OutgoingMail[] = [];
  const verified: string[] = [];
  const failures = {
    MEMORY_FULL: {
      retryable: false,
      configProblem: false,
      scope: 'message',
      transport: 'memory',
      serverReachable: true,
      words: 'The in-memory mailbox is full.',
    },
  } as const;
  const transport: TransportDescriptor<'memory', { mailbox: string; limit: number }> = {
    name: 'memory',
    settings: {
      MEMORY_MAILBOX: setting(z.string().trim().optional(), { group: 'features', description: 'Keep mails in this in-memory mailbox.' }),
      MEMORY_LIMIT: setting(positiveInt(100), { group: 'features', description: 'Mails the mailbox holds.' }),
    },
    configure: (env) =>
      typeof env.MEMORY_MAILBOX === 'string' ? { mailbox: env.MEMORY_MAILBOX, limit: env.MEMORY_LIMIT as number } : undefined,
    create: (memory) => ({
      async send(mail) {
        // Its own code, as its library would raise it: the relay classifies it from the descriptor's failures.
        if (options.full) throw Object.assign(new Error(`${memory.mailbox} holds no more`), { code: 'MEMORY_FULL' });
        const refused = options.refuse?.(mail);
        if (refused) throw refused;
        sent.push(mail);
        return { response: `kept as mail #${sent.length}` };
      },
      async verify(onStep) {
        verified.push('verify');
        onStep?.('the memory is there');
      },
      async close() {},
    }),
    describeStart: (memory) => `memory ${memory.mailbox} (kept in the test)`,
    describeStartWarnings: (memory) => [{ fields: { mailbox: memory.mailbox }, message: `mails in ${memory.mailbox} are lost at exit` }],
    describeVerified: (memory) => `The memory transport holds the mails in ${memory.mailbox}; no mail was sent.`,
    describeConfig: (memory) => ({ smtp: 'none: mails are kept in memory', memory }),
    settingsInForce: () => ['MEMORY_MAILBOX', 'MEMORY_LIMIT'],
    concurrency: () => 1,
    secrets: () => [],
    failures,
  };
  return { transport, sent, verified };
}

/** A transport added through its descriptor alone (one file, and one line in the list): the relay, serve's start line, verify-smtp and the failure catalogue all use it. */
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
      await waitUntil(async () => ((await relay.relay.store.readQueue()).counts.sent === 1 ? true : undefined), 15_000, 'the mail sent');
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
    expect(config.transport).toEqual({ name: 'memory', settings: { mailbox: 'inbox', limit: 100 } });
    expect(describeBoot(config, transports)).toContain('mail via memory inbox (kept in the test)');
    expect(listBootWarnings(config, transports)).toContainEqual({
      fields: { mailbox: 'inbox' },
      message: 'mails in inbox are lost at exit',
    });
    // Without its setting, the same relay writes .eml files.
    const without = load({});
    expect(describeBoot(without, transports)).toContain(`mail via .eml files in ${without.mail.outboxDir}`);
  });

  it('is checked by verify-smtp, with its own words', async () => {
    const memory = createMemoryTransport();
    const { code, stdout: out } = await runCliCaptured(
      ['verify-smtp'],
      { DATA_DIR: makeTempDir(), MAIL_TO: 'oncall@example.com', MEMORY_MAILBOX: 'inbox' },
      {
        transports: [memory.transport, ...TRANSPORTS],
      },
    );
    expect(code).toBe(0);
    expect(memory.verified).toEqual(['verify']);
    expect(out).toContain('ok  the memory is there');
    expect(out).toContain('The memory transport holds the mails in inbox; no mail was sent.');
  });

  it('is listed by check-config with its own settings, and theirs only when it is in force', async () => {
    const memory = createMemoryTransport();
    const checkConfig = (args: string[], env: Record<string, string> = { MEMORY_MAILBOX: 'inbox' }) =>
      runCliCaptured(
        ['check-config', ...args],
        { DATA_DIR: makeTempDir(), MAIL_TO: 'oncall@example.com', ...env },
        {
          transports: [memory.transport, ...TRANSPORTS],
        },
      );
    const { code, stdout: out } = await checkConfig([]);
    expect(code).toBe(0);
    expect(out).toContain('  MEMORY_MAILBOX=inbox');
    expect(out).toContain('  MEMORY_LIMIT=100');
    // SMTP's defaults mean nothing while mails stay in memory.
    expect(out).not.toContain('SMTP_POOL_SIZE=');
    expect(out).toContain('The configuration is valid.');
    // Without its setting the relay uses SMTP: its default is not in force, SMTP's are.
    const without = (await checkConfig([], { SMTP_URL: 'smtp://mail.example.com:587' })).stdout;
    expect(without).not.toContain('MEMORY_LIMIT=');
    expect(without).toContain('  SMTP_POOL_SIZE=5');

    const json = (await checkConfig(['--json'])).stdout;
    const shown = JSON.parse(json.slice(0, json.lastIndexOf('}') + 1)) as Record<string, unknown> & { mail: Record<string, unknown> };
    expect(shown).toMatchObject({ smtp: 'none: mails are kept in memory', memory: { mailbox: 'inbox', limit: 100 } });
    expect(shown.mail.outboxDir).toEqual(expect.any(String));
  });

  it('a delivery it failed is described on the dashboard with its own words, and counted under its own code', async () => {
    const memory = createMemoryTransport({ full: true });
    const adminToken = 'descriptor-admin-token-0123456789';
    const relay = await startTestRelay(
      { MAIL_TO: 'oncall@example.com', WEBHOOK_SECRET: SECRET, MEMORY_MAILBOX: 'inbox', ADMIN_TOKEN: adminToken },
      { transports: [memory.transport, ...TRANSPORTS] },
    );
    try {
      const body = buildBody({ data: buildReportData({ id: 6 }) });
      expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
      await waitUntil(
        async () => ((await relay.relay.store.readQueue()).counts.dead === 1 ? true : undefined),
        15_000,
        'the delivery dead',
      );
      const cookie = `${SESSION_COOKIE}=${createSessionKeys(adminToken).issue(Date.now()).cookie}`;
      const page = await (await fetch(`${relay.url}/ui`, { headers: { cookie } })).text();
      const words = textOf(/<span class="error-words">([\s\S]*?)<\/span>/.exec(page)?.[1] ?? '');
      expect(words).toBe('The in-memory mailbox is full. It is not tried again.');
      expect(textOf(page)).toContain('MEMORY_FULL: route default: inbox holds no more');
      const metrics = await scrape(relay.url);
      expect(sampleValue(metrics, 'compliance_relay_mail_failures_total', { reason: 'MEMORY_FULL', then: 'dead' })).toBe(1);
    } finally {
      await relay.stop();
    }
  });

  it('a route it failed for good in an earlier attempt kills the delivery later under its own code', async () => {
    // Route `full` answers MEMORY_FULL (permanent) on the first attempt; route `flaky` fails once for a reason
    // the relay does not know (retried), then is sent: the delivery dies for `full`'s earlier, stored failure.
    let flakyAnswers = 0;
    const memory = createMemoryTransport({
      refuse: (mail) => {
        if (mail.envelope.to.includes('full@example.com')) return Object.assign(new Error('inbox holds no more'), { code: 'MEMORY_FULL' });
        if (mail.envelope.to.includes('flaky@example.com') && (flakyAnswers += 1) === 1) return new Error('the mailbox blinked');
        return undefined;
      },
    });
    const routesFile = path.join(makeTempDir(), 'routes.yaml');
    fs.writeFileSync(
      routesFile,
      'routes:\n  - name: full\n    to: full@example.com\n    continue: true\n  - name: flaky\n    to: flaky@example.com\n',
    );
    const relay = await startTestRelay(
      { WEBHOOK_SECRET: SECRET, MEMORY_MAILBOX: 'inbox', ROUTES_FILE: routesFile },
      { transports: [memory.transport, ...TRANSPORTS], tune: quickRetries(50, 200) },
    );
    try {
      const body = buildBody({ data: buildReportData({ id: 7 }) });
      expect((await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) })).status).toBe(202);
      const dead = await waitUntil(() => relay.workerOutcomes.find((o) => o.settled?.state === 'dead'), 15_000, 'the delivery dead');

      expect(flakyAnswers).toBe(2);
      expect(memory.sent.map((m) => m.envelope.to)).toEqual([['flaky@example.com']]);
      expect(dead).toMatchObject({ failure: { code: 'MEMORY_FULL' }, delivery: { attempts: 2 } });
      const stored = await relay.relay.store.getDelivery(dead.delivery.id);
      expect(stored).toMatchObject({ state: 'dead', lastErrorCode: 'MEMORY_FULL', lastError: 'route full: inbox holds no more' });
      const metrics = await scrape(relay.url);
      expect(sampleValue(metrics, 'compliance_relay_mail_failures_total', { reason: 'MEMORY_FULL', then: 'dead' })).toBe(1);
    } finally {
      await relay.stop();
    }
  });

  it('its own failure code tells the transport health whether the mail server was reached', () => {
    const memory = createMemoryTransport({ full: true });
    const notifier: Notifier = {
      send: () => Promise.reject(new Error('unused')),
      verify: async () => {},
      close: async () => {},
    };
    const failures = buildFailureCatalogue([memory.transport, ...TRANSPORTS]);
    const health = createTransportHealth({
      notifier,
      clock: { now: () => 0 },
      logger: createSilentLogger(),
      intervalMs: 60_000,
      failures,
    });
    // Its error classified through the normal path, with the relay's catalogue: the facts are its descriptor's.
    const failure = classifyFailure(Object.assign(new Error('inbox holds no more'), { code: 'MEMORY_FULL' }), failures);
    expect(failure).toMatchObject({ kind: 'permanent', code: 'MEMORY_FULL', serverReachable: true });
    health.record({ settled: { state: 'dead', error: failure.message, code: failure.code }, failure });
    // The mailbox answered about this one mail: the transport is still able to send.
    expect(health.status()).toEqual({ ok: true });
  });
});
