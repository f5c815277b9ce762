import { isUtf8 } from 'node:buffer';
import { z } from 'zod';
import { COUNT_FIELDS, readCounts, type CountField, type ReportCounts } from '../report';
import { RelayError, type ErrorCode, type ErrorIssue } from '../shared';
import { EnvelopeSchema, ReportSchema, type Envelope, type Report } from './envelope-schema';

/** A report delivery the relay will mail, parsed once at the door (nothing past the webhook reads the envelope). */
export interface ReportDelivery {
  kind: 'report';
  /** The report as NetBox sent it, without its counts (they are `counts`). */
  report: ReportFields;
  counts: ReportCounts;
  /** Identity of the report: `data.id` with `data.created`, so two NetBox instances never collide. */
  dedupKey: string;
  /** Completion time (the envelope timestamp) as ISO 8601, or the report's creation time without one. */
  completedAt: string;
  /** Who ran the script: `username` (≤ 4.6) or `request.user` (≥ 4.6), when NetBox says. */
  triggeredBy?: string;
  /** The NetBox source it was posted by, by name (`default` for the bare webhook path). */
  source: string;
}

/** A report's fields past the webhook: its counts are one {@link ReportCounts}, not validity's flat fields. */
export type ReportFields = { [K in keyof Report as K extends CountField ? never : K]: Report[K] };

const COUNT_FIELD_NAMES: ReadonlySet<string> = new Set(COUNT_FIELDS);

/** The source configured from NETBOX_URL and WEBHOOK_* (the bare webhook path), and of rows stored before sources. */
export const DEFAULT_SOURCE_NAME = 'default';

/** A report's idempotency key: `<id>@<created>` as NetBox serializes them, `<source>/…` for a named source. */
export function buildDedupKey(reportId: number, created: string, source?: string): string {
  const key = `${reportId}@${created}`;
  return source === undefined || source === DEFAULT_SOURCE_NAME ? key : `${source}/${key}`;
}

/** An ignored delivery is a well-formed NetBox event the relay acknowledges but does not mail. */
type Delivery = ReportDelivery | { kind: 'ignored'; reason: string };

const REPORT_MODEL = 'compliancereport';
const REPORT_OBJECT_TYPE = 'validity.compliancereport';

/**
 * The raw body posted to `source`'s path as a typed delivery, or a {@link RelayError} listing every issue (BODY_NOT_UTF8,
 * BODY_NOT_JSON, ENVELOPE_INVALID, REPORT_INVALID). Call only after the signature was checked on these bytes.
 */
export function parseDelivery(body: Uint8Array, source: string = DEFAULT_SOURCE_NAME): Delivery {
  // isUtf8 checks in native code without building a string; toString then decodes once.
  if (!isUtf8(body)) throw new RelayError('BODY_NOT_UTF8');
  // A byte-order mark is dropped, as a UTF-8 decoder does by default.
  const bom = body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  const text = Buffer.from(body.buffer, body.byteOffset + bom, body.byteLength - bom).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new RelayError('BODY_NOT_JSON', { message: `The request body is not valid JSON: ${(cause as Error).message}` });
  }

  const envelope = EnvelopeSchema.safeParse(json);
  if (!envelope.success) {
    throw new RelayError('ENVELOPE_INVALID', { issues: toIssues(envelope.error) });
  }
  const env = envelope.data;
  const isReport = env.model === REPORT_MODEL || env.object_type === REPORT_OBJECT_TYPE;
  if (!isReport) {
    const what = env.object_type ?? env.model ?? 'an unnamed object type';
    return { kind: 'ignored', reason: `object type ${what} is not ${REPORT_OBJECT_TYPE}` };
  }
  if (env.event !== 'created') {
    return { kind: 'ignored', reason: `event "${env.event}" is not "created": only new reports are mailed` };
  }

  const report = ReportSchema.safeParse(env.data);
  if (!report.success) {
    throw new RelayError('REPORT_INVALID', { issues: toIssues(report.error, 'data') });
  }
  const data = report.data;
  return {
    kind: 'report',
    // The report's fields without its counts, and its counts.
    report: Object.fromEntries(Object.entries(data).filter(([key]) => !COUNT_FIELD_NAMES.has(key))) as ReportFields,
    counts: readCounts(data),
    // Report ids collide across NetBoxes: a named source's key carries the source.
    dedupKey: buildDedupKey(data.id, data.created, source),
    completedAt: normalizeTimestamp(env.timestamp) ?? normalizeTimestamp(data.created) ?? data.created,
    triggeredBy: triggeredBy(env),
    source,
  };
}

/** NetBox ≤ 3.6.5 writes `2023-04-12 19:36:37.739906+00:00`; later versions use ISO's `T`. */
export function normalizeTimestamp(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  const iso = value.replace(/^(\d{4}-\d{2}-\d{2}) /, '$1T');
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

function triggeredBy(env: Envelope): string | undefined {
  const user = env.request?.user;
  if (typeof user === 'string' && user) return user;
  if (user && typeof user === 'object' && user.username) return user.username;
  return env.username ?? undefined;
}

function toIssues(error: z.ZodError, prefix?: string): ErrorIssue[] {
  return error.issues.slice(0, 50).map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter(Boolean).join('.') || '(root)',
    message: issue.message,
  }));
}

/** What happened to one webhook request, for metrics and tests (the HTTP layer reports it, metrics count it). */
export type WebhookOutcome = (
  | { outcome: 'queued' | 'duplicate'; id: number; reportId: number }
  | { outcome: 'ignored'; reason: string }
  | { outcome: 'rejected'; code: ErrorCode }
) & {
  /** The NetBox source whose path was posted to (one of the configured names). */
  source: string;
};
