import type { DeliveryKind, DeliveryRecord, RouteMailRecord, SentMessage, Store } from '../store';

/**
 * A delivery as the admin API and `deliveries --json` show it: times as ISO 8601 (UTC), never the
 * stored body. One shape for both, documented in docs/admin-api.md.
 */
export interface DeliveryJson {
  id: number;
  /** What is mailed: a NetBox `report`, a route's `digest`, or the `watchdog`'s notice. */
  kind: DeliveryKind;
  /** The idempotency key: `data.id@data.created`, prefixed `<source>/` for a named NetBox source. */
  dedupKey: string;
  reportId: number;
  reportCreated: string;
  completedAt: string;
  /** The client address that posted it (the NetBox instance, or the proxy in front). */
  source: string;
  /** The NetBox source whose webhook path it was posted to (`default`: the bare path). */
  netboxSource: string;
  /** `webhook`, or `catch-up` when the relay fetched the report from NetBox because its webhook never arrived. */
  receivedVia: DeliveryRecord['receivedVia'];
  state: DeliveryRecord['state'];
  attempts: number;
  receivedAt: string;
  nextAttemptAt: string | null;
  lastError: string | null;
  lastErrorCode: string | null;
  messageId: string | null;
  sentAt: string | null;
  updatedAt: string;
  /** What each route decided for this report: sent, suppressed by its notify policy (and why), pending, failed. */
  routes: DeliveryRouteJson[];
}

interface DeliveryRouteJson {
  route: string;
  /** The route's decision: `send`, `suppressed` (notify policy) or `skipped` (no match). */
  outcome: RouteMailRecord['outcome'];
  state: RouteMailRecord['state'];
  reason: string;
  /** A route mailing NetBox's contacts: this mail's owner group (who, why, which devices); absent otherwise. */
  owners?: { group: string; to: string[]; why: string; devices: string[]; note: string | null };
}

/** Maps a stored record to its JSON view; `mask` hides secret values that may sit in an error text. */
function buildDeliveryJson(
  record: DeliveryRecord,
  mask: (text: string) => string = (t) => t,
  routes: readonly RouteMailRecord[] = [],
): DeliveryJson {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: record.id,
    kind: record.kind,
    dedupKey: record.dedupKey,
    reportId: record.reportId,
    reportCreated: record.reportCreated,
    completedAt: record.completedAt,
    source: record.source,
    netboxSource: record.netboxSource,
    receivedVia: record.receivedVia,
    state: record.state,
    attempts: record.attempts,
    receivedAt: iso(record.receivedAt)!,
    nextAttemptAt: iso(record.nextAttemptAt),
    lastError: record.lastError === null ? null : mask(record.lastError),
    lastErrorCode: record.lastErrorCode,
    messageId: record.messageId,
    sentAt: iso(record.sentAt),
    updatedAt: iso(record.updatedAt)!,
    routes: routes
      .filter((r) => r.deliveryId === record.id)
      .sort((a, b) => a.position - b.position)
      .map((r) => ({
        route: r.route,
        outcome: r.outcome,
        state: r.state,
        reason: mask(r.reason),
        ...(r.ownerGroup
          ? {
              owners: {
                group: r.ownerGroup.key,
                to: r.ownerGroup.to,
                why: r.ownerGroup.why,
                devices: r.ownerGroup.devices,
                ...(r.ownerGroup.fixedDevices?.length ? { fixedDevices: r.ownerGroup.fixedDevices } : {}),
                note: r.ownerGroup.note,
              },
            }
          : {}),
      })),
  };
}

/** The JSON view of several records, each with its route decisions (read in one query). */
export async function buildDeliveriesJson(
  store: Pick<Store, 'listRouteMails'>,
  records: readonly DeliveryRecord[],
  mask: (text: string) => string,
): Promise<DeliveryJson[]> {
  const routes = records.length > 0 ? await store.listRouteMails(records.map((r) => r.id)) : [];
  return records.map((record) => buildDeliveryJson(record, mask, routes));
}

/**
 * One route's kept mail as `GET /api/deliveries/:id` shows it (every route's mail, not one
 * per delivery): where it went, its Message-ID, when, the server's answer, the rendered parts, and
 * where to download its exact bytes.
 */
export interface SentMailJson {
  /** The route whose mail it is; `""` for a copy kept before routes were recorded with it. */
  route: string;
  envelopeFrom: string;
  /** Every envelope recipient (To, Cc and Bcc). */
  recipients: string[];
  messageId: string | null;
  subject: string;
  sentAt: string;
  response: string;
  text: string | null;
  html: string | null;
  /** The exact bytes sent, as message/rfc822 (same bearer token). */
  eml: string;
}

/** The kept mails of a delivery, one per route, as the admin API shows them. */
export function buildSentMailsJson(deliveryId: number, messages: readonly SentMessage[], mask: (text: string) => string): SentMailJson[] {
  return messages.map((m) => ({
    route: m.route,
    envelopeFrom: m.envelopeFrom,
    recipients: [...m.envelopeTo],
    messageId: findMessageId(m),
    subject: m.subject,
    sentAt: new Date(m.sentAt).toISOString(),
    response: mask(m.response),
    text: m.text,
    html: m.html,
    eml: `/api/deliveries/${deliveryId}/message.eml?route=${encodeURIComponent(m.route)}`,
  }));
}

/** The Message-ID a kept mail was sent with: recorded with it, or (a copy kept before migration 7) read from its header. */
export function findMessageId(message: Pick<SentMessage, 'messageId' | 'raw'>): string | null {
  if (message.messageId) return message.messageId;
  const head = message.raw.subarray(0, 64 * 1024).toString('utf8');
  const end = head.search(/\r?\n\r?\n/);
  return /^Message-ID:[ \t]*(<[^>\r\n]{1,500}>)/im.exec(end === -1 ? head : head.slice(0, end))?.[1] ?? null;
}

/** The download name of a route's kept mail: `delivery-12-on-call.eml` (the route's name reduced to safe characters). */
export function buildEmlFileName(deliveryId: number, route: string): string {
  const safe = route.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
  return safe ? `delivery-${deliveryId}-${safe}.eml` : `delivery-${deliveryId}.eml`;
}
