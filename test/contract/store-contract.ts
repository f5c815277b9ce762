/**
 * The one contract every Store implementation keeps (SQLite and PostgreSQL): each store's test file
 * calls {@link describeStoreContract} with a way to open fresh instances. Behaviour that must be the
 * same for one relay or three lives here, so a method added to the Store interface gets its tests
 * here and runs against both engines.
 */
import {
  REPORT_FAILING_SETS_KEPT,
  StorageUnavailableError,
  type DeliveryRecord,
  type NewDelivery,
  type SettledBatch,
  type Store,
} from '../../src/store';
import type { ReportSnapshot } from '../../src/trend';
import { buildDedupKey, parseDelivery } from '../../src/webhook';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { markDead, markRetry, markRouteMail, markSent, recordPlan, saveReport, saveSentCopy } from '../helpers/store-writes';

/** A fresh, empty backing (a temp dir, a schema) from which several store instances can be opened. */
export interface StoreBacking {
  /** Opens another instance on the same data: a second connection, or a second replica. */
  open(): Promise<Store>;
  /** Removes the backing (after every opened instance is closed). */
  cleanup(): Promise<void>;
  /**
   * Before any instance is opened: builds the schema as migrations 1 to `version` left it (an
   * existing database of an older relay), with `rows` stored as that version stored them.
   */
  seedSchema(version: number, rows: readonly NewDelivery[], legacy?: LegacyRows): Promise<void>;
}

/** Rows of the tables an older relay kept besides deliveries (deliveries are numbered 1, 2, … in seed order). */
export interface LegacyRows {
  /** A `route_mails` row as migration 5 created it, sent or pending. */
  routeMails?: { deliveryId: number; route: string; position: number; state: 'sent' | 'pending'; messageId: string | null }[];
  /** A `sent_messages` row as migration 4 created it: one per delivery, no route. */
  sentMessages?: { deliveryId: number; raw: Buffer; envelopeTo: string[]; sentAt: number; parts?: { text: string; html: string } }[];
}

/** A mail's MIME bytes as a relay sends them: a text and an HTML part (`body é` and `<p>é</p>`), then `after`. */
function buildMime(messageId: string, after: Buffer = Buffer.alloc(0)): Buffer {
  const part = (type: string, body: string) =>
    `--part\r\nContent-Type: ${type}; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${body}\r\n`;
  const head = `Message-ID: ${messageId}\r\nSubject: =?UTF-8?Q?B=C3=BCro?=\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary="part"\r\n\r\n`;
  return Buffer.concat([
    Buffer.from(`${head}${part('text/plain', 'body =C3=A9\r\n')}${part('text/html', '<p>=C3=A9</p>')}--part--\r\n`),
    after,
  ]);
}

/** The schema version in which release 0.1.0 left its database: an upgrade from it loses nothing. */
const RELEASE_0_1_0_SCHEMA = 17;

const T0 = 1_700_000_000_000;

/** Failing pairs as enrichment records them, with their NetBox ids (one without a device or test id). */
const PAIRS_WITH_IDS = [
  { device: 'sw1', test: 'ntp', severity: 'HIGH' as const, ids: { result: 1001, device: 7, test: 3 } },
  { device: 'sw2', test: 'snmp', severity: 'LOW' as const, ids: { result: 1002, device: null, test: null } },
];

/** A delivery as the webhook stores it; `n` makes the key and report id distinct. */
export function makeDelivery(n: number, overrides: Partial<NewDelivery> = {}): NewDelivery {
  return {
    dedupKey: `${n}@2026-11-21T10:00:00.000000+00:00`,
    reportId: n,
    reportCreated: '2026-11-21T10:00:00.000000+00:00',
    completedAt: '2026-11-21T10:00:05.000000+00:00',
    sender: '127.0.0.1',
    body: Buffer.from(`{"id":${n},"bytes":"\\u00e9 exact"}`),
    receivedAt: T0 + n,
    ...overrides,
  };
}

/** A report as the trend stores it. */
export function makeReport(
  id: number,
  createdMs: number,
  failing: ReportSnapshot['failing'],
  series = 'https://netbox.example.com|',
): ReportSnapshot {
  const created = new Date(createdMs).toISOString();
  return {
    dedupKey: `${id}@${created}`,
    series,
    reportId: id,
    created,
    createdMs,
    counts: {
      overall: { passed: id, count: 100 },
      HIGH: { passed: 1, count: 2 },
      MIDDLE: { passed: 3, count: 4 },
      LOW: { passed: 5, count: 6 },
    },
    failing,
  };
}

/** A report delivery as the webhook stores it: the signed bytes and the typed fields of its one parse. */
export function makeReportDelivery(body: Buffer, receivedAt = T0): NewDelivery {
  const report = parseDelivery(body);
  if (report.kind !== 'report') throw new Error('not a report');
  return { ...report, sender: '127.0.0.1', body, receivedAt };
}

/**
 * Reports that exercise every stored field: distinct counts (a column mix-up shows), custom fields
 * of every JSON kind, relative URLs under a NetBox base path; and one with none of the optional
 * fields (no display, custom_fields null, no user: NetBox 4.7 without a request).
 */
const TYPED_REPORT_BODIES = [
  buildBody({
    version: '4.6',
    username: 'jdoe',
    data: buildReportData({
      id: 41,
      device_count: 7,
      test_count: 11,
      total_passed: 13,
      total_count: 21,
      high_passed: 1,
      high_count: 3,
      middle_passed: 5,
      middle_count: 8,
      low_passed: 7,
      low_count: 10,
      created: '2026-03-06T15:11:20.123456Z',
      basePath: '/netbox',
      custom_fields: { team: 'core-network', owners: ['a', 'b\u00e9'], nested: { level: 2, ok: true, none: null }, 'cl\u00e9': 1.5 },
    }),
  }),
  buildBody({
    version: '4.7',
    data: withoutDisplay({ ...buildReportData({ id: 42, created: '2026-03-06T16:00:00Z' }), custom_fields: null }),
    extra: { request: null },
  }),
];

function withoutDisplay(data: Record<string, unknown>): Record<string, unknown> {
  const { display: _dropped, ...rest } = data;
  return rest;
}

/** What a store gives back for a report: what the webhook parsed, less what it does not keep (last_updated). */
function expectedStored(body: Buffer): Partial<DeliveryRecord> {
  const { last_updated: _notKept, ...report } = makeReportDelivery(body).report!;
  return storedReportOf({ ...makeReportDelivery(body), report } as DeliveryRecord);
}

/** A record's report, identity and source, as the webhook parsed them. */
function storedReportOf(record: DeliveryRecord): Partial<DeliveryRecord> {
  const { kind, report, counts, dedupKey, completedAt, source, triggeredBy } = record;
  return { kind, report, counts, dedupKey, completedAt, source, triggeredBy };
}

export function describeStoreContract(engine: string, createBacking: () => Promise<StoreBacking>): void {
  describe(`Store contract: ${engine}`, () => {
    let backing: StoreBacking;
    let opened: Store[];
    let store: Store;

    async function open(): Promise<Store> {
      const s = await backing.open();
      opened.push(s);
      return s;
    }

    beforeEach(async () => {
      backing = await createBacking();
      opened = [];
      store = await open();
    });

    afterEach(async () => {
      await Promise.allSettled(opened.map((s) => s.close()));
      await backing.cleanup();
    });

    test('an insert is stored once: the same key again is a duplicate with the same id', async () => {
      const first = await store.insertDelivery(makeDelivery(1));
      expect(first.duplicate).toBe(false);
      const again = await store.insertDelivery(makeDelivery(1, { receivedAt: T0 + 999 }));
      expect(again).toEqual({ id: first.id, duplicate: true });

      const record = await store.getDelivery(first.id);
      expect(record).toMatchObject({
        id: first.id,
        dedupKey: makeDelivery(1).dedupKey,
        reportId: 1,
        reportCreated: '2026-11-21T10:00:00.000000+00:00',
        completedAt: '2026-11-21T10:00:05.000000+00:00',
        sender: '127.0.0.1',
        state: 'queued',
        attempts: 0,
        receivedAt: T0 + 1,
        nextAttemptAt: T0 + 1,
        lastError: null,
        lastErrorCode: null,
        messageId: null,
        sentAt: null,
      });
      expect(await store.getDelivery(first.id + 1000)).toBeUndefined();
    });

    test('inserts arriving in the same turn each resolve, a key repeated in the batch counts once', async () => {
      const results = await Promise.all([1, 2, 3, 2, 4, 1].map((n) => store.insertDelivery(makeDelivery(n))));
      expect(results.map((r) => r.duplicate)).toEqual([false, false, false, true, false, true]);
      expect(results[3].id).toBe(results[1].id);
      expect(results[5].id).toBe(results[0].id);
      expect(new Set(results.map((r) => r.id)).size).toBe(4);
      expect((await store.readQueue()).counts.queued).toBe(4);
    });

    test('two instances receiving the same deliveries at the same moment store each once', async () => {
      const other = await open();
      const keys = Array.from({ length: 30 }, (_, i) => i + 1);
      const [a, b] = await Promise.all([
        Promise.all(keys.map((n) => store.insertDelivery(makeDelivery(n)))),
        Promise.all(keys.map((n) => other.insertDelivery(makeDelivery(n)))),
      ]);
      keys.forEach((_, i) => {
        expect(a[i].id).toBe(b[i].id);
        // Exactly one of the two accepted it as new (202), the other saw a duplicate (200).
        expect([a[i].duplicate, b[i].duplicate].sort()).toEqual([false, true]);
      });
      expect((await store.readQueue()).counts.queued).toBe(keys.length);
    });

    test('the stored body comes back byte for byte', async () => {
      const body = Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xc3, 0xa9, 0x00, 0xff]), Buffer.from('"}')]);
      await store.insertDelivery(makeDelivery(7, { body }));
      const [claimed] = await store.claimDue({ now: T0 + 100, limit: 1, owner: 'a', leaseMs: 1000 });
      expect(Buffer.compare(claimed.body!, body)).toBe(0);
    });

    test('claims take due deliveries oldest first, up to the limit, and lease them', async () => {
      const ids: number[] = [];
      for (const n of [1, 2, 3, 4, 5]) ids.push((await store.insertDelivery(makeDelivery(n))).id);
      // Not yet due: received after `now`.
      await store.insertDelivery(makeDelivery(50, { receivedAt: T0 + 10_000 }));

      const first = await store.claimDue({ now: T0 + 100, limit: 3, owner: 'replica-a', leaseMs: 60_000 });
      expect(first.map((d) => d.id)).toEqual(ids.slice(0, 3));
      expect(first.every((d) => d.state === 'sending' && d.attempts === 1)).toBe(true);

      const second = await store.claimDue({ now: T0 + 100, limit: 10, owner: 'replica-b', leaseMs: 60_000 });
      expect(second.map((d) => d.id)).toEqual(ids.slice(3));
      expect(await store.claimDue({ now: T0 + 100, limit: 10, owner: 'replica-b', leaseMs: 60_000 })).toEqual([]);
      expect(await store.claimDue({ now: T0 + 100, limit: 0, owner: 'replica-b', leaseMs: 60_000 })).toEqual([]);
      expect((await store.readQueue()).counts.sending).toBe(5);
    });

    test("a claim skips the sources it is told to (a source whose batch is still in flight): the others' go meanwhile", async () => {
      const lab = (await store.insertDelivery(makeDelivery(1, { source: 'lab', dedupKey: 'lab/1' }))).id;
      const prod = (await store.insertDelivery(makeDelivery(2, { source: 'prod', dedupKey: 'prod/2' }))).id;
      const older = (await store.insertDelivery(makeDelivery(3))).id;
      const claim = (skipSources: string[]) => store.claimDue({ now: T0 + 100, limit: 10, owner: 'a', leaseMs: 60_000, skipSources });
      expect((await claim(['lab', 'default'])).map((d) => [d.id, d.source])).toEqual([[prod, 'prod']]);
      expect((await claim([])).map((d) => d.id)).toEqual([lab, older]);
    });

    test('a claim takes the oldest due of every kind together (expired lease, due retry, queued), skipping what is not due', async () => {
      const ids: number[] = [];
      for (const n of [1, 2, 3, 4, 5, 6, 7]) ids.push((await store.insertDelivery(makeDelivery(n))).id);
      await store.claimDue({ now: T0 + 10, limit: 4, owner: 'gone', leaseMs: 1_000 });
      // 1: its lease runs out at T0 + 1_010; 2: a retry due at T0 + 500; 3: a retry not due yet; 4: sent.
      await markRetry(store, ids[1], { now: T0 + 20, nextAttemptAt: T0 + 500, error: 'greylisted', code: 'SMTP_4XX' });
      await markRetry(store, ids[2], { now: T0 + 20, nextAttemptAt: T0 + 60_000, error: 'greylisted', code: 'SMTP_4XX' });
      await markSent(store, ids[3], { now: T0 + 20, messageId: '<4@relay>' });
      // Received later than the claim's `now`: queued but not due.
      const late = (await store.insertDelivery(makeDelivery(8, { receivedAt: T0 + 10_000 }))).id;

      const first = await store.claimDue({ now: T0 + 2_000, limit: 3, owner: 'next', leaseMs: 60_000 });
      expect(first.map((d) => d.id)).toEqual([ids[0], ids[1], ids[4]]);
      const rest = await store.claimDue({ now: T0 + 2_000, limit: 10, owner: 'next', leaseMs: 60_000 });
      expect(rest.map((d) => d.id)).toEqual([ids[5], ids[6]]);
      expect(rest.map((d) => d.id)).not.toContain(late);
      expect(await store.getDelivery(ids[2])).toMatchObject({ state: 'retrying', attempts: 1 });
    });

    test('an expired lease is taken over by another claimer; a live one is not', async () => {
      const { id } = await store.insertDelivery(makeDelivery(1));
      const [mine] = await store.claimDue({ now: T0 + 10, limit: 1, owner: 'dies', leaseMs: 1_000 });
      expect(mine.id).toBe(id);

      const other = await open();
      expect(await other.claimDue({ now: T0 + 500, limit: 1, owner: 'survivor', leaseMs: 1_000 })).toEqual([]);
      const [taken] = await other.claimDue({ now: T0 + 1_010, limit: 1, owner: 'survivor', leaseMs: 1_000 });
      expect(taken).toMatchObject({ id, state: 'sending', attempts: 2 });
    });

    test("extendLeases keeps its owner's claims from being taken over, and touches nothing else", async () => {
      const ids = await Promise.all([1, 2, 3, 4].map(async (n) => (await store.insertDelivery(makeDelivery(n))).id));
      await store.claimDue({ now: T0 + 10, limit: 3, owner: 'holder', leaseMs: 1_000 });
      await markSent(store, ids[2], { now: T0 + 20, messageId: '<3@relay>' });
      const other = await open();
      await other.claimDue({ now: T0 + 30, limit: 1, owner: 'other', leaseMs: 1_000 });

      // Delivery 1 and 2 are the holder's; 3 is sent already and 4 is another owner's claim.
      expect(await store.extendLeases({ ids, owner: 'holder', now: T0 + 900, leaseMs: 1_000 })).toBe(2);
      expect(await store.extendLeases({ ids: [], owner: 'holder', now: T0 + 900, leaseMs: 1_000 })).toBe(0);

      // Past the first lease: the extended claims stand, the other owner's expired one is taken over.
      const taken = await other.claimDue({ now: T0 + 1_500, limit: 10, owner: 'other', leaseMs: 1_000 });
      expect(taken.map((d) => d.id)).toEqual([ids[3]]);
      expect(await store.getDelivery(ids[0])).toMatchObject({ state: 'sending', attempts: 1, updatedAt: T0 + 10 });
      expect(await store.getDelivery(ids[2])).toMatchObject({ state: 'sent', updatedAt: T0 + 20 });
      // And past the extended lease they are claimable again (their owner is gone).
      const later = await other.claimDue({ now: T0 + 1_900, limit: 10, owner: 'other', leaseMs: 1_000 });
      expect(later.map((d) => d.id)).toEqual([ids[0], ids[1]]);
    });

    test('instances claiming at the same time never get the same delivery', async () => {
      const other = await open();
      const third = await open();
      await Promise.all(Array.from({ length: 60 }, (_, i) => store.insertDelivery(makeDelivery(i + 1))));
      const seen: number[] = [];
      for (let round = 0; round < 10; round += 1) {
        const claims = await Promise.all(
          [store, other, third].map((s, i) => s.claimDue({ now: T0 + 1_000, limit: 4, owner: `replica-${i}`, leaseMs: 60_000 })),
        );
        for (const claim of claims) seen.push(...claim.map((d) => d.id));
      }
      expect(seen.length).toBe(60);
      expect(new Set(seen).size).toBe(60);
    });

    test('"try now" makes the retries due by the end of an SMTP pause due now, and nothing else', async () => {
      const ids = await Promise.all([1, 2, 3, 4].map(async (n) => (await store.insertDelivery(makeDelivery(n))).id));
      await store.claimDue({ now: T0 + 10, limit: 3, owner: 'a', leaseMs: 60_000 });
      const pauseEnd = T0 + 60_000;
      await markRetry(store, ids[0], { now: T0 + 20, nextAttemptAt: pauseEnd, error: 'refused', code: 'ECONNREFUSED' });
      await markRetry(store, ids[1], { now: T0 + 20, nextAttemptAt: T0 + 30_000, error: 'greylisted', code: 'SMTP_4XX' });
      await markRetry(store, ids[2], { now: T0 + 20, nextAttemptAt: pauseEnd + 1, error: 'greylisted', code: 'SMTP_4XX' });
      expect(await store.expediteRetries({ now: T0 + 100, until: pauseEnd })).toBe(2);
      const due = await store.claimDue({ now: T0 + 100, limit: 10, owner: 'b', leaseMs: 60_000 });
      // Oldest first; the one due after the pause and the queued one (due already) keep their times.
      expect(due.map((d) => d.id)).toEqual([ids[0], ids[1], ids[3]]);
      expect((await store.getDelivery(ids[2]))!.nextAttemptAt).toBe(pauseEnd + 1);
    });

    test('a relay starting makes the retries held by a given failure (a template) due now, and nothing else', async () => {
      const ids = await Promise.all([1, 2, 3].map(async (n) => (await store.insertDelivery(makeDelivery(n))).id));
      await store.claimDue({ now: T0 + 10, limit: 3, owner: 'a', leaseMs: 60_000 });
      await markRetry(store, ids[0], { now: T0 + 20, nextAttemptAt: T0 + 3_600_000, error: 'Missing helper', code: 'TEMPLATE' });
      await markRetry(store, ids[1], { now: T0 + 20, nextAttemptAt: T0 + 60_000, error: 'greylisted', code: 'SMTP_4XX' });
      expect(await store.expediteFailedWith({ now: T0 + 100, codes: [] })).toBe(0);
      expect(await store.expediteFailedWith({ now: T0 + 100, codes: ['TEMPLATE'] })).toBe(1);
      const due = await store.claimDue({ now: T0 + 100, limit: 10, owner: 'b', leaseMs: 60_000 });
      // The template's retry is due now; the greylisted one keeps its time; the one still claimed by `a` is not due.
      expect(due.map((d) => d.id)).toEqual([ids[0]]);
      expect((await store.getDelivery(ids[1]))!.nextAttemptAt).toBe(T0 + 60_000);
    });

    test('settleBatch records each delivery of the batch as sent, retrying or dead, and ends its lease', async () => {
      const ids = await Promise.all([1, 2, 3].map(async (n) => (await store.insertDelivery(makeDelivery(n))).id));
      await store.claimDue({ now: T0 + 10, limit: 3, owner: 'a', leaseMs: 60_000 });

      await store.settleBatch({
        now: T0 + 20,
        deliveries: [
          { id: ids[0], routes: [], sent: [], state: { state: 'sent', messageId: '<1@relay>' } },
          {
            id: ids[1],
            routes: [],
            sent: [],
            state: { state: 'retrying', nextAttemptAt: T0 + 5_000, error: 'greylisted', code: 'SMTP_4XX' },
          },
          { id: ids[2], routes: [], sent: [], state: { state: 'dead', error: 'no such user', code: 'SMTP_5XX' } },
        ],
        reports: [],
      });

      expect(await store.getDelivery(ids[0])).toMatchObject({
        state: 'sent',
        messageId: '<1@relay>',
        sentAt: T0 + 20,
        nextAttemptAt: null,
        updatedAt: T0 + 20,
      });
      expect(await store.getDelivery(ids[1])).toMatchObject({
        state: 'retrying',
        nextAttemptAt: T0 + 5_000,
        lastError: 'greylisted',
        lastErrorCode: 'SMTP_4XX',
        attempts: 1,
      });
      expect(await store.getDelivery(ids[2])).toMatchObject({
        state: 'dead',
        nextAttemptAt: null,
        lastError: 'no such user',
        lastErrorCode: 'SMTP_5XX',
      });
      expect((await store.readQueue()).counts).toEqual({ queued: 0, sending: 0, retrying: 1, sent: 1, dead: 1 });

      // The retry is not due before its time, and is at it (the lease was cleared, so no expiry applies).
      expect(await store.claimDue({ now: T0 + 4_999, limit: 5, owner: 'b', leaseMs: 60_000 })).toEqual([]);
      const [retried] = await store.claimDue({ now: T0 + 5_000, limit: 5, owner: 'b', leaseMs: 60_000 });
      expect(retried).toMatchObject({ id: ids[1], attempts: 2 });

      await markSent(store, ids[1], { now: T0 + 5_010, messageId: '<2@relay>' });
      expect(await store.getDelivery(ids[1])).toMatchObject({ state: 'sent', lastError: null, lastErrorCode: null });
      // An empty batch writes nothing and resolves.
      await expect(store.settleBatch({ now: T0 + 6_000, deliveries: [], reports: [] })).resolves.toBeUndefined();
      expect((await store.readQueue()).counts).toEqual({ queued: 0, sending: 0, retrying: 0, sent: 2, dead: 1 });
    });

    test("settleBatch writes a batch whole: plan, route mails, the sent copy (same bytes), the delivery's state and the report snapshot; a second settle with another plan keeps the first plan", async () => {
      const { id } = await store.insertDelivery(makeDelivery(1));
      await store.claimDue({ now: T0 + 10, limit: 1, owner: 'a', leaseMs: 60_000 });
      const plan = [
        { route: 'on-call', position: 0, outcome: 'send' as const, reason: 'matched', reminder: false },
        { route: 'auditors', position: 1, outcome: 'send' as const, reason: 'matched', reminder: true },
        { route: 'lead', position: 2, outcome: 'skipped' as const, reason: 'not matched', reminder: false },
      ];
      const copy = (route: string, messageId: string, sentAt: number) => ({
        route,
        messageId,
        // Bytes past the last part (no UTF-8 either) are kept too: the copy is the bytes as sent.
        raw: buildMime(messageId, Buffer.from([0xc3, 0xa9, 0x00, 0xff])),
        envelopeFrom: 'relay@example.com',
        envelopeTo: [`${route}@example.com`, 'bcc@example.com'],
        subject: 'Büro',
        text: 'body é\n',
        html: '<p>é</p>',
        response: `250 queued as ${route}`,
        sentAt,
      });
      const onCall = copy('on-call', '<1-on-call@relay>', T0 + 20);
      const report = { ...makeReport(1, T0, PAIRS_WITH_IDS), dedupKey: makeDelivery(1).dedupKey };

      // First attempt: on-call accepted, auditors greylisted; the delivery retries.
      const firstAttempt = (reports: ReportSnapshot[]): SettledBatch => ({
        now: T0 + 20,
        deliveries: [
          {
            id,
            plan,
            routes: [
              { route: 'on-call', state: 'sent', messageId: onCall.messageId, response: onCall.response },
              { route: 'auditors', state: 'pending', error: '451 try later', code: 'SMTP_4XX' },
            ],
            sent: [onCall],
            state: { state: 'retrying', nextAttemptAt: T0 + 5_000, error: '451 try later', code: 'SMTP_4XX' },
          },
        ],
        reports,
      });
      // A batch refused at its last row (a report without its series cannot be written) leaves nothing of it behind.
      const unstorable = { ...report, series: undefined as unknown as string };
      await expect(store.settleBatch(firstAttempt([unstorable]))).rejects.toThrow();
      expect(await store.listRouteMails([id])).toEqual([]);
      expect(await store.listSentMessages(id)).toEqual([]);
      expect(await store.getDelivery(id)).toMatchObject({ state: 'sending', attempts: 1, lastError: null });
      expect(await store.findReport(report.dedupKey)).toBeUndefined();
      // Written again as a whole, it lands.
      await store.settleBatch(firstAttempt([report]));

      // Another instance (a second connection, a replica) reads all of it.
      const other = await open();
      expect(
        (await other.listRouteMails([id])).map((m) => [m.route, m.outcome, m.state, m.reminder, m.messageId, m.lastErrorCode]),
      ).toEqual([
        ['on-call', 'send', 'sent', false, onCall.messageId, null],
        ['auditors', 'send', 'pending', true, null, 'SMTP_4XX'],
        ['lead', 'skipped', 'skipped', false, null, null],
      ]);
      expect((await other.listRouteMails([id]))[0]).toMatchObject({ response: onCall.response, sentAt: T0 + 20, decidedAt: T0 + 20 });
      const kept = await other.getSentMessage(id, 'on-call');
      expect(kept).toEqual(onCall);
      expect(kept!.raw.equals(onCall.raw)).toBe(true);
      expect(await other.getDelivery(id)).toMatchObject({
        state: 'retrying',
        nextAttemptAt: T0 + 5_000,
        lastErrorCode: 'SMTP_4XX',
        attempts: 1,
      });
      expect(await other.findReport(report.dedupKey)).toEqual(report);
      // The lease ended: nothing is claimable before the retry is due, not even after the old lease's end.
      expect(await other.claimDue({ now: T0 + 4_999, limit: 5, owner: 'b', leaseMs: 60_000 })).toEqual([]);

      // Second attempt, on the other instance, with a plan of its own (the routes changed meanwhile): the first plan stands.
      const [retried] = await other.claimDue({ now: T0 + 5_000, limit: 5, owner: 'b', leaseMs: 60_000 });
      expect(retried).toMatchObject({ id, attempts: 2 });
      const auditors = copy('auditors', '<1-auditors@relay>', T0 + 5_010);
      await other.settleBatch({
        now: T0 + 5_010,
        deliveries: [
          {
            id,
            plan: [
              { route: 'on-call', position: 0, outcome: 'skipped', reason: 'changed', reminder: false },
              { route: 'newcomer', position: 1, outcome: 'send', reason: 'matched', reminder: false },
            ],
            routes: [{ route: 'auditors', state: 'sent', messageId: auditors.messageId, response: auditors.response }],
            sent: [auditors],
            state: { state: 'sent', messageId: auditors.messageId },
          },
        ],
        reports: [{ ...report, failing: null }],
      });
      expect((await store.listRouteMails([id])).map((m) => [m.route, m.outcome, m.state, m.lastError])).toEqual([
        ['on-call', 'send', 'sent', null],
        ['auditors', 'send', 'sent', null],
        ['lead', 'skipped', 'skipped', null],
      ]);
      expect((await store.listRouteMails([id]))[0]).toMatchObject({ messageId: onCall.messageId, decidedAt: T0 + 20 });
      expect(await store.listSentMessages(id)).toEqual([onCall, auditors]);
      expect(await store.getDelivery(id)).toMatchObject({
        state: 'sent',
        messageId: auditors.messageId,
        sentAt: T0 + 5_010,
        lastError: null,
      });
      // The retried report without its failing set keeps the one stored.
      expect((await store.findReport(report.dedupKey))!.failing).toEqual(PAIRS_WITH_IDS);
    });

    test("a settlement without a state (a slice of a delivery's route mails) records its route mails and sent copies, the delivery still sending under its lease", async () => {
      const { id } = await store.insertDelivery(makeDelivery(1));
      await store.claimDue({ now: T0 + 10, limit: 1, owner: 'a', leaseMs: 60_000 });
      const plan = ['owner-1', 'owner-2'].map((route, position) => ({
        route,
        position,
        outcome: 'send' as const,
        reason: 'owner',
        reminder: false,
      }));
      const sent = {
        route: 'owner-1',
        messageId: '<1-owner-1@relay>',
        raw: Buffer.from('Message-ID: <1-owner-1@relay>\r\n\r\nbody'),
        envelopeFrom: 'relay@example.com',
        envelopeTo: ['owner-1@example.com'],
        subject: 'report',
        text: 'body',
        html: null,
        response: '250 queued',
        sentAt: T0 + 20,
      };
      const routes = [{ route: 'owner-1', state: 'sent' as const, messageId: sent.messageId, response: sent.response }];
      await store.settleBatch({ now: T0 + 20, deliveries: [{ id, plan, routes, sent: [sent] }], reports: [] });

      expect((await store.listRouteMails([id])).map((m) => [m.route, m.state])).toEqual([
        ['owner-1', 'sent'],
        ['owner-2', 'pending'],
      ]);
      expect(await store.listSentMessages(id)).toEqual([sent]);
      expect(await store.getDelivery(id)).toMatchObject({ state: 'sending', attempts: 1, messageId: null });
      expect(await store.extendLeases({ ids: [id], owner: 'a', now: T0 + 30, leaseMs: 60_000 })).toBe(1);
    });

    test('requeue puts a dead or sent delivery back, due now, with attempts reset', async () => {
      const ids = await Promise.all([1, 2, 3].map(async (n) => (await store.insertDelivery(makeDelivery(n))).id));
      await store.claimDue({ now: T0 + 10, limit: 3, owner: 'a', leaseMs: 60_000 });
      await markDead(store, ids[0], { now: T0 + 20, error: 'x', code: 'SMTP_5XX' });
      await markDead(store, ids[1], { now: T0 + 20, error: 'x', code: 'SMTP_5XX' });

      expect(await store.requeue(T0 + 30, ids[2])).toBe(0); // still sending
      expect(await store.requeue(T0 + 30, ids[0])).toBe(1);
      expect(await store.getDelivery(ids[0])).toMatchObject({ state: 'queued', attempts: 0, nextAttemptAt: T0 + 30 });
      expect(await store.requeue(T0 + 30, ids[0])).toBe(0); // already queued
      expect(await store.requeue(T0 + 30, 999_999)).toBe(0);

      expect(await store.requeue(T0 + 40)).toBe(1);
      expect(await store.requeue(T0 + 40)).toBe(0);
      expect((await store.readQueue()).counts.queued).toBe(2);

      await markSent(store, ids[2], { now: T0 + 50, messageId: '<3@relay>' });
      expect(await store.requeue(T0 + 60, ids[2])).toBe(1);
    });

    test('pruneDeliveries deletes only the given state, last changed before the cut-off, with its key', async () => {
      const ids = await Promise.all([1, 2, 3, 4].map(async (n) => (await store.insertDelivery(makeDelivery(n))).id));
      await store.claimDue({ now: T0 + 10, limit: 4, owner: 'a', leaseMs: 60_000 });
      // Sent with what the dashboard keeps of a delivery (its route decisions, its sent mail), which goes with it.
      const decision = { route: 'core', position: 0, outcome: 'send' as const, reason: 'matched', reminder: false };
      const settleSent = (id: number, now: number) =>
        store.settleBatch({
          now,
          deliveries: [
            {
              id,
              plan: [decision],
              routes: [{ route: 'core', state: 'sent', messageId: `<${id}@relay>`, response: '250 OK' }],
              sent: [
                {
                  route: 'core',
                  messageId: `<${id}@relay>`,
                  raw: Buffer.from('Subject: x\r\n\r\nbody\r\n'),
                  envelopeFrom: 'relay@example.com',
                  envelopeTo: ['a@example.com'],
                  subject: 'x',
                  response: '250 OK',
                  sentAt: now,
                },
              ],
              state: { state: 'sent', messageId: `<${id}@relay>` },
            },
          ],
          reports: [],
        });
      await settleSent(ids[0], T0 + 100);
      await settleSent(ids[1], T0 + 300);
      await markDead(store, ids[2], { now: T0 + 100, error: 'x', code: 'SMTP_5XX' });

      expect(await store.pruneDeliveries({ state: 'sent', before: T0 + 200 })).toBe(1);
      expect(await store.getDelivery(ids[0])).toBeUndefined();
      expect(await store.listSentMessages(ids[0])).toEqual([]);
      expect((await store.listRouteMails([ids[0], ids[1]])).map((m) => m.deliveryId)).toEqual([ids[1]]);
      expect(await store.listSentMessages(ids[1])).toHaveLength(1);
      expect(await store.getDelivery(ids[1])).toMatchObject({ state: 'sent' });
      expect(await store.getDelivery(ids[2])).toMatchObject({ state: 'dead' });
      expect(await store.getDelivery(ids[3])).toMatchObject({ state: 'sending' });
      // The idempotency key went with the row: the same report is a new delivery now.
      expect(await store.insertDelivery(makeDelivery(1))).toMatchObject({ duplicate: false });

      expect(await store.pruneDeliveries({ state: 'dead', before: T0 + 100 })).toBe(0);
      expect(await store.pruneDeliveries({ state: 'dead', before: T0 + 101 })).toBe(1);
      expect(await store.getDelivery(ids[2])).toBeUndefined();
    });

    test('readQueue counts every state, zero included', async () => {
      expect((await store.readQueue()).counts).toEqual({ queued: 0, sending: 0, retrying: 0, sent: 0, dead: 0 });
      await store.insertDelivery(makeDelivery(1));
      expect((await store.readQueue()).counts).toEqual({ queued: 1, sending: 0, retrying: 0, sent: 0, dead: 0 });
    });

    test('readQueue: nextDueAt is the earliest queued/retrying time or lease expiry, null when idle', async () => {
      expect((await store.readQueue()).nextDueAt).toBeNull();
      await store.insertDelivery(makeDelivery(1, { receivedAt: T0 + 300 }));
      await store.insertDelivery(makeDelivery(2, { receivedAt: T0 + 200 }));
      expect((await store.readQueue()).nextDueAt).toBe(T0 + 200);

      await store.claimDue({ now: T0 + 250, limit: 1, owner: 'a', leaseMs: 10 });
      expect((await store.readQueue()).nextDueAt).toBe(T0 + 260); // the lease ends before the other is due
      const [claimed] = await store.claimDue({ now: T0 + 300, limit: 2, owner: 'a', leaseMs: 1_000 });
      expect(claimed).toBeDefined();
      const all = await store.listDeliveries();
      for (const d of all) await markSent(store, d.id, { now: T0 + 400, messageId: `<${d.id}@relay>` });
      expect((await store.readQueue()).nextDueAt).toBeNull();
    });

    test('readQueue: oldestPendingAt is when the oldest unfinished delivery arrived, null when none is left', async () => {
      expect((await store.readQueue()).oldestPendingAt).toBeNull();
      const a = await store.insertDelivery(makeDelivery(1, { receivedAt: T0 + 100 }));
      const b = await store.insertDelivery(makeDelivery(2, { receivedAt: T0 + 200 }));
      expect((await store.readQueue()).oldestPendingAt).toBe(T0 + 100);
      await store.claimDue({ now: T0 + 300, limit: 1, owner: 'a', leaseMs: 60_000 });
      expect((await store.readQueue()).oldestPendingAt).toBe(T0 + 100); // sending still counts
      await markSent(store, a.id, { now: T0 + 400, messageId: '<a@relay>' });
      expect((await store.readQueue()).oldestPendingAt).toBe(T0 + 200);
      await store.claimDue({ now: T0 + 500, limit: 1, owner: 'a', leaseMs: 60_000 });
      await markDead(store, b.id, { now: T0 + 600, error: 'x', code: 'SMTP_5XX' });
      expect((await store.readQueue()).oldestPendingAt).toBeNull();
    });

    test('releaseLeases returns what is being sent to the queue, due now', async () => {
      await Promise.all([1, 2, 3].map((n) => store.insertDelivery(makeDelivery(n))));
      await store.claimDue({ now: T0 + 10, limit: 2, owner: 'a', leaseMs: 60_000 });
      expect(await store.releaseLeases(T0 + 20)).toBe(2);
      expect((await store.readQueue()).counts).toMatchObject({ queued: 1, retrying: 2, sending: 0 });
      expect((await store.readQueue()).nextDueAt).toBe(T0 + 3);
      expect(await store.releaseLeases(T0 + 30)).toBe(0);
    });

    test('listDeliveries pages newest first, filtered by state', async () => {
      const ids: number[] = [];
      for (const n of [1, 2, 3, 4, 5]) ids.push((await store.insertDelivery(makeDelivery(n))).id);
      await store.claimDue({ now: T0 + 10, limit: 1, owner: 'a', leaseMs: 60_000 });
      await markDead(store, ids[0], { now: T0 + 20, error: 'x', code: 'SMTP_5XX' });

      expect((await store.listDeliveries()).map((d) => d.id)).toEqual([...ids].reverse());
      expect((await store.listDeliveries({ limit: 2 })).map((d) => d.id)).toEqual([ids[4], ids[3]]);
      expect((await store.listDeliveries({ limit: 2, beforeId: ids[3] })).map((d) => d.id)).toEqual([ids[2], ids[1]]);
      expect((await store.listDeliveries({ state: 'dead' })).map((d) => d.id)).toEqual([ids[0]]);
      expect((await store.listDeliveries({ state: 'queued', beforeId: ids[2] })).map((d) => d.id)).toEqual([ids[1]]);
      expect((await store.listDeliveries())[0]).not.toHaveProperty('body');
    });

    test('listDeliveries filters by route, report id, date range and failing device or test name, with keyset pages both ways', async () => {
      const ids: number[] = [];
      for (const n of [1, 2, 3, 4, 5, 6]) ids.push((await store.insertDelivery(makeDelivery(n, { reportId: n % 2 ? 7 : 8 }))).id);
      const decide = (route: string) => ({ route, position: 0, outcome: 'send' as const, reason: 'matched', reminder: false });
      await recordPlan(store, ids[0], [decide('core')], T0);
      await recordPlan(store, ids[3], [decide('core'), { ...decide('edge'), position: 1 }], T0);
      await recordPlan(store, ids[4], [decide('edge')], T0);
      // Failing results as enrichment stored them with each report (same dedup key as the delivery).
      const failing = (device: string, test: string) => [{ device, test, severity: 'HIGH' as const }];
      await saveReport(store, { ...makeReport(2, T0, failing('Core-SW1', 'ntp_configured')), dedupKey: makeDelivery(2).dedupKey });
      await saveReport(store, { ...makeReport(3, T0, failing('edge_100%', 'snmp "v3"')), dedupKey: makeDelivery(3).dedupKey });
      await saveReport(store, { ...makeReport(4, T0, null), dedupKey: makeDelivery(4).dedupKey });
      const list = async (options: Parameters<Store['listDeliveries']>[0]) => (await store.listDeliveries(options)).map((d) => d.id);

      expect(await list({ route: 'core' })).toEqual([ids[3], ids[0]]);
      expect(await list({ route: 'edge', reportId: 8 })).toEqual([ids[3]]);
      expect(await list({ reportId: 7 })).toEqual([ids[4], ids[2], ids[0]]);
      expect(await list({ receivedFrom: T0 + 2, receivedBefore: T0 + 5 })).toEqual([ids[3], ids[2], ids[1]]);
      // Case-insensitive substring of a device or a test name; LIKE wildcards and JSON quotes are matched literally.
      expect(await list({ search: 'core-sw' })).toEqual([ids[1]]);
      expect(await list({ search: 'NTP' })).toEqual([ids[1]]);
      expect(await list({ search: '100%' })).toEqual([ids[2]]);
      expect(await list({ search: '_1' })).toEqual([ids[2]]);
      expect(await list({ search: 'p "v' })).toEqual([ids[2]]);
      expect(await list({ search: 'edge_1%0' })).toEqual([]);
      expect(await list({ search: 'router' })).toEqual([]);
      expect(await list({ search: 'sw1', reportId: 7 })).toEqual([]);

      // Keyset pages: older below the last id seen, newer above the first, each newest first.
      expect(await list({ limit: 2 })).toEqual([ids[5], ids[4]]);
      expect(await list({ limit: 2, beforeId: ids[4] })).toEqual([ids[3], ids[2]]);
      expect(await list({ limit: 2, beforeId: ids[2] })).toEqual([ids[1], ids[0]]);
      expect(await list({ limit: 2, afterId: ids[1] })).toEqual([ids[3], ids[2]]);
      expect(await list({ limit: 2, afterId: ids[3] })).toEqual([ids[5], ids[4]]);
      expect(await list({ limit: 2, reportId: 7, beforeId: ids[4] })).toEqual([ids[2], ids[0]]);
      expect(await list({ limit: 1, reportId: 8, afterId: ids[1] })).toEqual([ids[3]]);
    });

    test('findReport reads a report by dedup key with the NetBox ids of its failing results, kept across a retry without them', async () => {
      const report = makeReport(10, T0, PAIRS_WITH_IDS);
      await saveReport(store, report);
      expect((await store.findReport(report.dedupKey))!.failing).toEqual(PAIRS_WITH_IDS);
      // A retry that could not read the failing results keeps the ones stored, ids included.
      await saveReport(store, { ...report, failing: null });
      expect((await store.findReport(report.dedupKey))!.failing).toEqual(PAIRS_WITH_IDS);
      // Pairs without ids (an older relay's) read back without them.
      await saveReport(store, { ...report, failing: PAIRS_WITH_IDS.map(({ ids: _ids, ...pair }) => pair) });
      expect((await store.findReport(report.dedupKey))!.failing).toEqual(PAIRS_WITH_IDS.map(({ ids: _ids, ...pair }) => pair));
      expect(await store.findReport('nothing@here')).toBeUndefined();
    });

    test('findReports reads several reports by dedup key at once, each as findReport reads it; a key without a report is left out', async () => {
      const reports = [
        makeReport(11, T0, PAIRS_WITH_IDS),
        makeReport(12, T0 + 1_000, null),
        makeReport(13, T0, [], 'https://other.example.com|'),
      ];
      for (const report of reports) await saveReport(store, report);
      const found = await store.findReports([...reports.map((r) => r.dedupKey), 'nothing@here']);
      expect(found.sort((a, b) => a.reportId - b.reportId)).toEqual(await Promise.all(reports.map((r) => store.findReport(r.dedupKey))));
      expect(found.map((r) => r.reportId).sort()).toEqual([11, 12, 13]);
      expect(await store.findReports([])).toEqual([]);
    });

    test("findReport reads back what NetBox said of a report's changed pairs, for the preview", async () => {
      const states = {
        now: new Map([
          ['ntp\u0000sw3', false],
          ['ntp\u0000sw4', true],
        ]),
        before: null,
        deletedTests: [],
        deletedDevices: ['sw3'],
        unknownReason: 'NetBox no longer has report 9',
      };
      const report = { ...makeReport(11, T0, PAIRS_WITH_IDS), states };
      await saveReport(store, report);
      expect((await store.findReport(report.dedupKey))!.states).toEqual(states);
      await saveReport(store, { ...report, states: null });
      expect((await store.findReport(report.dedupKey))!.states).toBeUndefined();
    });

    test('findReportBefore with failingIds: false reads the same report and pairs, without their NetBox ids', async () => {
      const report = makeReport(10, T0, PAIRS_WITH_IDS);
      await saveReport(store, report);
      const cursor = { createdMs: T0 + 1_000, reportId: 11 };
      expect(await store.findReportBefore(report.series, cursor)).toEqual(report);
      expect(await store.findReportBefore(report.series, cursor, { failingIds: true })).toEqual(report);
      expect(await store.findReportBefore(report.series, cursor, { failingIds: false })).toEqual({
        ...report,
        failing: PAIRS_WITH_IDS.map(({ ids: _ids, ...pair }) => pair),
      });
      expect(await store.findReportBefore(report.series, { createdMs: T0, reportId: 10 }, { failingIds: false })).toBeUndefined();
    });

    test('retryNow brings a retrying delivery forward and leaves every other state alone', async () => {
      const a = await store.insertDelivery(makeDelivery(1));
      const b = await store.insertDelivery(makeDelivery(2));
      await store.claimDue({ now: T0 + 10, limit: 2, owner: 'a', leaseMs: 60_000 });
      await markRetry(store, a.id, { now: T0 + 20, nextAttemptAt: T0 + 600_000, error: '451 try later', code: 'SMTP_4XX' });
      await markDead(store, b.id, { now: T0 + 20, error: '550 no', code: 'SMTP_5XX' });

      expect(await store.retryNow(a.id, T0 + 30)).toBe(true);
      expect(await store.getDelivery(a.id)).toMatchObject({
        state: 'retrying',
        nextAttemptAt: T0 + 30,
        attempts: 1,
        lastErrorCode: 'SMTP_4XX',
      });
      expect((await store.readQueue()).nextDueAt).toBe(T0 + 30);
      expect(await store.retryNow(b.id, T0 + 40)).toBe(false);
      expect(await store.getDelivery(b.id)).toMatchObject({ state: 'dead', nextAttemptAt: null });
      expect(await store.retryNow(999_999, T0 + 40)).toBe(false);
    });

    test('checkWritable resolves on a healthy store', async () => {
      await expect(store.checkWritable(T0)).resolves.toBeUndefined();
      await expect(store.checkWritable(T0 + 1)).resolves.toBeUndefined();
    });

    test('migrate is idempotent: a second instance finds the schema up to date', async () => {
      const first = await store.migrate();
      const other = await open();
      const second = await other.migrate();
      expect(second.applied).toEqual([]);
      expect(second.version).toBe(first.version);
      expect(second.version).toBeGreaterThanOrEqual(1);
    });

    test('saveReport keeps one row per report; findReportBefore walks a series newest first', async () => {
      const pair = { device: 'sw1', test: 'ntp-servers', severity: 'HIGH' as const };
      await saveReport(store, makeReport(10, T0, [pair]));
      await saveReport(store, makeReport(12, T0 + 1_000, null));
      await saveReport(store, makeReport(11, T0 + 1_000, []));
      await saveReport(store, makeReport(99, T0 + 500, [pair], 'https://other.example.com|'));

      expect(await store.findReportBefore('https://netbox.example.com|', { createdMs: T0, reportId: 10 })).toBeUndefined();
      // Same creation time: the lower report id comes first.
      expect(await store.findReportBefore('https://netbox.example.com|', { createdMs: T0 + 1_000, reportId: 12 })).toEqual(
        makeReport(11, T0 + 1_000, []),
      );
      expect(await store.findReportBefore('https://netbox.example.com|', { createdMs: T0 + 1_000, reportId: 11 })).toEqual(
        makeReport(10, T0, [pair]),
      );
      expect(await store.findReportBefore('https://netbox.example.com|', { createdMs: T0 + 5_000, reportId: 1 })).toEqual(
        makeReport(12, T0 + 1_000, null),
      );

      // Saved again (a retry) with an unknown failing set: counts update, the known set stays.
      await saveReport(store, {
        ...makeReport(10, T0, null),
        counts: { ...makeReport(10, T0, null).counts, overall: { passed: 42, count: 100 } },
      });
      expect(await store.findReportBefore('https://netbox.example.com|', { createdMs: T0 + 1, reportId: 1 })).toMatchObject({
        reportId: 10,
        counts: { overall: { passed: 42 } },
        failing: [pair],
      });
    });

    test('a report delivery stored with its series is in the history at once: counts known, failing set not yet, until it is composed', async () => {
      const series = 'https://netbox.example.com|';
      const arrival = (id: number, created: string) => ({
        ...makeReportDelivery(buildBody({ data: buildReportData({ id, created, total_passed: id, total_count: 50 }) })),
        series,
      });
      const first = arrival(41, '2026-11-21T10:00:00.000000Z');
      const second = arrival(42, '2026-11-21T11:00:00.000000Z');
      expect((await store.insertDelivery(first)).duplicate).toBe(false);
      const after = { createdMs: Date.parse('2026-11-21T10:30:00Z'), reportId: 1 };

      const stored = await store.findReportBefore(series, after);
      expect(stored).toMatchObject({
        dedupKey: first.dedupKey,
        reportId: 41,
        counts: { overall: { passed: 41, count: 50 } },
        failing: null,
      });
      expect(stored?.pending).toBe(true);
      expect(stored?.arrivedLate).toBeUndefined();
      expect(await store.listReportsBefore(series, after, 5)).toMatchObject([{ reportId: 41, pending: true }]);
      // Another series does not see it.
      expect(await store.findReportBefore('https://other.example.com|', after)).toBeUndefined();

      // Composed: its failing set is known; the same webhook sent again changes nothing.
      const pair = { device: 'sw1', test: 'ntp', severity: 'HIGH' as const };
      await saveReport(store, { ...stored!, pending: undefined, failing: [pair] });
      expect((await store.insertDelivery(first)).duplicate).toBe(true);
      const composed = await store.findReport(first.dedupKey);
      expect(composed?.failing).toEqual([pair]);
      expect(composed?.pending).toBeUndefined();
      // A delivery without its series (a watchdog's alert, a caller that does not know it) writes no row.
      await store.insertDelivery({ ...second, series: undefined });
      expect(await store.findReport(second.dedupKey)).toBeUndefined();
    });

    test('a report stored after a newer one of its series is marked late; the newer one is left as it was', async () => {
      const series = 'https://netbox.example.com|';
      const arrival = (id: number, created: string) => ({
        ...makeReportDelivery(buildBody({ data: buildReportData({ id, created }) })),
        series,
      });
      const older = arrival(50, '2026-11-21T10:00:00.000000Z');
      const newer = arrival(51, '2026-11-21T11:00:00.000000Z');
      const other = { ...arrival(49, '2026-11-21T09:00:00.000000Z'), series: 'https://other.example.com|' };
      await store.insertDelivery(newer);
      const pair = { device: 'sw1', test: 'ntp', severity: 'HIGH' as const };
      const newerComposed = { ...(await store.findReport(newer.dedupKey))!, pending: undefined, failing: [pair] };
      await saveReport(store, newerComposed);
      await store.insertDelivery(older);
      await store.insertDelivery(other);

      expect((await store.findReport(older.dedupKey))?.arrivedLate).toBe(true);
      expect((await store.findReport(newer.dedupKey))?.arrivedLate).toBeUndefined();
      // Another series' newer report does not make it late.
      expect((await store.findReport(other.dedupKey))?.arrivedLate).toBeUndefined();
      // Its own mail composed: still late; the newer report's row is untouched.
      await saveReport(store, { ...(await store.findReport(older.dedupKey))!, pending: undefined, arrivedLate: undefined, failing: [] });
      expect(await store.findReport(older.dedupKey)).toMatchObject({ arrivedLate: true, failing: [] });
      expect(await store.findReport(newer.dedupKey)).toEqual(newerComposed);
    });

    test('listReportsBefore gives the newest reports of a series before a report, oldest first, at most the limit', async () => {
      const series = 'https://netbox.example.com|';
      for (const [id, ms] of [
        [1, T0],
        [2, T0 + 1_000],
        [4, T0 + 2_000],
        [3, T0 + 2_000],
        [5, T0 + 3_000],
      ] as const)
        await saveReport(store, makeReport(id, ms, null));
      await saveReport(store, makeReport(98, T0 + 2_500, null, 'https://other.example.com|'));
      const ids = async (before: { createdMs: number; reportId: number }, limit: number) =>
        (await store.listReportsBefore(series, before, limit)).map((r) => r.reportId);

      // Before report 5: the three newest of its series (creation time, then id), never another series'.
      expect(await ids({ createdMs: T0 + 3_000, reportId: 5 }, 3)).toEqual([2, 3, 4]);
      expect(await ids({ createdMs: T0 + 3_000, reportId: 5 }, 100)).toEqual([1, 2, 3, 4]);
      // A report that arrived late sees only what was created before it.
      expect(await ids({ createdMs: T0 + 1_000, reportId: 2 }, 10)).toEqual([1]);
      expect(await ids({ createdMs: T0, reportId: 1 }, 10)).toEqual([]);
      expect(await ids({ createdMs: T0 + 3_000, reportId: 5 }, 0)).toEqual([]);
      const { failing: _, ...point } = makeReport(4, T0 + 2_000, null);
      expect(await store.listReportsBefore(series, { createdMs: T0 + 3_000, reportId: 5 }, 1)).toEqual([point]);
    });

    test('listReportsBefore reads counts only: the failing set of a report stays in the store (the chart plots counts)', async () => {
      const series = 'https://netbox.example.com|';
      const failing = [{ device: 'sw1', test: 'ntp-servers', severity: 'HIGH' as const }];
      await saveReport(store, makeReport(1, T0, failing));
      const [listed] = await store.listReportsBefore(series, { createdMs: T0 + 1_000, reportId: 2 }, 5);
      expect(listed).toEqual({ ...makeReport(1, T0, null), failing: undefined });
      expect(listed).not.toHaveProperty('failing');
      // The set is still there for the trend, which reads it report by report.
      expect((await store.findReportBefore(series, { createdMs: T0 + 1_000, reportId: 2 }))?.failing).toEqual(failing);
    });

    test('only the newest failing sets of a series are kept', async () => {
      const pair = { device: 'sw1', test: 'ntp-servers', severity: 'HIGH' as const };
      const n = REPORT_FAILING_SETS_KEPT + 2;
      for (let i = 1; i <= n; i += 1) await saveReport(store, makeReport(i, T0 + i, [pair]));
      const oldest = await store.findReportBefore('https://netbox.example.com|', { createdMs: T0 + 2, reportId: 2 });
      expect(oldest).toMatchObject({ reportId: 1, failing: null });
      const kept = await store.findReportBefore('https://netbox.example.com|', { createdMs: T0 + n + 1, reportId: 1 });
      expect(kept).toMatchObject({ reportId: n, failing: [pair] });
    });

    test('one catch-up per source at a time: of two relays asking at once one gets the lease, the other after it is released or expired', async () => {
      const other = await open();
      const lease = { source: 'default', now: T0, leaseMs: 60_000 };
      const taken = await Promise.all([store.takeCatchUpLease({ ...lease, owner: 'a' }), other.takeCatchUpLease({ ...lease, owner: 'b' })]);
      expect(taken.filter((t) => t !== undefined)).toEqual([{ seen: null, succeededAt: null }]);
      const winner = taken[0] ? 'a' : 'b';
      const loser = winner === 'a' ? 'b' : 'a';
      // Another source has a lease of its own.
      expect(await store.takeCatchUpLease({ ...lease, source: 'lab', owner: loser })).toEqual({ seen: null, succeededAt: null });
      // A finish by a relay that does not hold the lease changes nothing.
      await store.finishCatchUp({ source: 'default', owner: loser, now: T0 + 1, seen: { createdMs: 5, reportId: 5 } });
      expect(await store.getCatchUpState('default')).toEqual({ seen: null, succeededAt: null });
      await store.finishCatchUp({ source: 'default', owner: winner, now: T0 + 2, seen: { createdMs: T0 - 10, reportId: 7 } });
      expect(await other.takeCatchUpLease({ ...lease, now: T0 + 3, owner: loser })).toEqual({
        seen: { createdMs: T0 - 10, reportId: 7 },
        succeededAt: T0 + 2,
      });
      // Held and unexpired: refused; expired (its relay died): taken over. A failed run keeps what was seen.
      expect(await store.takeCatchUpLease({ ...lease, now: T0 + 4, owner: winner })).toBeUndefined();
      expect(await store.takeCatchUpLease({ ...lease, now: T0 + 3 + 60_000, owner: winner })).toBeDefined();
      await store.finishCatchUp({ source: 'default', owner: winner, now: T0 + 70_000 });
      expect(await store.getCatchUpState('default')).toEqual({ seen: { createdMs: T0 - 10, reportId: 7 }, succeededAt: T0 + 2 });
    });

    test('a delivery says how it was received, and the newest stored report of a source is the highest NetBox id', async () => {
      expect(await store.newestStoredReport('default')).toBeUndefined();
      const hooked = await store.insertDelivery(makeDelivery(9));
      const fetched = await store.insertDelivery(makeDelivery(4, { receivedVia: 'catch-up' }));
      await store.insertDelivery(makeDelivery(12, { kind: 'watchdog', dedupKey: 'watchdog:x' }));
      await store.insertDelivery(makeDelivery(30, { source: 'lab', dedupKey: 'lab/30' }));
      expect((await store.getDelivery(hooked.id))?.receivedVia).toBe('webhook');
      expect((await store.getDelivery(fetched.id))?.receivedVia).toBe('catch-up');
      expect((await store.listDeliveries()).map((d) => d.receivedVia)).toContain('catch-up');
      expect(await store.newestStoredReport('default')).toEqual({ reportId: 9, created: '2026-11-21T10:00:00.000000+00:00' });
      expect(await store.listStoredReportIds('default', 4, 30)).toEqual([9]);
      expect(new Set(await store.listStoredReportIds('default', 3, 9))).toEqual(new Set([4, 9]));
      expect(await store.listStoredReportIds('lab', 0, 100)).toEqual([30]);
      // A report in the trend's history stays known after its delivery is pruned.
      await saveReport(store, makeReport(77, T0, []));
      const known = await store.findKnownKeys([makeDelivery(9).dedupKey, makeReport(77, T0, []).dedupKey, 'lab/31@x', '5@x']);
      expect(known.sort()).toEqual([makeDelivery(9).dedupKey, makeReport(77, T0, []).dedupKey].sort());
      expect(await store.findKnownKeys([])).toEqual([]);
    });

    test('the watchdog moves by compare-and-set: of two instances that saw the same state, one wins and queues the mail', async () => {
      const other = await open();
      const seenHere = await store.getWatchdogState(T0);
      const seenThere = await other.getWatchdogState(T0 + 5);
      expect(seenHere).toEqual({ state: 'ok', since: null, createdAt: T0, changedAt: T0, version: 0 });
      expect(seenThere).toEqual(seenHere);
      const alert = (n: number): NewDelivery =>
        makeDelivery(n, {
          dedupKey: `watchdog:overdue@${T0}`,
          kind: 'watchdog',
          reportId: 0,
          sender: 'watchdog',
          receivedAt: T0 + 1000 + n,
        });
      const results = await Promise.all([
        store.transitionWatchdog({ expectedVersion: 0, state: 'overdue', since: T0, now: T0 + 1000, alert: alert(1) }),
        other.transitionWatchdog({ expectedVersion: 0, state: 'overdue', since: T0, now: T0 + 1001, alert: alert(2) }),
      ]);
      expect(results.map((r) => r.won).sort()).toEqual([false, true]);
      expect(await other.getWatchdogState(T0 + 2000)).toMatchObject({ state: 'overdue', since: T0, version: 1 });
      const queued = await store.listDeliveries();
      expect(queued).toHaveLength(1);
      expect(queued[0]).toMatchObject({ id: results.find((r) => r.won)!.alertId, kind: 'watchdog', sender: 'watchdog', state: 'queued' });
      // The watchdog's own records never count as a report arriving.
      expect(await store.lastReportReceivedAt()).toBeNull();
      await store.insertDelivery(makeDelivery(7));
      expect(await other.lastReportReceivedAt()).toBe(T0 + 7);
      // A stale version loses even alone.
      expect(
        (await store.transitionWatchdog({ expectedVersion: 0, state: 'ok', since: T0 + 7, now: T0 + 3000, alert: alert(3) })).won,
      ).toBe(false);
    });

    test("a digest's period is queued once: of two instances queuing the same period, one records it with its mail", async () => {
      const other = await open();
      expect(await store.listDigestPeriods({ route: 'weekly' })).toEqual([]);
      // The period before the route's first run: recorded, no mail.
      expect(
        await store.queueDigest({ route: 'weekly', periodStart: T0 - 7000, periodEnd: T0, late: false, now: T0 + 1, job: null }),
      ).toEqual({
        queued: true,
        deliveryId: null,
      });
      const job = (n: number): NewDelivery =>
        makeDelivery(n, { dedupKey: `digest:weekly@${T0}`, kind: 'digest', reportId: 0, sender: 'digest', receivedAt: T0 + 7000 + n });
      const period = { route: 'weekly', periodStart: T0, periodEnd: T0 + 7000 };
      const results = await Promise.all([
        store.queueDigest({ ...period, late: false, now: T0 + 7001, job: job(1) }),
        other.queueDigest({ ...period, late: true, now: T0 + 7002, job: job(2) }),
      ]);
      expect(results.map((r) => r.queued).sort()).toEqual([false, true]);
      const winner = results.find((r) => r.queued)!;
      const queued = await store.listDeliveries();
      expect(queued).toHaveLength(1);
      expect(queued[0]).toMatchObject({ id: winner.deliveryId, kind: 'digest', sender: 'digest', state: 'queued', report: null });
      expect((await other.listDigestPeriods({ route: 'weekly', limit: 1 }))[0]).toMatchObject({ ...period, deliveryId: winner.deliveryId });
      // The same period end under another start (a changed schedule read twice) is refused too.
      expect(
        (await store.queueDigest({ route: 'weekly', periodStart: T0 + 1, periodEnd: T0 + 7000, late: false, now: T0 + 8000, job: job(3) }))
          .queued,
      ).toBe(false);
      // Another route's period of the same times is its own.
      expect((await store.queueDigest({ ...period, route: 'daily', late: false, now: T0 + 8000, job: null })).queued).toBe(true);
      expect((await store.listDigestPeriods({ route: 'weekly' })).map((p) => [p.periodStart, p.periodEnd, p.deliveryId !== null])).toEqual([
        [T0, T0 + 7000, true],
        [T0 - 7000, T0, false],
      ]);
      expect(await store.listDigestPeriods()).toHaveLength(3);
      // A digest's own record never counts as a report arriving (the watchdog).
      expect(await store.lastReportReceivedAt()).toBeNull();
    });

    test('the body and the sent mail of each route come back byte for byte; a later send of a route replaces its record', async () => {
      const { id } = await store.insertDelivery(makeDelivery(3));
      expect((await store.getDeliveryBody(id))!.equals(makeDelivery(3).body)).toBe(true);
      expect(await store.getDeliveryBody(id + 100)).toBeUndefined();
      expect(await store.getSentMessage(id, 'on-call')).toBeUndefined();
      expect(await store.listSentMessages(id)).toEqual([]);
      const raw = buildMime('<1@relay>');
      const first = {
        route: 'on-call',
        messageId: '<1@relay>',
        raw,
        envelopeFrom: 'relay@example.com',
        envelopeTo: ['a@example.com', 'bcc@example.com'],
        subject: 'Büro',
        text: 'body é\n',
        html: '<p>é</p>',
        response: '250 OK',
        sentAt: T0,
      };
      await saveSentCopy(store, id, first);
      const other = await open();
      const got = await other.getSentMessage(id, 'on-call');
      expect(got).toEqual(first);
      expect(got!.raw.equals(raw)).toBe(true);
      // A second route's mail of the same delivery is kept next to the first (issue 17), not over it.
      const second = { ...first, route: 'auditors', messageId: '<2@relay>', envelopeTo: ['audit@example.com'], sentAt: T0 + 2 };
      await saveSentCopy(store, id, second);
      expect(await other.listSentMessages(id)).toEqual([first, second]);
      const textOnly = Buffer.from('Message-ID: <3@relay>\r\nSubject: report\r\n\r\nbody\r\n');
      await saveSentCopy(store, id, { ...first, raw: textOnly, response: '250 queued as 2', sentAt: T0 + 5 });
      expect(await other.getSentMessage(id, 'on-call')).toMatchObject({
        text: 'body\n',
        html: null,
        response: '250 queued as 2',
        sentAt: T0 + 5,
      });
      expect((await other.listSentMessages(id)).map((m) => m.route)).toEqual(['auditors', 'on-call']);
    });

    test('route decisions are recorded once: a second decision (retry, other replica) keeps the first', async () => {
      const { id } = await store.insertDelivery(makeDelivery(1));
      const first = await recordPlan(
        store,
        id,
        [
          { route: 'on-call', position: 0, outcome: 'send', reason: 'matched', reminder: false },
          { route: 'auditors', position: 1, outcome: 'suppressed', reason: 'every test passed (notify: on-failure)', reminder: false },
          { route: 'lead', position: 2, outcome: 'skipped', reason: 'not matched', reminder: false },
        ],
        T0,
      );
      expect(first.map((r) => [r.route, r.outcome, r.state, r.reminder])).toEqual([
        ['on-call', 'send', 'pending', false],
        ['auditors', 'suppressed', 'suppressed', false],
        ['lead', 'skipped', 'skipped', false],
      ]);
      const other = await open();
      const again = await recordPlan(
        other,
        id,
        [{ route: 'on-call', position: 0, outcome: 'skipped', reason: 'other', reminder: true }],
        T0 + 1,
      );
      expect(again).toEqual(first);

      // A transient failure keeps the mail pending with its error; a permanent one makes it failed; sent clears the error.
      await markRouteMail(store, id, { route: 'on-call', state: 'pending', error: '451 try later', code: 'SMTP_4XX' }, T0 + 2);
      expect((await store.listRouteMails([id]))[0]).toMatchObject({
        state: 'pending',
        lastError: '451 try later',
        lastErrorCode: 'SMTP_4XX',
      });
      await markRouteMail(store, id, { route: 'on-call', state: 'failed', error: '550 no such user', code: 'SMTP_5XX' }, T0 + 3);
      expect((await store.listRouteMails([id]))[0]).toMatchObject({ state: 'failed', lastErrorCode: 'SMTP_5XX' });
      await markRouteMail(store, id, { route: 'on-call', state: 'sent', messageId: '<m@x>', response: '250 OK' }, T0 + 4);
      expect((await other.listRouteMails([id, id + 1000]))[0]).toMatchObject({
        deliveryId: id,
        state: 'sent',
        messageId: '<m@x>',
        response: '250 OK',
        sentAt: T0 + 4,
        lastError: null,
      });
      // A sent mail never goes back to failed.
      await markRouteMail(store, id, { route: 'on-call', state: 'failed', error: 'late', code: 'X' }, T0 + 5);
      expect((await store.listRouteMails([id]))[0].state).toBe('sent');
      expect(await store.listRouteMails([])).toEqual([]);
    });

    test('lastRouteMailCompletedAt: the newest earlier report this route decided to send', async () => {
      const day = (d: number) => `2026-03-0${d}T06:00:00.000000Z`;
      const ids: number[] = [];
      for (const d of [1, 2, 3]) {
        const { id } = await store.insertDelivery(makeDelivery(d, { reportCreated: day(d), completedAt: `2026-03-0${d}T06:00:05Z` }));
        ids.push(id);
      }
      await recordPlan(store, ids[0], [{ route: 'on-call', position: 0, outcome: 'send', reason: 'first', reminder: false }], T0);
      await recordPlan(store, ids[1], [{ route: 'on-call', position: 0, outcome: 'suppressed', reason: 'same', reminder: false }], T0);
      expect(await store.lastRouteMailCompletedAt('on-call', ids[2])).toBe('2026-03-01T06:00:05Z');
      expect(await store.lastRouteMailCompletedAt('on-call', ids[0])).toBeNull();
      expect(await store.lastRouteMailCompletedAt('auditors', ids[2])).toBeNull();
    });

    test("owner groups: each group is a row of its own with its plan read back; its mails count for the route's repeat_after", async () => {
      const day = (d: number) => `2026-03-0${d}T06:00:00.000000Z`;
      const first = await store.insertDelivery(makeDelivery(1, { reportCreated: day(1), completedAt: '2026-03-01T06:00:05Z' }));
      const second = await store.insertDelivery(makeDelivery(2, { reportCreated: day(2), completedAt: '2026-03-02T06:00:05Z' }));
      const group = {
        route: 'own_ers',
        key: 'o-0123456789ab',
        to: ['alice@example.com'],
        why: 'you are the primary owner contact of site fra1',
        deviceIds: [101],
        devices: ['sw-fra-1'],
        counts: { HIGH: { passed: 0, count: 1 }, MIDDLE: { passed: 1, count: 1 }, LOW: { passed: 0, count: 0 } },
        whole: false,
        note: null,
      };
      const plan = await recordPlan(
        store,
        first.id,
        [
          { route: 'own_ers~o-0123456789ab', position: 0, outcome: 'send', reason: 'matched', reminder: false, ownerGroup: group },
          {
            route: 'own_ers~unowned',
            position: 0,
            outcome: 'send',
            reason: 'matched',
            reminder: false,
            ownerGroup: { ...group, key: 'unowned' },
          },
          { route: 'auditors', position: 1, outcome: 'send', reason: 'matched', reminder: false },
        ],
        T0,
      );
      expect(plan.map((m) => [m.route, m.ownerGroup?.key ?? null])).toEqual([
        ['own_ers~o-0123456789ab', 'o-0123456789ab'],
        ['own_ers~unowned', 'unowned'],
        ['auditors', null],
      ]);
      expect(plan[0].ownerGroup).toEqual(group);
      await markRouteMail(store, first.id, { route: 'own_ers~unowned', state: 'sent', messageId: '<m@x>', response: '250 OK' }, T0 + 1);
      expect((await store.listRouteMails([first.id])).map((m) => m.state)).toEqual(['pending', 'sent', 'pending']);
      expect(await store.lastRouteMailCompletedAt('own_ers', second.id)).toBe('2026-03-01T06:00:05Z');
      // `_` is a LIKE wildcard: the groups of route `ownXers` are not `own_ers`'s mails.
      const third = await store.insertDelivery(makeDelivery(3, { reportCreated: day(3), completedAt: '2026-03-03T06:00:05Z' }));
      await recordPlan(store, second.id, [{ route: 'ownXers~o-1', position: 0, outcome: 'send', reason: 'matched', reminder: false }], T0);
      expect(await store.lastRouteMailCompletedAt('ownXers', third.id)).toBe('2026-03-02T06:00:05Z');
      expect(await store.lastRouteMailCompletedAt('own_ers', third.id)).toBe('2026-03-01T06:00:05Z');
    });

    test('NetBox sources: report 29 of two sources is two deliveries; each reads back its source; listings and repeat_after keep them apart', async () => {
      const parsed = makeReportDelivery(TYPED_REPORT_BODIES[0]);
      const ofSource = (source: string): NewDelivery => ({
        ...parsed,
        source,
        dedupKey: buildDedupKey(parsed.report!.id, parsed.report!.created, source),
      });
      const first = await store.insertDelivery(parsed);
      const lab = await store.insertDelivery(ofSource('lab'));
      expect(lab.duplicate).toBe(false);
      expect(lab.id).not.toBe(first.id);
      expect((await store.insertDelivery(ofSource('lab'))).duplicate).toBe(true);
      expect((await store.insertDelivery(parsed)).duplicate).toBe(true);

      const other = await open();
      expect((await other.getDelivery(first.id))!).toMatchObject({ source: 'default' });
      expect((await other.getDelivery(lab.id))!).toMatchObject({ source: 'lab', dedupKey: `lab/${parsed.dedupKey}` });
      expect((await other.listDeliveries({ netboxSource: 'lab' })).map((r) => r.id)).toEqual([lab.id]);
      expect((await other.listDeliveries({ netboxSource: 'default' })).map((r) => r.id)).toEqual([first.id]);

      // repeat_after measures from the last mail of this route for this source, never another source's.
      const later = await store.insertDelivery({ ...ofSource('lab'), dedupKey: 'lab/later', reportCreated: '2099-01-01T00:00:00Z' });
      await recordPlan(store, first.id, [{ route: 'on-call', position: 0, outcome: 'send', reason: 'x', reminder: false }], T0);
      expect(await store.lastRouteMailCompletedAt('on-call', later.id)).toBeNull();
      await recordPlan(store, lab.id, [{ route: 'on-call', position: 0, outcome: 'send', reason: 'x', reminder: false }], T0);
      expect(await store.lastRouteMailCompletedAt('on-call', later.id)).toBe(parsed.completedAt);
    });

    test('each NetBox source has its own watchdog state and its own last report', async () => {
      const lab = makeDelivery(8, { dedupKey: 'lab/8@x', source: 'lab', receivedAt: T0 + 8 });
      expect(await store.getWatchdogState(T0, 'lab')).toEqual({ state: 'ok', since: null, createdAt: T0, changedAt: T0, version: 0 });
      const alert = makeDelivery(9, {
        dedupKey: `watchdog:lab/overdue@${T0}`,
        kind: 'watchdog',
        reportId: 0,
        sender: 'watchdog',
        source: 'lab',
      });
      const moved = await store.transitionWatchdog({ expectedVersion: 0, state: 'overdue', since: T0, now: T0 + 10, alert, source: 'lab' });
      expect(moved.won).toBe(true);
      const other = await open();
      expect(await other.getWatchdogState(T0 + 20, 'lab')).toMatchObject({ state: 'overdue', version: 1 });
      expect(await other.getWatchdogState(T0 + 20)).toMatchObject({ state: 'ok', version: 0, createdAt: T0 + 20 });
      expect((await other.getDelivery(moved.alertId!))!.source).toBe('lab');
      await store.insertDelivery(makeDelivery(7));
      await store.insertDelivery(lab);
      expect(await other.lastReportReceivedAt()).toBe(T0 + 7);
      expect(await other.lastReportReceivedAt('lab')).toBe(T0 + 8);
      expect(await other.lastReportReceivedAt('prod')).toBeNull();
    });

    test('a report reads back with the typed fields the webhook parsed, from get, list and claim alike', async () => {
      const ids: number[] = [];
      for (const body of TYPED_REPORT_BODIES) ids.push((await store.insertDelivery(makeReportDelivery(body))).id);
      const other = await open();
      const expected = TYPED_REPORT_BODIES.map(expectedStored);
      expect(expected[0].report!.custom_fields).toMatchObject({ nested: { none: null } });
      expect(expected[1].report).toMatchObject({ custom_fields: null, url: '/api/plugins/validity/reports/42/' });
      expect(expected[1].report).not.toHaveProperty('display');
      expect(expected[1].triggeredBy).toBeUndefined();

      const byId = (records: DeliveryRecord[]) => ids.map((id) => storedReportOf(records.find((r) => r.id === id)!));
      expect(await Promise.all(ids.map(async (id) => storedReportOf((await other.getDelivery(id))!)))).toEqual(expected);
      expect(byId(await other.listDeliveries())).toEqual(expected);
      const claimed = await store.claimDue({ now: T0 + 100, limit: 10, owner: 'a', leaseMs: 1000 });
      expect(byId(claimed)).toEqual(expected);
      // The raw body stays, byte for byte, for audit and preview.
      expect(claimed.map((c) => c.body!.equals(TYPED_REPORT_BODIES[ids.indexOf(c.id)]))).toEqual([true, true]);
    });

    test("a row without typed fields (stored before them, or the watchdog's own) reads report: null", async () => {
      const { id } = await store.insertDelivery(makeDelivery(1));
      const alert = makeDelivery(2, { dedupKey: `watchdog:overdue@${T0}`, kind: 'watchdog', reportId: 0, sender: 'watchdog' });
      const { alertId } = await store.transitionWatchdog({
        expectedVersion: (await store.getWatchdogState(T0)).version,
        state: 'overdue',
        since: T0,
        now: T0 + 1,
        alert,
      });
      expect((await store.getDelivery(id))!.report).toBeNull();
      expect((await store.listDeliveries()).map((r) => [r.id, r.report])).toEqual([
        [alertId, null],
        [id, null],
      ]);
      expect((await store.claimDue({ now: T0 + 100, limit: 10, owner: 'a', leaseMs: 1000 })).map((r) => r.report)).toEqual([null, null]);
    });

    test(`upgrading from 0.1.0 (schema version ${RELEASE_0_1_0_SCHEMA}): every later migration applies, and every delivery reads back with its key`, async () => {
      const legacyBacking = await createBacking();
      const rows = [makeDelivery(1, { body: TYPED_REPORT_BODIES[1] }), makeDelivery(2)];
      await legacyBacking.seedSchema(RELEASE_0_1_0_SCHEMA, rows);
      try {
        const upgraded = await legacyBacking.open();
        try {
          const report = await upgraded.migrate();
          expect(report.applied.filter((name) => Number.parseInt(name, 10) <= RELEASE_0_1_0_SCHEMA)).toEqual([]);
          expect(report.version).toBeGreaterThanOrEqual(RELEASE_0_1_0_SCHEMA);
          const kept = (await upgraded.listDeliveries()).sort((a, b) => a.id - b.id);
          expect(kept.map((d) => [d.dedupKey, d.reportId, d.state, d.source])).toEqual(
            rows.map((r) => [r.dedupKey, r.reportId, 'queued', 'default']),
          );
          for (const [i, d] of kept.entries()) expect((await upgraded.getDeliveryBody(d.id))!.equals(rows[i].body)).toBe(true);
          // Posted again after the upgrade, a report kept by 0.1.0 is a duplicate: the dedup keys kept their form.
          expect(await upgraded.insertDelivery(rows[0])).toMatchObject({ id: kept[0].id, duplicate: true });
        } finally {
          await upgraded.close();
        }
      } finally {
        await legacyBacking.cleanup();
      }
    });

    test('migration 6 applies to a database of schema version 5: its rows read report: null, new ones keep their fields', async () => {
      const legacyBacking = await createBacking();
      const old = makeDelivery(1, { body: TYPED_REPORT_BODIES[1] });
      await legacyBacking.seedSchema(5, [old]);
      try {
        const upgraded = await legacyBacking.open();
        try {
          const report = await upgraded.migrate();
          expect(report.applied).toEqual([
            '006-delivery_report_fields',
            '007-sent_messages_per_route',
            '008-delivery_list_indexes',
            '009-netbox_sources',
            '010-digest_periods',
            '011-route_mail_owner_groups',
            '012-reports_failing_index',
            '013-waivers',
            '014-delivery_kind',
            '015-report_arrival',
            '016-report_pair_states',
            '017-catch_up',
          ]);
          expect(report.version).toBeGreaterThanOrEqual(6);
          const [before] = await upgraded.listDeliveries();
          expect(before).toMatchObject({ dedupKey: old.dedupKey, reportId: 1, state: 'queued', report: null, source: 'default' });
          expect((await upgraded.getDeliveryBody(before.id))!.equals(old.body)).toBe(true);

          const { id } = await upgraded.insertDelivery(makeReportDelivery(TYPED_REPORT_BODIES[0], T0 + 5));
          expect(storedReportOf((await upgraded.getDelivery(id))!)).toEqual(expectedStored(TYPED_REPORT_BODIES[0]));
          const claimed = await upgraded.claimDue({ now: T0 + 100, limit: 10, owner: 'a', leaseMs: 1000 });
          expect(claimed.map((c) => [c.id, c.report === null])).toEqual([
            [before.id, true],
            [id, false],
          ]);
        } finally {
          await upgraded.close();
        }
      } finally {
        await legacyBacking.cleanup();
      }
    });

    test('migration 7 keeps the mails kept per delivery readable, naming the route when only one was sent', async () => {
      const legacyBacking = await createBacking();
      const raw = (n: number) => Buffer.from(`Message-ID: <legacy-${n}@relay>\r\nSubject: report ${n}\r\n\r\nbody\r\n`);
      const sentRoute = (deliveryId: number, route: string, position: number) =>
        ({ deliveryId, route, position, state: 'sent', messageId: `<legacy-${deliveryId}-${route}@relay>` }) as const;
      await legacyBacking.seedSchema(6, [makeDelivery(1), makeDelivery(2)], {
        // Delivery 1 mailed one route; delivery 2 mailed two, of which the old table kept one copy.
        routeMails: [sentRoute(1, 'on-call', 0), sentRoute(2, 'on-call', 0), sentRoute(2, 'auditors', 1)],
        // Kept with its decoded parts beside the raw copy, as relays did then: those parts are what it shows.
        sentMessages: [
          {
            deliveryId: 1,
            raw: raw(1),
            envelopeTo: ['team1@example.com'],
            sentAt: T0 + 1,
            parts: { text: 'kept text', html: '<p>kept</p>' },
          },
          { deliveryId: 2, raw: raw(2), envelopeTo: ['team2@example.com'], sentAt: T0 + 2 },
        ],
      });
      try {
        const upgraded = await legacyBacking.open();
        try {
          expect((await upgraded.migrate()).version).toBeGreaterThanOrEqual(7);
          const [one] = await upgraded.listSentMessages(1);
          expect(one).toMatchObject({
            route: 'on-call',
            messageId: '<legacy-1-on-call@relay>',
            envelopeTo: ['team1@example.com'],
            text: 'kept text',
            html: '<p>kept</p>',
          });
          expect(one.raw.equals(raw(1))).toBe(true);
          // Two routes were sent: which one the copy is cannot be told, so it is kept under no route.
          const two = await upgraded.listSentMessages(2);
          expect(two).toHaveLength(1);
          expect(two[0]).toMatchObject({ route: '', messageId: null, envelopeTo: ['team2@example.com'], sentAt: T0 + 2 });
          expect((await upgraded.getSentMessage(2, ''))!.raw.equals(raw(2))).toBe(true);
          // New sends of that delivery are kept per route, next to the old copy.
          await saveSentCopy(upgraded, 2, { ...two[0], route: 'auditors', messageId: '<new@relay>', sentAt: T0 + 9 });
          expect((await upgraded.listSentMessages(2)).map((m) => m.route)).toEqual(['', 'auditors']);
        } finally {
          await upgraded.close();
        }
      } finally {
        await legacyBacking.cleanup();
      }
    });

    test('close commits the inserts already accepted, then refuses new ones', async () => {
      const accepted = [1, 2, 3, 4, 5].map((n) => store.insertDelivery(makeDelivery(n)));
      await store.close();
      const results = await Promise.all(accepted);
      expect(results.every((r) => !r.duplicate)).toBe(true);
      await expect(store.insertDelivery(makeDelivery(6))).rejects.toBeInstanceOf(StorageUnavailableError);

      const reopened = await open();
      expect((await reopened.readQueue()).counts.queued).toBe(5);
    });
  });
}
