import type { ReportCounts, SeverityCounts } from '../report';
import { buildSourceSeriesKey, type ReportCursor, type ReportSnapshot } from '../trend';
import type { ReportDelivery, ReportFields } from '../webhook';

/** States of a delivery: queued → sending → sent, or → retrying → sending …, or → dead. */
export const DELIVERY_STATES = ['queued', 'sending', 'retrying', 'sent', 'dead'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export type DeliveryKind = 'report' | 'digest' | 'watchdog';

/** `catch-up`: fetched from NetBox's list because its webhook never came. */
export type ReceivedVia = 'webhook' | 'catch-up';

/** Stored before the 2xx: a report's delivery as the webhook parsed it, or an internal job's record (payload in `body`). */
export interface NewDelivery extends Omit<ReportDelivery, 'kind' | 'report' | 'counts' | 'source'> {
  kind?: DeliveryKind;
  /** The NetBox source, by name. */
  source?: string;
  receivedVia?: ReceivedVia;
  /** The client address, or what queued a record that is not NetBox's. */
  sender: string;
  /** The exact bytes received, kept for audit and preview. */
  body: Buffer;
  receivedAt: number;
  /** Null for an internal job's record (and for a row stored before migration 6: readers fall back on the body). */
  report?: ReportFields | null;
  counts?: ReportCounts | null;
  /** Without a report (a job's record): its own; a report's are `report.id` and `report.created`. */
  reportId?: number;
  reportCreated?: string;
  /** The report's series: its history row is written in the delivery's transaction. */
  series?: string;
}

/** A report to store (from the webhook or a catch-up), with its series so its history row is written with it. */
export function buildNewDelivery(
  delivery: ReportDelivery,
  arrival: Pick<NewDelivery, 'body' | 'sender' | 'receivedAt'> & { netboxUrl?: string },
): NewDelivery {
  const { netboxUrl, ...rest } = arrival;
  const series = buildSourceSeriesKey({ source: delivery.source, netboxUrl, reportUrl: delivery.report.url });
  return { ...delivery, ...rest, series };
}

/** A stored delivery, its defaults filled in; claimed, it carries its `body`. */
export type DeliveryRecord = Omit<NewDelivery, 'body' | 'series'> &
  Required<Pick<NewDelivery, 'kind' | 'source' | 'receivedVia' | 'reportId' | 'reportCreated' | 'report' | 'counts'>> & {
    id: number;
    state: DeliveryState;
    attempts: number;
    nextAttemptAt: number | null;
    lastError: string | null;
    lastErrorCode: string | null;
    messageId: string | null;
    sentAt: number | null;
    updatedAt: number;
    /** Only on a claimed delivery. */
    body?: Buffer;
  };

/** The delivery's report as the webhook parsed it (the record itself, narrowed), or null for a job or an old row. */
export function readReport(delivery: DeliveryRecord): (DeliveryRecord & ReportDelivery) | null {
  return delivery.report && delivery.counts ? (delivery as DeliveryRecord & ReportDelivery) : null;
}

export type InsertResult = { id: number; duplicate: boolean };

/** A page of a listing, newest first, by keyset on the id (never by offset); the filters combine with AND. */
export interface ListOptions {
  state?: DeliveryState;
  /** Only deliveries with a routing decision for this route. */
  route?: string;
  reportId?: number;
  receivedFrom?: number;
  receivedBefore?: number;
  /** Part of a failing device or test name; case folds as the engine's lower() does (ASCII on SQLite). */
  search?: string;
  limit?: number;
  beforeId?: number;
  /** The previous, newer page; still returned newest first. */
  afterId?: number;
  netboxSource?: string;
}

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

/** One owner group of a route's mail, as planned. `whole`: the whole report to the fallback (`note` says why). */
export interface OwnerGroupPlan {
  route: string;
  /** Stable within the delivery: `unowned`, `whole`, or `o-<hash of the recipients>`. */
  key: string;
  to: string[];
  why: string;
  /** NetBox ids of the group's failing devices and its `fixedDevices`. */
  deviceIds: number[];
  devices: string[];
  /** Devices that failed in the previous report and fail nothing now; absent in plans recorded before. */
  fixedDevices?: string[];
  /** Null when NetBox could not count them; `countsMissing` says why, for the mail. */
  counts: SeverityCounts | null;
  countsMissing?: string;
  /** Every device NetBox lists for the group's objects, failing or not; absent or null: the failing ones alone. */
  ownedDevices?: number | null;
  whole: boolean;
  note: string | null;
}

export interface RouteMailRecord extends NewRouteMail {
  deliveryId: number;
  state: 'pending' | 'sent' | 'failed' | 'suppressed' | 'skipped';
  messageId: string | null;
  /** The mail server's answer (or the .eml path). */
  response: string | null;
  lastError: string | null;
  lastErrorCode: string | null;
  sentAt: number | null;
  decidedAt: number;
  updatedAt: number;
}

export interface DeliverySettlement {
  id: number;
  /** The route decisions of its first attempt; absent when recorded before. */
  plan?: NewRouteMail[];
  routes: RouteMailOutcome[];
  sent: SentMessageCopy[];
  /** Absent: a slice of its mails, more to come; the delivery stays as it is. */
  state?: DeliveryStateChange;
}

/** `pending`: failed for now, tried again with the delivery. */
export type RouteMailOutcome =
  | { route: string; state: 'sent'; messageId: string; response: string }
  | { route: string; state: 'failed' | 'pending'; error: string; code: string };

export type DeliveryStateChange =
  | { state: 'sent'; messageId: string }
  | { state: 'retrying'; nextAttemptAt: number; error: string; code: string }
  | { state: 'dead'; error: string; code: string };

export interface SettledBatch {
  now: number;
  deliveries: DeliverySettlement[];
  /** The reports composed in this batch, whatever their deliveries came to. */
  reports: ReportSnapshot[];
}

export interface CatchUpState {
  /** The newest report seen; `reportId` 0: NetBox had none. Null before the first catch-up. */
  seen: ReportCursor | null;
  succeededAt: number | null;
}

/** Failing sets kept per series; the streak walk ("failing since") never looks further back. */
export const REPORT_FAILING_SETS_KEPT = 100;

/** The mail as it left for one route of a delivery, as it is kept: its bytes, not its parts again. */
export interface SentMessageCopy {
  /** `''` for a copy kept before migration 7 whose route cannot be told (its delivery mailed several routes). */
  route: string;
  messageId: string | null;
  /** RFC 5322 bytes exactly as handed to the mail transport (or written as .eml); no Bcc header. */
  raw: Buffer;
  envelopeFrom: string;
  envelopeTo: string[];
  subject: string;
  response: string;
  sentAt: number;
}

/** A kept mail as it is shown: with its decoded text and HTML parts, read from `raw`. */
export interface SentMessage extends SentMessageCopy {
  text: string | null;
  html: string | null;
}

/** Whether reports are overdue, shared by every replica through the store. */
export interface WatchdogState {
  state: 'ok' | 'overdue';
  /** While overdue: what the silence is measured from (the last report, or the watchdog's start). */
  since: number | null;
  /** When the watchdog first ran against this store: the baseline before any report arrived. */
  createdAt: number;
  changedAt: number;
  version: number;
}

/** Dedup keys of the digests' outbox records start with this: `digest:<route>@<period start ISO>`. */
export const DIGEST_KEY_PREFIX = 'digest:';

/** One period of a digest route: reports received in [periodStart, periodEnd). */
export interface DigestPeriod {
  route: string;
  periodStart: number;
  periodEnd: number;
  /** Null for the period that ended before the route first ran (no mail). */
  deliveryId: number | null;
  /** Queued well after its tick (the relay was not running then): the mail says so. */
  late: boolean;
  queuedAt: number;
}

/** Dedup keys of the watchdog's own outbox records start with this (report keys are `<id>@<created>`). */
export const WATCHDOG_KEY_PREFIX = 'watchdog:';

/** The outbox could not commit (read-only, disk full, locked, connection lost): 503, retry later. */
export class StorageUnavailableError extends Error {
  constructor(
    message: string,
    readonly code: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'StorageUnavailableError';
  }
}

/** An id as the store gives them (deliveries, waivers): digits only; anything else (a file waiver's `file:<n>`, a typo) names none. */
export function parseStoredId(id: string): number | undefined {
  const n = /^\d{1,15}$/.test(id) ? Number(id) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

export function storeClosedError(): StorageUnavailableError {
  return new StorageUnavailableError('the store is closed', 'STORE_CLOSED');
}
