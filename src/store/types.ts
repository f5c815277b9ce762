import type { SeverityCounts } from '../report';
import type { ReportCursor, ReportPoint, ReportReadOptions, ReportSnapshot } from '../trend';
import type { ReportDelivery } from '../webhook';
import type { WaiverStorage } from '../waivers';

/** States of a delivery: queued → sending → sent, or → retrying → sending …, or → dead. */
export const DELIVERY_STATES = ['queued', 'sending', 'retrying', 'sent', 'dead'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** What a delivery is: a NetBox report, a route's digest of a period, or the watchdog's notice. It chooses the composer. */
export const DELIVERY_KINDS = ['report', 'digest', 'watchdog'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

/** How a report reached the relay: NetBox's webhook, or fetched from NetBox's list because its webhook never came. */
export const RECEIVED_VIA = ['webhook', 'catch-up'] as const;
export type ReceivedVia = (typeof RECEIVED_VIA)[number];

/** What the webhook stores, before the 2xx. */
export interface NewDelivery {
  /** Default `report`. */
  kind?: DeliveryKind;
  /** Default `webhook`. */
  receivedVia?: ReceivedVia;
  dedupKey: string;
  reportId: number;
  reportCreated: string;
  completedAt: string;
  /** Who sent it (the client address), shown as "NetBox" in listings. */
  source: string;
  /** The exact bytes NetBox sent, kept for audit and preview; readers use {@link report} instead. */
  body: Buffer;
  receivedAt: number;
  /** The NetBox source a record belongs to when it is not a report (a watchdog's alert); a report carries its own. */
  netboxSource?: string;
  /**
   * The report as the webhook parsed it ("parse once"), stored column by column so that
   * the worker and the dashboard never parse the body again. Absent for the watchdog's own records.
   */
  report?: ReportDelivery | null;
  /**
   * The report's series (see buildSourceSeriesKey): with `report`, its row in the report history is
   * written in the same transaction as the delivery, so that the next report of the series compares
   * with it before its own mail is composed. Absent: the row is written when its mail is composed.
   */
  series?: string;
}

export interface DeliveryRecord {
  id: number;
  kind: DeliveryKind;
  receivedVia: ReceivedVia;
  dedupKey: string;
  reportId: number;
  reportCreated: string;
  completedAt: string;
  source: string;
  state: DeliveryState;
  attempts: number;
  receivedAt: number;
  nextAttemptAt: number | null;
  lastError: string | null;
  lastErrorCode: string | null;
  messageId: string | null;
  sentAt: number | null;
  updatedAt: number;
  /** The NetBox source that posted it (`default` for the bare webhook path and for rows stored before sources). */
  netboxSource: string;
  /**
   * The report as parsed at ingest, read from its columns (no JSON parse, no validation). Null for a
   * row stored before migration 6 and for a record that is not a report (the watchdog's): readers
   * that need it fall back on the body there.
   */
  report: ReportDelivery | null;
}

export interface ClaimedDelivery extends DeliveryRecord {
  body: Buffer;
}

export interface InsertResult {
  id: number;
  duplicate: boolean;
}

/**
 * What a listing may be narrowed to (the dashboard's filters). Every filter is optional and they
 * combine with AND.
 */
interface DeliveryFilter {
  state?: DeliveryState;
  /** Only deliveries with a routing decision for this route (ROUTES_FILE name). */
  route?: string;
  reportId?: number;
  /** Received at or after this time (epoch ms). */
  receivedFrom?: number;
  /** Received before this time (epoch ms). */
  receivedBefore?: number;
  /**
   * A device or test name, or part of one: only deliveries whose report has a failing result on such
   * a device or test, as enrichment stored it with the report (`reports.failing`). Letters match
   * whatever their case as far as the engine's lower() folds them (ASCII on SQLite, Unicode on PostgreSQL).
   */
  search?: string;
}

/** A page of a listing: newest first, by keyset on the id (never by offset). */
export interface ListOptions extends DeliveryFilter {
  limit?: number;
  /** Only rows with an id below this one (the next, older page). */
  beforeId?: number;
  /** Only rows with an id above this one (the previous, newer page); still returned newest first. */
  afterId?: number;
  /** Only deliveries of this NetBox source. */
  netboxSource?: string;
}

/** The state of one route's mail for one delivery. */
export const ROUTE_MAIL_STATES = ['pending', 'sent', 'failed', 'suppressed', 'skipped'] as const;
export type RouteMailState = (typeof ROUTE_MAIL_STATES)[number];

/** A routing decision to record: `send` becomes a pending mail, the others are final. */
export interface NewRouteMail {
  /** The route's name; an owner group's mail is `<route>~<group key>` (`~` is never in a route name). */
  route: string;
  position: number;
  outcome: 'send' | 'suppressed' | 'skipped';
  reason: string;
  reminder: boolean;
  /** For a route mailing NetBox's contacts: the group resolved once and kept, so a retry sends exactly it. */
  ownerGroup?: OwnerGroupPlan | null;
}

/**
 * One owner group of a route's mail, as decided when the delivery was planned: who gets it, why, and
 * which devices' failures it holds. `whole` is the whole report to the fallback (NetBox could not
 * say who owns what; `note` says why).
 */
export interface OwnerGroupPlan {
  /** The route's name (the mail's template, subject and cc/bcc). */
  route: string;
  /** Stable within the delivery: `unowned`, `whole`, or `o-<hash of the recipients>`. */
  key: string;
  to: string[];
  /** "you are the primary owner contact of site fra1". */
  why: string;
  /** NetBox ids of the group's devices in this mail: its failing devices and its `fixedDevices`. */
  deviceIds: number[];
  /** The group's failing devices. */
  devices: string[];
  /**
   * The group's devices that failed in the previous report and fail nothing now: the group's trend
   * counts their fixes. Absent (plans recorded before): none.
   */
  fixedDevices?: string[];
  /** The group's results per severity; null when NetBox could not count them (the mail then shows failures only). */
  counts: SeverityCounts | null;
  /**
   * How many devices `counts` is over: every device NetBox lists for the group's objects (its sites,
   * tenants, devices), failing or not. Absent or null: over the failing devices alone.
   */
  ownedDevices?: number | null;
  whole: boolean;
  note: string | null;
}

export interface RouteMailRecord extends NewRouteMail {
  deliveryId: number;
  state: RouteMailState;
  messageId: string | null;
  /** The SMTP server's answer (or the .eml path) once sent. */
  response: string | null;
  lastError: string | null;
  lastErrorCode: string | null;
  sentAt: number | null;
  decidedAt: number;
  updatedAt: number;
}

/**
 * The durable outbox. Every method is async so that SQLite and PostgreSQL share one contract.
 * Errors that mean "storage cannot commit now" are thrown as {@link StorageUnavailableError}.
 */
/** A watchdog move to make (Store.transitionWatchdog): the version it was seen at, where it goes, and the alert it queues. */
export interface WatchdogTransition {
  expectedVersion: number;
  state: WatchdogStateName;
  since: number | null;
  now: number;
  alert: NewDelivery;
  /** The NetBox source whose watchdog moves (default: `default`). */
  source?: string;
}

/** A digest period to queue (Store.queueDigest): its route and bounds, and its outbox record, if it mails. */
export interface QueueDigestInput {
  route: string;
  periodStart: number;
  periodEnd: number;
  late: boolean;
  now: number;
  job: NewDelivery | null;
}

/** Whether this call queued the period (exactly one of several at once does), and its outbox record's id. */
export interface QueuedDigest {
  queued: boolean;
  deliveryId: number | null;
}

/** The waivers' methods ({@link WaiverStorage}) are part of it: accepted exceptions live beside the reports they waive. */
export interface Store extends WaiverStorage {
  /**
   * True when one process owns the store (SQLite): whatever is `sending` at boot was interrupted and is
   * released at once. False when replicas share it (PostgreSQL): leases of live replicas must stand,
   * and a dead replica's claims are taken over when their lease expires.
   */
  readonly singleOwner: boolean;
  /** Brings the schema up to date (idempotent; safe from several processes at once). */
  migrate(): Promise<MigrationReport>;
  /** Commits the delivery (or finds the one with the same key) before resolving. */
  insertDelivery(delivery: NewDelivery): Promise<InsertResult>;
  /**
   * Claims up to `limit` due deliveries, oldest first, for `leaseMs`: state becomes `sending` and
   * attempts grows by one. A claim whose lease expired (its owner died) is claimable again.
   */
  claimDue(options: { now: number; limit: number; owner: string; leaseMs: number }): Promise<ClaimedDelivery[]>;
  /**
   * Moves the lease of these deliveries to `now + leaseMs`, for those still `sending` under `owner`
   * (an outcome that is sent but not yet recorded must not be claimed and sent again). Leaves every
   * other row alone, and `updated_at` too (no state changes). Resolves with how many were extended.
   */
  extendLeases(options: { ids: number[]; owner: string; now: number; leaseMs: number }): Promise<number>;
  /** Releases every lease (a single-process store at boot: what was in flight when it died). */
  releaseLeases(now: number): Promise<number>;
  getDelivery(id: number): Promise<DeliveryRecord | undefined>;
  listDeliveries(options?: ListOptions): Promise<DeliveryRecord[]>;
  /** Puts a dead (or sent) delivery back in the queue, due now, with its attempts reset. */
  requeue(id: number, now: number): Promise<boolean>;
  requeueAllDead(now: number): Promise<number>;
  /**
   * Makes every retrying delivery due by `until` due `now` (an operator's "try now" while SMTP is
   * paused: the deliveries waiting for the pause's end go now, oldest first). Resolves with how many.
   */
  expediteRetries(options: { now: number; until: number }): Promise<number>;
  /**
   * Brings a retrying delivery's next attempt forward to `now` (its attempts and backoff stay as
   * they are). False when the delivery is not retrying (sent, dead, being sent, gone).
   */
  retryNow(id: number, now: number): Promise<boolean>;
  countByState(): Promise<Record<DeliveryState, number>>;
  /**
   * Deletes deliveries (row and stored body) in `state` whose last change is older than `before`
   * (epoch ms). Their idempotency keys go with them. Resolves with how many were deleted.
   */
  pruneDeliveries(options: { state: 'sent' | 'dead'; before: number }): Promise<number>;
  /** When the oldest delivery not yet sent nor dead was received (queue age, for /metrics), if any. */
  oldestPendingAt(): Promise<number | null>;
  /** When the next queued/retrying delivery is due, if any. */
  nextDueAt(): Promise<number | null>;
  /**
   * The report stored under a delivery's dedup key, if any: from its webhook on (counts, `pending` until its
   * mail is composed, `arrivedLate`), with its failing set once composed.
   */
  findReport(dedupKey: string): Promise<ReportSnapshot | undefined>;
  /** {@link findReport} for several keys in one read (a batch's reports); a key with no report is left out. */
  findReports(dedupKeys: readonly string[]): Promise<ReportSnapshot[]>;
  /**
   * The newest report of `series` strictly before (createdMs, reportId), ordered by creation time then id.
   * `failingIds: false` leaves the NetBox ids of its failing pairs unread (the pairs come without `ids`).
   */
  findReportBefore(series: string, before: ReportCursor, options?: ReportReadOptions): Promise<ReportSnapshot | undefined>;
  /**
   * The newest `limit` reports of `series` strictly before (createdMs, reportId), returned oldest first, without their
   * failing sets (the mail's trend chart plots counts; the sets are most of a row's weight).
   */
  listReportsBefore(series: string, before: ReportCursor, limit: number): Promise<ReportPoint[]>;
  /** When the newest compliance report delivery of a NetBox source (default: `default`) was received (watchdog records not counted), if any. */
  lastReportReceivedAt(source?: string): Promise<number | null>;
  /** The watchdog's shared state for a NetBox source (default: `default`), created (`ok`, version 0, created at `now`) on first use. */
  getWatchdogState(now: number, source?: string): Promise<WatchdogState>;
  /**
   * Compare-and-set: moves the watchdog to `state` only if its version is still `expectedVersion`,
   * and in the same transaction queues `alert` in the outbox. Of several replicas that saw the same
   * state, exactly one wins; the others get `won: false` and send nothing.
   */
  transitionWatchdog(input: WatchdogTransition): Promise<{ won: boolean; alertId?: number }>;
  /** The newest period recorded for a digest route (queued or, before its first run, passed over), if any. */
  lastDigestPeriod(route: string): Promise<DigestPeriod | undefined>;
  /**
   * Records a digest route's period once (route + period start, and route + period end, are unique) and,
   * in the same transaction, queues `job` in the outbox. Of several replicas (or a restart) that see
   * the same period due, exactly one queues it; the others get `queued: false`. `job` null records a
   * period without a mail (the one that ended before the route ever ran).
   */
  queueDigest(input: QueueDigestInput): Promise<QueuedDigest>;
  /** Recorded digest periods, newest end first (of one route, or of every route). */
  listDigestPeriods(options?: { route?: string; limit?: number }): Promise<DigestPeriod[]>;
  /** The exact bytes NetBox sent for a delivery (for the dashboard's report page and chart). */
  getDeliveryBody(id: number): Promise<Buffer | undefined>;
  /** The kept mail of one route of a delivery (`''`: a copy kept before routes were recorded with it). */
  getSentMessage(deliveryId: number, route: string): Promise<SentMessage | undefined>;
  /** Every kept mail of a delivery, one per route, in the order they were sent. */
  listSentMessages(deliveryId: number): Promise<SentMessage[]>;
  /**
   * Writes what one batch of attempts came to, in one transaction: each delivery's route plan (at its first
   * attempt; a plan another replica recorded first is kept), its route mails' states, the copies of the
   * mails the server accepted (the same bytes), its state, and the reports composed for the batch (the
   * trend's history). All of it lands or none: a batch refused is written again as a whole.
   *
   * A report replaces the one with the same dedup key (its row from the webhook, or a retried mail's);
   * whether it arrived late stays as recorded at its arrival. Failing sets older than the newest
   * {@link REPORT_FAILING_SETS_KEPT} of a series are dropped (set to unknown); counts stay.
   */
  settleBatch(batch: SettledBatch): Promise<void>;
  /** The route mails of these deliveries, by delivery then route position. */
  listRouteMails(deliveryIds: number[]): Promise<RouteMailRecord[]>;
  /**
   * The completion time of the newest report created before this delivery's that was mailed (or is
   * being mailed) on the route: what `repeat_after` measures from.
   */
  lastRouteMailCompletedAt(route: string, deliveryId: number): Promise<string | null>;
  /**
   * Takes the catch-up lease of a NetBox source until `now + leaseMs` in one statement, if no other owner
   * holds it unexpired; resolves with what the source's catch-up knows, or undefined when another holds it.
   */
  takeCatchUpLease(input: { source: string; owner: string; now: number; leaseMs: number }): Promise<CatchUpState | undefined>;
  /**
   * Releases the lease `owner` holds; with `seen`, the catch-up succeeded: the newest report seen moves
   * there and the success is recorded. Nothing changes when the lease is no longer `owner`'s.
   */
  finishCatchUp(input: { source: string; owner: string; now: number; seen?: ReportCursor }): Promise<void>;
  /** What the source's catch-up knows (for the metrics), if it ever ran. */
  getCatchUpState(source: string): Promise<CatchUpState | undefined>;
  /** The report of the highest NetBox id the outbox holds for a source (webhooks count as seen), if any. */
  newestStoredReport(source: string): Promise<{ reportId: number; created: string } | undefined>;
  /** The NetBox ids of a source's reports the outbox holds with `afterId < id <= uptoId`, in no particular order. */
  listStoredReportIds(source: string, afterId: number, uptoId: number): Promise<number[]>;
  /** Of these dedup keys, those of a delivery or of a report in the trend's history (kept after retention prunes its delivery). */
  findKnownKeys(keys: readonly string[]): Promise<string[]>;
  /** Proves the store can commit (for readiness checks). */
  checkWritable(now: number): Promise<void>;
  close(): Promise<void>;
}

/** What one attempt at a delivery came to, as the settle stage writes it. */
export interface DeliverySettlement {
  id: number;
  /** The route decisions made at this attempt (its first); absent when they were recorded before. */
  plan?: NewRouteMail[];
  /** The route mails tried in this attempt. */
  routes: RouteMailOutcome[];
  /** The copies of the mails the server accepted in this attempt. */
  sent: SentMessage[];
  state: DeliveryStateChange;
}

/** A route mail's outcome: sent, failed for good, or failed for now (`pending`, tried again with the delivery). */
export type RouteMailOutcome =
  | { route: string; state: 'sent'; messageId: string; response: string }
  | { route: string; state: 'failed' | 'pending'; error: string; code: string };

/** Where a delivery goes after an attempt. */
export type DeliveryStateChange =
  | { state: 'sent'; messageId: string }
  | { state: 'retrying'; nextAttemptAt: number; error: string; code: string }
  | { state: 'dead'; error: string; code: string };

export interface SettledBatch {
  now: number;
  deliveries: DeliverySettlement[];
  /** The report snapshots composed in this batch (the trend's history), whatever their deliveries came to. */
  reports: ReportSnapshot[];
}

/** A NetBox source's catch-up, as the store keeps it. */
export interface CatchUpState {
  /** The newest report seen (by creation time, then id); `reportId` 0: NetBox had none. Null before the first catch-up. */
  seen: ReportCursor | null;
  /** When a catch-up of this source last succeeded (epoch ms), by any relay sharing the store. */
  succeededAt: number | null;
}

/** What {@link Store.migrate} did: the migrations applied now (empty when up to date) and the schema version. */
export interface MigrationReport {
  applied: string[];
  version: number;
}

/** Failing sets kept per series; the streak walk ("failing since") never looks further back. */
export const REPORT_FAILING_SETS_KEPT = 100;

/** The mail as it left for one route of a delivery: the exact MIME bytes, where it went, and the server's answer. */
export interface SentMessage {
  /**
   * The route (ROUTES_FILE; `default` without one) whose mail this is; `''` for a copy kept before
   * migration 7 whose route cannot be told (its delivery mailed several routes).
   */
  route: string;
  /** The Message-ID it was sent with; null for a copy kept before migration 7 (then it is in `raw`). */
  messageId: string | null;
  /** RFC 5322 bytes exactly as handed to SMTP (or written as .eml); no Bcc header. */
  raw: Buffer;
  envelopeFrom: string;
  /** Every recipient of the SMTP envelope (To, Cc and Bcc). */
  envelopeTo: string[];
  subject: string;
  /** The rendered parts, for display (they are also inside `raw`, encoded). */
  text: string | null;
  html: string | null;
  /** The SMTP server's final answer, or where the .eml file was written. */
  response: string;
  sentAt: number;
}

export type WatchdogStateName = 'ok' | 'overdue';

/** Whether reports are overdue, shared by every replica through the store. */
export interface WatchdogState {
  state: WatchdogStateName;
  /** While overdue: the time of the last report (or of the watchdog's start) the silence is measured from. */
  since: number | null;
  /** When the watchdog first ran against this store: the baseline before any report arrived. */
  createdAt: number;
  changedAt: number;
  /** Grows by one with every transition (the compare-and-set token). */
  version: number;
}

/** Dedup keys of the digests' outbox records start with this: `digest:<route>@<period start ISO>`. */
export const DIGEST_KEY_PREFIX = 'digest:';

/** One period of a digest route, as the store keeps it. */
export interface DigestPeriod {
  route: string;
  /** Epoch ms; reports received at or after it, and before `periodEnd`, are in its digest. */
  periodStart: number;
  /** The schedule's tick that closed the period (epoch ms). */
  periodEnd: number;
  /** The outbox record of its mail; null for the period that ended before the route first ran (no mail). */
  deliveryId: number | null;
  /** Queued well after its tick (the relay was not running then): the mail says so. */
  late: boolean;
  queuedAt: number;
}

/** Dedup keys of the watchdog's own outbox records start with this (report keys are `<id>@<created>`). */
export const WATCHDOG_KEY_PREFIX = 'watchdog:';

/** The outbox could not commit (read-only, disk full, locked, connection lost): 503, retry later. */
export class StorageUnavailableError extends Error {
  readonly code: string;
  constructor(message: string, code: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageUnavailableError';
    this.code = code;
  }
}
