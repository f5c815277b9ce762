import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SQLITE_FILE_NAME } from '../../src/store';
import { MAIN_JS } from '../helpers/child-relay';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'storage-webhook-secret';

/**
 * Guarantee 3: when the outbox cannot commit, the webhook answers 503 STORAGE_UNAVAILABLE with
 * Retry-After (never a 2xx for something not stored), and takes deliveries again by itself, without
 * a restart, once the storage is back. Disk full and read-only are real file systems: a small
 * tmpfs mounted for the test (the suite runs as root, as CI does).
 */
describe('storage failure: 503 while the outbox cannot commit, recovery without restart', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay | undefined;
  const mounts: string[] = [];
  const dirs: string[] = [];

  beforeEach(async () => {
    smtp = await startSmtpPeer();
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await smtp.close();
    for (const m of mounts.splice(0)) execFileSync('umount', [m]);
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  const env = () => ({ SMTP_URL: smtp.url, MAIL_TO: 'oncall@example.com', WEBHOOK_SECRET: SECRET });
  const post = (body: Buffer) => postWebhook(relay!.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
  const report = (id: number, padding = 0) =>
    buildBody({ data: buildReportData({ id, custom_fields: padding ? { notes: 'x'.repeat(padding) } : {} }) });
  const tmpfs = (sizeKb: number) => {
    const dir = makeTempDir('relay-tmpfs-');
    dirs.push(dir);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeKb}k`, 'tmpfs', dir]);
    mounts.push(dir);
    return dir;
  };
  const expect503 = (res: Awaited<ReturnType<typeof postWebhook>>) => {
    expect(res.status).toBe(503);
    expect(res.json).toEqual({ error: { code: 'STORAGE_UNAVAILABLE', message: expect.any(String), retryable: true } });
    expect(res.headers.get('retry-after')).toBe('30');
  };
  const storedReportIds = async () =>
    (await relay!.relay.store.listDeliveries({ limit: 1000 })).map((d) => d.reportId).sort((a, b) => a - b);

  it('a locked database (another writer holding it) answers 503, then 202 once the lock is released', async () => {
    const dir = makeTempDir();
    dirs.push(dir);
    relay = await startTestRelay(env(), { dataDir: dir });
    const other = new Database(path.join(dir, SQLITE_FILE_NAME));
    other.exec('BEGIN EXCLUSIVE');
    expect503(await post(report(1)));
    other.exec('ROLLBACK');
    other.close();
    expect((await post(report(1))).status).toBe(202);
    await smtp.waitFor(1);
    expect(await storedReportIds()).toEqual([1]);
  });

  it('a full disk answers 503 for what does not fit, then 202 once space is freed', async () => {
    // Room enough, once the filler is gone, for what a 300 kB report costs: its body, the WAL's copy of it and
    // the sent message the dashboard keeps (at 2 MB that alone filled the disk again, and the outcome waited).
    const dir = tmpfs(8192);
    relay = await startTestRelay(env(), { dataDir: dir });
    expect((await post(report(1))).status).toBe(202);
    // Report 1 mailed and recorded first: this test is about what the webhook answers (a report whose mail
    // is being composed while the disk fills waits for its lease, as store-away-while-composing shows).
    await smtp.waitFor(1);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 1 ? true : undefined), 10_000, 'report 1 sent');
    // Fill the file system to the last block.
    const filler = path.join(dir, 'filler');
    const fd = fs.openSync(filler, 'w');
    try {
      for (;;) fs.writeSync(fd, Buffer.alloc(64 * 1024));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    }
    for (;;) {
      try {
        fs.writeSync(fd, Buffer.alloc(512));
      } catch {
        break;
      }
    }
    fs.closeSync(fd);
    // A 300 kB report needs new pages in the write-ahead log: there is no room for them.
    expect503(await post(report(2, 300_000)));
    expect503(await post(report(2, 300_000)));
    expect(await storedReportIds()).toEqual([1]);
    fs.rmSync(filler);
    expect((await post(report(2, 300_000))).status).toBe(202);
    await smtp.waitFor(2, 30_000);
    expect(await storedReportIds()).toEqual([1, 2]);
  });

  it('a read-only data dir answers 503 from the start, then 202 once it is writable, keeping what was stored', async () => {
    const dir = tmpfs(4096);
    relay = await startTestRelay(env(), { dataDir: dir });
    expect((await post(report(1))).status).toBe(202);
    await smtp.waitFor(1);
    await relay.stop();
    // The volume comes back read-only (a remount after disk errors, a wrong compose file): the relay starts anyway.
    execFileSync('mount', ['-o', 'remount,ro', dir]);
    relay = await startTestRelay(env(), { dataDir: dir });
    expect503(await post(report(2)));
    expect503(await post(report(2)));
    execFileSync('mount', ['-o', 'remount,rw', dir]);
    expect((await post(report(2))).status).toBe(202);
    await smtp.waitFor(2);
    expect(await storedReportIds()).toEqual([1, 2]);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 2 ? true : undefined), 10_000, 'both sent');
    expect(relay.logs.some((l) => l.includes('"code":"SQLITE_CANTOPEN"') || l.includes('SQLITE_READONLY'))).toBe(true);
  });

  it('serve on a read-only data dir exits 69 saying why, for its supervisor to start it again once the volume is writable', () => {
    const dir = tmpfs(4096);
    execFileSync('mount', ['-o', 'remount,ro', dir]);
    const serve = () =>
      spawnSync(process.execPath, [MAIN_JS, 'serve'], {
        env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', PORT: '0', DATA_DIR: dir, ...env() },
        encoding: 'utf8',
        timeout: 20_000,
      });
    const refused = serve();
    expect(refused.status).toBe(69);
    expect(refused.stdout).toMatch(new RegExp(`DATA_DIR ${dir} cannot be written now \\(SQLITE_(READONLY|CANTOPEN)`));
    expect(refused.stdout).toContain('Is its volume read-only or full?');
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
