import type { Response } from 'express';
import type { SecretMask } from '../shared';
import type { DeliveryRecord, RouteMailRecord, SentMessage, Store } from '../store';

/** A delivery as the admin API and `deliveries --json` show it: ISO 8601 times, no body, what each route decided. */
export type DeliveryJson = ReturnType<typeof buildDeliveryJson>;

function buildDeliveryJson(record: DeliveryRecord, mask: SecretMask, routes: readonly RouteMailRecord[]) {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  const { body: _body, report: _report, counts: _counts, triggeredBy: _triggeredBy, sender, source, ...same } = record;
  return {
    ...same,
    source: sender,
    netboxSource: source,
    receivedAt: iso(record.receivedAt)!,
    nextAttemptAt: iso(record.nextAttemptAt),
    lastError: record.lastError === null ? null : mask(record.lastError),
    sentAt: iso(record.sentAt),
    updatedAt: iso(record.updatedAt)!,
    routes: routes
      .filter((r) => r.deliveryId === record.id)
      .sort((a, b) => a.position - b.position)
      .map(({ route, outcome, state, reason, ownerGroup: group }) => ({
        route,
        outcome,
        state,
        reason: mask(reason),
        ...(group
          ? {
              owners: {
                group: group.key,
                to: group.to,
                why: group.why,
                devices: group.devices,
                ...(group.fixedDevices?.length ? { fixedDevices: group.fixedDevices } : {}),
                note: group.note,
              },
            }
          : {}),
      })),
  };
}

/** The JSON view of several records, each with its route decisions (read in one query). */
export async function buildDeliveriesJson(store: Store, records: readonly DeliveryRecord[], mask: SecretMask): Promise<DeliveryJson[]> {
  const routes = records.length > 0 ? await store.listRouteMails(records.map((r) => r.id)) : [];
  return records.map((record) => buildDeliveryJson(record, mask, routes));
}

export function buildSentMailsJson(deliveryId: number, messages: readonly SentMessage[], mask: SecretMask) {
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
  return message.messageId ?? /^Message-ID:[ \t]*(<[^>\r\n]{1,500}>)/im.exec(readHeaderBlock(message.raw))?.[1] ?? null;
}

/** The header block of a raw message (everything before the first empty line, within its first 256 kB), with \n line ends. */
export function readHeaderBlock(raw: Buffer): string {
  const head = raw.subarray(0, 256 * 1024).toString('utf8');
  const end = head.search(/\r?\n\r?\n/);
  return (end === -1 ? head : head.slice(0, end)).replace(/\r\n/g, '\n');
}

/** The download name of a route's kept mail: `delivery-12-on-call.eml` (the route's name reduced to safe characters). */
export function buildEmlFileName(deliveryId: number, route: string): string {
  const safe = route.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80);
  return safe ? `delivery-${deliveryId}-${safe}.eml` : `delivery-${deliveryId}.eml`;
}

/** Sends a route's kept mail byte for byte, as a download (the admin API's and the dashboard's). */
export function sendKeptMail(res: Response, deliveryId: number, sent: SentMessage): void {
  res
    .set('Content-Disposition', `attachment; filename="${buildEmlFileName(deliveryId, sent.route)}"`)
    .type('message/rfc822')
    .send(sent.raw);
}
