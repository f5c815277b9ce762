import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MAIN_JS, startChildRelay, type ChildRelay } from '../helpers/child-relay';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const REPORTS = 20;
const SECRET = 'one-relay-webhook-secret';

/** `serve` run to its end: a relay that must not start. Killed after `timeoutMs` (it should exit at once). */
async function runServeToExit(
  env: Record<string, string>,
  cwd: string,
  timeoutMs = 20_000,
): Promise<{ code: number | null; output: string }> {
  const proc = spawn(process.execPath, [MAIN_JS, 'serve'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  proc.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
  proc.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => proc.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, output };
}

function messageIds(smtp: SmtpPeer): string[] {
  return smtp.received.map((m) => m.parsed.messageId ?? '');
}

describe('one relay per SQLite data directory', () => {
  let dir: string;
  let smtp: SmtpPeer;
  let first: ChildRelay | undefined;

  beforeEach(async () => {
    dir = makeTempDir('relay-one-dir-');
    // Each "250 OK" takes 150 ms and there is one connection: the first relay is mid-send for seconds.
    smtp = await startSmtpPeer({ behaviour: { type: 'accept', delayMs: 150 } });
  });
  afterEach(async () => {
    await first?.kill('SIGKILL');
    first = undefined;
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const envFor = (dataDir: string) => ({
    DATA_DIR: dataDir,
    SMTP_URL: smtp.url,
    SMTP_POOL_SIZE: '1',
    MAIL_TO: 'oncall@example.com',
    WEBHOOK_SECRET: SECRET,
  });

  async function startFirstWithReportsInFlight(dataDir: string): Promise<ChildRelay> {
    const relay = await startChildRelay(envFor(dataDir), { cwd: dir });
    for (let i = 0; i < REPORTS; i += 1) {
      const body = buildBody({
        data: buildReportData({ id: 5_000 + i, created: `2026-03-06T15:00:${String(i).padStart(2, '0')}.000000Z` }),
      });
      const res = await postWebhook(`${relay.url}/webhook`, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
      expect(res.status).toBe(202);
    }
    await smtp.waitFor(1, 20_000);
    return relay;
  }

  async function expectEachMailedOnce(): Promise<void> {
    await smtp.waitFor(REPORTS, 30_000);
    // Longer than a send: a second sender's duplicates would have arrived by now.
    await new Promise((r) => setTimeout(r, 600));
    expect(smtp.received).toHaveLength(REPORTS);
    expect(new Set(messageIds(smtp)).size).toBe(REPORTS);
  }

  it.each([
    ['another PORT', () => '0'],
    ['the same PORT', () => String(first!.port)],
  ])(
    'a second relay with %s exits at once naming the directory and the first relay’s PID, and no report is mailed twice',
    async (_label, portOf) => {
      const dataDir = path.join(dir, 'data');
      first = await startFirstWithReportsInFlight(dataDir);
      const sentBefore = smtp.received.length;
      expect(sentBefore).toBeLessThan(REPORTS);

      const second = await runServeToExit({ ...envFor(dataDir), PORT: portOf() }, dir);

      expect(second.code).not.toBe(0);
      const lines = second.output.trim().split('\n');
      const fatal = lines.find((l) => l.includes('"level":60'));
      expect(fatal).toContain(dataDir);
      expect(fatal).toContain(`PID ${first.proc.pid}`);
      expect(fatal).toContain('DATABASE_URL');
      // It changed nothing: no migration, no lease released, no worker.
      expect(second.output).not.toMatch(/migrated|resuming deliveries|listening on/);
      await expectEachMailedOnce();
    },
  );

  it('a relay killed with SIGKILL leaves the directory free for the next one (its migrations logged as one line)', async () => {
    const dataDir = path.join(dir, 'data');
    first = await startChildRelay(envFor(dataDir), { cwd: dir });
    // A new data directory's migrations are one info line, not one line per migration.
    const migrated = first.output.filter((line) => line.includes('migrat'));
    expect(migrated).toHaveLength(1);
    expect(migrated[0]).toMatch(/"msg":"store schema migrated to version \d+ \(\d+ applied\)"/);
    await first.kill('SIGKILL');
    first = await startChildRelay(envFor(dataDir), { cwd: dir });
    const health = await fetch(`${first.url}/healthz`);
    expect(health.status).toBe(200);
  });

  it('a relay whose PORT is taken says which PORT and HOST and what to change, and migrates nothing', async () => {
    first = await startChildRelay(envFor(path.join(dir, 'first')), { cwd: dir });
    const otherDir = path.join(dir, 'other');

    const second = await runServeToExit({ ...envFor(otherDir), PORT: String(first.port) }, dir);

    expect(second.code).not.toBe(0);
    expect(second.output).toContain(`PORT=${first.port} on HOST=127.0.0.1 is already in use`);
    expect(second.output).toContain('set PORT to a free port');
    expect(second.output).not.toContain('EADDRINUSE:');
    // Bound before the store: the loser's directory has no database, so nothing was migrated.
    expect(fs.existsSync(path.join(otherDir, 'relay.sqlite'))).toBe(false);
  });
});
