import { spawn } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli';
import { createNetboxClient, NetboxError } from '../../src/netbox';
import { SqliteStore } from '../../src/store';
import { captureIo } from '../helpers/cli-io';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, waitUntil } from '../helpers/relay-harness';
import { startSmtpPeer } from '../helpers/smtp-peer';
import { recordPlan } from '../helpers/store-writes';
import { createTestCertificates } from '../helpers/test-certificates';

jest.setTimeout(120_000);

const MAIN = path.resolve(__dirname, '../../dist/src/main.js');
const { version: VERSION } = JSON.parse(fs.readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { version: string };
const TOKEN = '0123456789abcdef0123456789abcdef01234567';

/** Issue 17, item 9: logs and messages say what is true, and fit a terminal. */
describe('what the relay says to an operator', () => {
  let dir: string;
  beforeEach(() => {
    dir = makeTempDir('operator-messages-');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** Runs `serve` until it listens, then stops it; resolves with everything it wrote to stdout. */
  async function runServe(env: Record<string, string>, viaTerminal = false): Promise<string> {
    const base = { PATH: process.env.PATH!, DATA_DIR: path.join(dir, 'data'), PORT: '0', HOST: '127.0.0.1' };
    const fullEnv = { ...base, DOTENV_CONFIG_PATH: os.devNull, ...env };
    // script(1) gives the relay a pseudo-terminal as stdout: what an operator running it by hand sees.
    const child = viaTerminal
      ? spawn('script', ['-qfec', `"${process.execPath}" "${MAIN}" serve`, '/dev/null'], {
          env: fullEnv,
          stdio: ['ignore', 'pipe', 'pipe'],
          detached: true,
        })
      : spawn(process.execPath, [MAIN, 'serve'], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    try {
      await waitUntil(() => /listening on/.test(out), 60_000, 'the listening line');
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
    }
    // eslint-disable-next-line no-control-regex
    return out.replace(/\x1b\[[0-9;]*m/g, '');
  }

  it('logs pretty lines on a terminal and JSON otherwise; the boot line is short, the config only at debug', async () => {
    const piped = (await runServe({ SMTP_URL: 'smtp://user:very-secret-pass@127.0.0.1:2525', MAIL_TO: 'netops@example.com' }))
      .trim()
      .split('\n');
    const lines = piped.map((l) => JSON.parse(l) as Record<string, unknown>);
    const boot = lines.find((l) => String(l.msg).startsWith(`compliance-relay ${VERSION} starting`))!;
    expect(boot.msg).toBe(
      `compliance-relay ${VERSION} starting: SQLite in ${path.join(dir, 'data')}, mail via SMTP 127.0.0.1:2525, 1 route, no NetBox, dashboard off`,
    );
    expect(boot).not.toHaveProperty('config');
    expect(piped.find((l) => l.includes(`"msg":"compliance-relay ${VERSION} starting`))!.length).toBeLessThan(400);
    expect(lines.some((l) => l.msg === 'configuration in force')).toBe(false);

    const debug = (
      await runServe({ LOG_LEVEL: 'debug', SMTP_URL: 'smtp://user:very-secret-pass@127.0.0.1:2525', MAIL_TO: 'netops@example.com' })
    )
      .trim()
      .split('\n');
    const config = debug
      .map((l) => JSON.parse(l) as { msg: string; config?: { store: unknown } })
      .find((l) => l.msg === 'configuration in force')!;
    expect(config.config!.store).toEqual({ kind: 'sqlite', dataDir: path.join(dir, 'data'), sqliteSynchronous: 'FULL' });
    expect(debug.join('\n')).not.toContain('very-secret-pass');

    const terminal = await runServe({}, true);
    const listening = terminal.split(/\r?\n/).find((l) => l.includes('listening on'))!;
    expect(listening.trimStart().startsWith('{')).toBe(false);
    expect(listening).toMatch(/INFO.*listening on 127\.0\.0\.1:\d+/);
  });

  it('fits the deliveries table in 100 columns, one line per delivery: errors cut with "…", control characters shown; --json has everything', async () => {
    const store = SqliteStore.open({ dataDir: path.join(dir, 'data') });
    const long = `550 5.7.1 ${'policy rejection because the sender domain has no valid record '.repeat(6)}\u001b[2Jend-of-error`;
    for (const id of [1, 2]) {
      const body = buildBody({ data: buildReportData({ id }) });
      const { id: deliveryId } = await store.insertDelivery({
        dedupKey: `${id}@x`,
        reportId: id,
        reportCreated: '2026-03-05T06:00:00Z',
        completedAt: '2026-03-05T06:00:05Z',
        sender: '2001:db8:1234:5678:9abc:def0:1234:5678',
        body,
        receivedAt: Date.now(),
      });
      await store.claimDue({ now: Date.now() + 1, limit: 1, owner: 'test', leaseMs: 60_000 });
      await recordPlan(
        store,
        deliveryId,
        [{ route: 'a-route-with-a-rather-long-name', position: 0, outcome: 'send', reason: 'matched', reminder: false }],
        Date.now(),
        { state: 'dead', error: long, code: 'SMTP_5XX' },
      );
    }
    await store.close();
    const env = { DATA_DIR: path.join(dir, 'data') };
    const io = captureIo(env, dir);
    expect(await runCli(['node', 'compliance-relay', 'deliveries'], io)).toBe(0);
    const table = io.out().trimEnd().split('\n');
    expect(table[0]).toMatch(/^ID\s+REPORT\s+NETBOX\s+STATE\s+ATTEMPTS\s+NEXT ATTEMPT\s+ROUTES\s+LAST ERROR$/);
    for (const line of table) expect([line.length, line]).toEqual([Math.min(line.length, 100), line]);
    expect(io.out()).toContain('…');
    expect(io.out()).toContain('2001:db8:1234:…');
    expect(io.out()).toContain('SMTP_5XX 550 5.7.1 policy rejection');
    expect(io.out()).not.toContain('\u001b');
    expect(io.out()).not.toContain('end-of-error');

    const json = captureIo(env, dir);
    expect(await runCli(['node', 'compliance-relay', 'deliveries', '--json'], json)).toBe(0);
    const listed = JSON.parse(json.out()) as { deliveries: { lastError: string; source: string }[] };
    expect(listed.deliveries[0].lastError).toBe(long);
    expect(listed.deliveries[0].source).toBe('2001:db8:1234:5678:9abc:def0:1234:5678');
  });

  it('says "must be 0 or more" for above: -1, and check-config shows only the settings in force', async () => {
    fs.writeFileSync(
      path.join(dir, 'routes.yaml'),
      'routes:\n  - name: on-call\n    to: a@example.com\n    match: { failed: { severity: HIGH, above: -1 } }\n',
    );
    let io = captureIo({ DATA_DIR: path.join(dir, 'data'), ROUTES_FILE: path.join(dir, 'routes.yaml') }, dir);
    expect(await runCli(['node', 'compliance-relay', 'check-config'], io)).toBe(78);
    expect(io.err()).toContain('match.failed.above: must be 0 or more');
    expect(io.err()).not.toContain('whole number');

    fs.writeFileSync(path.join(dir, 'routes.yaml'), 'routes:\n  - name: on-call\n    to: a@example.com\n');
    io = captureIo(
      {
        DATABASE_URL: 'postgres://relay:db-pass@db.example.com/relay',
        SMTP_URL: 'smtp://mail.example.com',
        ROUTES_FILE: path.join(dir, 'routes.yaml'),
        MAIL_TO: 'x@example.com',
      },
      dir,
    );
    expect(await runCli(['node', 'compliance-relay', 'check-config', '--json'], io)).toBe(0);
    const shown = JSON.parse(io.out().slice(0, io.out().lastIndexOf('}') + 1)) as Record<string, Record<string, unknown>>;
    expect(shown.store).toEqual({
      kind: 'postgres',
      databaseUrl: 'postgres://relay:REDACTED@db.example.com/relay',
    });
    expect(shown.mail).not.toHaveProperty('outboxDir'); // SMTP is configured: no .eml directory
    expect(shown.mail).not.toHaveProperty('to'); // ROUTES_FILE names the recipients
    expect(shown.netbox).toBe('off: NETBOX_URL is not set (mail links are relative, no failing tests)');
    expect(shown.admin).toBe('off: ADMIN_TOKEN is not set (no dashboard, no admin API)');
    expect(shown.watchdog).toBe('off: EXPECT_REPORT_EVERY is not set');
  });

  it('says a TLS name mismatch is one, not that NetBox did not answer', async () => {
    const certs = createTestCertificates(dir);
    // The certificate names 127.0.0.1 and localhost; the relay is pointed at 127.0.0.2 (same machine).
    const server = https.createServer({ key: certs.key, cert: certs.cert }, (_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end('{"netbox-version": "4.6.8", "plugins": {"validity": "3.5.2"}}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', () => resolve()));
    const url = `https://127.0.0.2:${(server.address() as AddressInfo).port}`;
    try {
      const client = createNetboxClient({
        url,
        token: TOKEN,
        ca: fs.readFileSync(certs.caFile),
        timeoutMs: 5_000,
      });
      const error = (await client.getJson('/api/status/', { deadline: Date.now() + 5_000 }).catch((e: unknown) => e)) as NetboxError;
      client.close();
      expect(error).toBeInstanceOf(NetboxError);
      expect(error.message).toContain("NetBox's TLS certificate is not valid for the host in NETBOX_URL (name mismatch");
      expect(error.message).not.toContain('NETBOX_CA_FILE');

      const io = captureIo({ NETBOX_URL: url, NETBOX_TOKEN: TOKEN, NETBOX_CA_FILE: certs.caFile, DATA_DIR: path.join(dir, 'data') }, dir);
      const code = await runCli(
        [
          'node',
          'compliance-relay',
          'netbox-setup',
          '--payload-url',
          'https://relay.example.com/webhook',
          '--secret-file',
          path.join(dir, 's'),
        ],
        io,
      );
      expect(code).not.toBe(0);
      expect(io.err()).toContain("GET /api/status/: NetBox's TLS certificate is not valid for the host in NETBOX_URL (name mismatch");
      expect(io.err()).not.toContain('did not answer');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("names every failed route in a dead delivery's error", async () => {
    fs.writeFileSync(
      path.join(dir, 'routes.yaml'),
      'routes:\n  - name: on-call\n    to: oncall@example.com\n    continue: true\n  - name: auditors\n    to: auditors@example.com\n',
    );
    const smtp = await startSmtpPeer({ behaviour: { type: 'reject', code: 550, message: 'mailbox unavailable' } });
    const relay = await startTestRelay({ SMTP_URL: smtp.url, ROUTES_FILE: path.join(dir, 'routes.yaml') });
    try {
      const res = await postWebhook(relay.webhookUrl, buildBody({ data: buildReportData({ id: 9 }) }));
      expect(res.status).toBe(202);
      const dead = await waitUntil(
        async () => {
          const d = await relay.relay.store.getDelivery(res.json.id as number);
          return d?.state === 'dead' ? d : undefined;
        },
        10_000,
        'the delivery to die',
      );
      expect(dead.lastErrorCode).toBe('SMTP_5XX');
      expect(dead.lastError).toMatch(
        /^2 routes failed: route on-call: .*550.*mailbox unavailable.*; route auditors: .*550.*mailbox unavailable/,
      );
    } finally {
      await relay.stop();
      await smtp.close();
    }
  });
});
