import fs from 'node:fs';
import type Database from 'better-sqlite3';
import type { Config } from '../../src/config';
import { SqliteStore } from '../../src/store';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres';
import { sampleValue, scrape } from '../helpers/prometheus';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'unrecorded-outcomes-secret';
const ADMIN_TOKEN = 'admin-token-for-unrecorded-outcomes';
const LEASE_MS = 1_500;
/** Short leases, so that a claim whose outcome were forgotten would be taken and mailed again within the test. */
const shortLease = (config: Config): Config => ({ ...config, worker: { ...config.worker, leaseMs: LEASE_MS } });

jest.setTimeout(180_000);

/**
 * A mail that went out while the store could not record it is never mailed again because of that.
 * The worker holds the batch's outcome in memory (its leases kept alive), claims nothing new, and
 * records it once the store takes writes again; only a stop with the batch still unrecorded may repeat
 * those mails, and each is named in the log with its Message-ID.
 */
describe('outcomes the store cannot record yet', () => {
  let smtp: SmtpPeer;
  let relay: TestRelay | undefined;
  const dirs: string[] = [];

  beforeEach(async () => {
    smtp = await startSmtpPeer();
  });
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
    await smtp.close();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string> = {}) => ({
    SMTP_URL: smtp.url,
    MAIL_TO: 'netops@example.com',
    WEBHOOK_SECRET: SECRET,
    ADMIN_TOKEN,
    SHUTDOWN_TIMEOUT_MS: '1500',
    ...extra,
  });
  const body = (id: number, padding = 0) =>
    buildBody({ version: '4.6', data: buildReportData({ id, custom_fields: padding ? { notes: 'x'.repeat(padding) } : {} }) });
  const post = (id: number, padding = 0) => {
    const bytes = body(id, padding);
    return postWebhook(relay!.webhookUrl, bytes, { 'X-Hook-Signature': netboxSignature(bytes, SECRET) });
  };
  const unrecorded = async () => sampleValue(await scrape(relay!.url), 'compliance_relay_unrecorded_outcomes');
  const messageIds = () => smtp.received.map((m) => String(m.parsed.messageId));
  const reportIdsMailed = () =>
    smtp.received.map((m) => Number(/\u2014 report (\d+)/.exec(String(m.parsed.subject))?.[1])).sort((a, b) => a - b);
  const duplicates = (ids: string[]) => [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))].sort();
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  /**
   * A full disk on the relay's own SQLite file: `max_page_count` at the file's current size makes
   * SQLite refuse any write that needs a new page with SQLITE_FULL, exactly as a full file system
   * does. The relay's records after a send are small updates that may still fit in a page's free
   * space; the trigger makes each route mail's `sent` record need fresh pages (as every write does
   * on a disk with no free block), so the cap refuses exactly them. Raising the cap is space coming back.
   */
  function prepareDisk(): { fill(): void; free(): void; db: Database.Database } {
    const db = (relay!.relay.store as SqliteStore).database;
    db.exec(`CREATE TABLE test_filler (b BLOB);
      CREATE TRIGGER test_sent_needs_space AFTER UPDATE OF state ON route_mails WHEN NEW.state = 'sent'
      BEGIN INSERT INTO test_filler (b) VALUES (zeroblob(65536)); END;`);
    return {
      db,
      fill: () => db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`),
      free: () => db.pragma('max_page_count = 1073741823'),
    };
  }

  /** Every report posted gets its answer before any send completes: the first sends wait for this. */
  function gate(): { release(): void; after: Promise<void> } {
    let release!: () => void;
    const after = new Promise<void>((resolve) => (release = resolve));
    return { release, after };
  }

  async function readDashboard(): Promise<string> {
    const login = await fetch(`${relay!.url}/ui/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `token=${ADMIN_TOKEN}`,
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    return (await fetch(`${relay!.url}/ui`, { headers: { Cookie: cookie } })).text();
  }

  test('SQLite, disk full while mailing: every acknowledged report is mailed once, before and after space returns, and across a restart', async () => {
    const dataDir = makeTempDir('relay-unrecorded-');
    dirs.push(dataDir);
    relay = await startTestRelay(env({ SMTP_POOL_SIZE: '2' }), { dataDir, tune: shortLease });
    const disk = prepareDisk();
    const posted = gate();
    // The disk fills while the third mail is on the wire: the server accepts it, the relay cannot record it.
    smtp.setBehaviour((attempt) => {
      if (attempt === 3) disk.fill();
      return { type: 'accept', after: posted.after };
    });

    for (const id of range(1, 10)) expect((await post(id)).status).toBe(202);
    posted.release();

    await smtp.waitFor(3);
    // Deliveries keep arriving: none that cannot be stored is acknowledged.
    const accepted = range(1, 10);
    for (const id of range(11, 13)) {
      const res = await post(id, 300_000);
      expect(res.status).toBe(503);
      expect(res.json.error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: true });
    }
    // Several leases long: a claim whose sent mail were forgotten would be taken again and mailed twice by now.
    await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_MS));
    expect(duplicates(messageIds())).toEqual([]);

    // The operator sees it: the gauge, /readyz (no new delivery could be kept) and the dashboard's banner.
    expect(await unrecorded()).toBeGreaterThan(0);
    // The details behind a 503 are for the operator: asked with the admin token.
    const ready = await fetch(`${relay.url}/readyz`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { checks: { store: unknown } }).checks.store).toMatchObject({
      ok: false,
      code: 'SQLITE_FULL',
      unrecordedOutcomes: expect.any(Number),
    });
    expect(await readDashboard()).toMatch(/class="banner" role="alert" data-unrecorded="\d+"/);

    disk.free();
    await waitUntil(
      async () => ((await relay!.relay.store.readQueue()).counts.sent === accepted.length ? true : undefined),
      30_000,
      'every accepted report recorded as sent',
    );
    await waitUntil(async () => ((await unrecorded()) === 0 ? true : undefined), 10_000, 'the gauge to fall to 0');
    expect((await fetch(`${relay.url}/readyz`)).status).toBe(200);
    expect(await readDashboard()).not.toContain('class="banner"');
    expect(reportIdsMailed()).toEqual(accepted);
    expect(duplicates(messageIds())).toEqual([]);
    const routeStates = (await relay.relay.store.listRouteMails(range(1, 10))).map((r) => r.state);
    expect(routeStates).toEqual(accepted.map(() => 'sent'));
    // The trend's history of every mailed report is kept too (what the next report compares with).
    expect((disk.db.prepare('SELECT COUNT(*) AS n FROM reports').get() as { n: number }).n).toBe(accepted.length);
    // Said once a minute at most, not once per delivery.
    expect(relay.logs.filter((l) => l.includes('cannot be recorded: the store refuses writes')).length).toBe(1);

    // A clean stop and a start: nothing is mailed again. Report 14 is claimed after any leftover (oldest first).
    await relay.stop();
    relay = await startTestRelay(env({ SMTP_POOL_SIZE: '2' }), { dataDir, tune: shortLease });
    expect((await post(14)).status).toBe(202);
    await waitUntil(
      async () => ((await relay!.relay.store.readQueue()).counts.sent === accepted.length + 1 ? true : undefined),
      20_000,
      'report 14 sent',
    );
    expect(reportIdsMailed()).toEqual([...accepted, 14]);
    expect(duplicates(messageIds())).toEqual([]);
  });

  test('SQLite, while a batch cannot be recorded the worker claims and sends nothing more, then resumes in order', async () => {
    const dataDir = makeTempDir('relay-unrecorded-');
    dirs.push(dataDir);
    relay = await startTestRelay(env({ SMTP_POOL_SIZE: '1' }), { dataDir, tune: shortLease });
    const disk = prepareDisk();
    const posted = gate();
    smtp.setBehaviour((attempt) => {
      if (attempt === 1) disk.fill();
      return { type: 'accept', after: posted.after };
    });
    for (const id of range(1, 6)) expect((await post(id)).status).toBe(202);
    posted.release();

    // The first batch went out and cannot be recorded: the worker holds it, and sends nothing else meanwhile.
    await waitUntil(async () => ((await unrecorded()) ?? 0) > 0 || undefined, 20_000, 'a batch held');
    const held = smtp.received.length;
    await new Promise((resolve) => setTimeout(resolve, 3 * LEASE_MS));
    expect(smtp.received.length).toBe(held);
    expect(await unrecorded()).toBe(held);

    disk.free();
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 6 ? true : undefined), 30_000, 'all six sent');
    expect(reportIdsMailed()).toEqual(range(1, 6));
    expect(smtp.received.map((m) => Number(/\u2014 report (\d+)/.exec(String(m.parsed.subject))?.[1]))).toEqual(range(1, 6));
    expect(duplicates(messageIds())).toEqual([]);
    expect(await unrecorded()).toBe(0);
  });

  test('SQLite, stopped while the disk is still full: each mail that may repeat is logged with its Message-ID, and only those repeat', async () => {
    const dataDir = makeTempDir('relay-unrecorded-');
    dirs.push(dataDir);
    relay = await startTestRelay(env({ SMTP_POOL_SIZE: '2' }), { dataDir, tune: shortLease });
    const disk = prepareDisk();
    const posted = gate();
    smtp.setBehaviour((attempt) => {
      if (attempt === 2) disk.fill();
      return { type: 'accept', after: posted.after };
    });
    for (const id of range(1, 5)) expect((await post(id)).status).toBe(202);
    posted.release();
    await waitUntil(async () => ((await unrecorded()) ?? 0) > 0 || undefined, 20_000, 'an outcome held');

    await relay.stop();
    const mailedBeforeStop = messageIds();
    const logged = relay.logs
      .map((l) => JSON.parse(l) as { msg: string; messageIds?: string[] })
      .filter((l) => l.msg.startsWith('shutdown: delivery') && l.msg.includes('may be mailed again'))
      .flatMap((l) => l.messageIds ?? []);
    expect(logged.length).toBeGreaterThan(0);
    expect(mailedBeforeStop).toEqual(expect.arrayContaining(logged));

    // Space is back at the next start (the cap was that process's own): what was logged is mailed again, nothing else.
    relay = await startTestRelay(env({ SMTP_POOL_SIZE: '2' }), { dataDir, tune: shortLease });
    expect((await post(6)).status).toBe(202);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 6 ? true : undefined), 30_000, 'all six sent');
    expect(new Set(reportIdsMailed())).toEqual(new Set(range(1, 6)));
    expect(duplicates(messageIds())).toEqual([...new Set(logged)].sort());
  });
});

describe('outcomes the store cannot record yet: PostgreSQL', () => {
  let db: PrivatePostgres;
  let smtp: SmtpPeer;
  let relay: TestRelay | undefined;

  beforeAll(async () => {
    db = await startPrivatePostgres();
    smtp = await startSmtpPeer();
  });
  afterAll(async () => {
    await relay?.stop();
    await smtp.close();
    db.destroy();
  });

  const env = () => ({
    DATABASE_URL: db.url,
    SMTP_URL: smtp.url,
    MAIL_TO: 'netops@example.com',
    WEBHOOK_SECRET: SECRET,
    SMTP_POOL_SIZE: '2',
    SHUTDOWN_TIMEOUT_MS: '1500',
  });
  const post = (id: number) => {
    const bytes = buildBody({ version: '4.6', data: buildReportData({ id }) });
    return postWebhook(relay!.webhookUrl, bytes, { 'X-Hook-Signature': netboxSignature(bytes, SECRET) });
  };
  const unrecorded = async () => sampleValue(await scrape(relay!.url), 'compliance_relay_unrecorded_outcomes');
  const messageIds = () => smtp.received.map((m) => String(m.parsed.messageId));
  const reportIdsMailed = () =>
    smtp.received.map((m) => Number(/\u2014 report (\d+)/.exec(String(m.parsed.subject))?.[1])).sort((a, b) => a - b);

  test('the database goes away after a send: the mail is recorded once it is back, never sent twice, not across a restart either', async () => {
    relay = await startTestRelay(env(), { tune: shortLease });
    let release!: () => void;
    const posted = new Promise<void>((resolve) => (release = resolve));
    // The database stops while the third mail is on the wire: the server accepts it, the relay cannot record it.
    smtp.setBehaviour((attempt) => {
      if (attempt === 3) db.stop();
      return { type: 'accept', after: posted };
    });
    for (let id = 1; id <= 8; id += 1) expect((await post(id)).status).toBe(202);
    release();

    await waitUntil(async () => ((await unrecorded()) ?? 0) > 0 || undefined, 30_000, 'the gauge of unrecorded outcomes to rise');
    const down = await post(9);
    expect(down.status).toBe(503);
    expect(down.json.error).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: true });
    expect((await fetch(`${relay.url}/readyz`)).status).toBe(503);
    // Longer than a lease: the claims of the mails sent meanwhile expire in the database while it is away.
    await new Promise((resolve) => setTimeout(resolve, 2 * LEASE_MS));
    db.start();

    await waitUntil(
      async () => ((await relay!.relay.store.readQueue().catch(() => undefined))?.counts.sent === 8 ? true : undefined),
      60_000,
      'all eight recorded as sent',
    );
    await waitUntil(async () => ((await unrecorded()) === 0 ? true : undefined), 10_000, 'the gauge to fall to 0');
    expect(reportIdsMailed()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(messageIds()).size).toBe(8);

    await relay.stop();
    relay = await startTestRelay(env(), { tune: shortLease });
    expect((await post(10)).status).toBe(202);
    await waitUntil(async () => ((await relay!.relay.store.readQueue()).counts.sent === 9 ? true : undefined), 30_000, 'report 10 sent');
    expect(reportIdsMailed()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 10]);
    expect(new Set(messageIds()).size).toBe(9);
  });
});
