import { buildEmlFileName, findMessageId, readHeaderBlock } from '../http';
import { formatPercent, type ReportCounts } from '../report';
import { parseJobDelivery, type DeliveryRecord, type InternalJob, type RouteMailRecord, type SentMessage, type Store } from '../store';
import { parseDelivery, type ReportFields } from '../webhook';
import { CHART_SERIES } from './build-pass-chart';
import type { Page } from './render-page';

export type DeliveryContent =
  { kind: 'report'; report: ReportFields; counts: ReportCounts } | InternalJob | { kind: 'other'; reason: string };

/** What a delivery holds, from the typed fields parsed at ingest (no body read); only a record without them loads its body. */
export async function readDeliveryContent(record: DeliveryRecord, store: Pick<Store, 'getDeliveryBody'>): Promise<DeliveryContent> {
  if (record.report && record.counts) return { kind: 'report', report: record.report, counts: record.counts };
  const body = await store.getDeliveryBody(record.id);
  if (!body) return { kind: 'other', reason: 'the stored body is gone' };
  const job = parseJobDelivery(record.dedupKey, body);
  if (job) return job;
  try {
    const parsed = parseDelivery(body);
    return parsed.kind === 'report'
      ? { kind: 'report', report: parsed.report, counts: parsed.counts }
      : { kind: 'other', reason: parsed.reason };
  } catch (error) {
    return { kind: 'other', reason: (error as Error).message };
  }
}

/** The view of templates/dashboard/delivery.hbs: what a delivery holds, what happened, and the exact mail that was sent. */
export function buildDeliveryView(input: {
  page: Page;
  record: DeliveryRecord;
  content: DeliveryContent;
  sent: SentMessage[];
  reportLink?: string;
  routes?: RouteMailRecord[];
  /** Several NetBox sources: the page names the delivery's. */
  named?: boolean;
}) {
  const { page, record: d, content } = input;
  const { formatTime } = page;
  return {
    d,
    what: describeContent(content),
    reportLink: input.reportLink,
    source: input.named ? d.source : undefined,
    received: `${formatTime(d.receivedAt)} ${d.receivedVia === 'catch-up' ? 'fetched from NetBox by the catch-up: its webhook never arrived' : `from ${d.sender}`}`,
    nextAttempt: d.nextAttemptAt !== null && d.state !== 'sent' ? formatTime(d.nextAttemptAt) : undefined,
    sent: d.sentAt !== null ? formatTime(d.sentAt) : undefined,
    dead: d.state === 'dead',
    routes: input.routes?.map((r) => ({
      ...r,
      to: r.ownerGroup?.to.join(', '),
      devices: r.ownerGroup && `${describeGroupDevices(r.ownerGroup)}${r.ownerGroup.note ? ` — ${r.ownerGroup.note}` : ''}`,
    })),
    counts:
      content.kind === 'report'
        ? CHART_SERIES.map(({ key, name }) => {
            const { passed: p, count: c } = content.counts[key];
            return { name, passed: c === 0 ? '—' : `${p}/${c}`, percent: formatPercent(p, c) };
          })
        : undefined,
    alert:
      content.kind === 'watchdog'
        ? {
            kind: content.alert.kind,
            silentSince: formatTime(content.alert.silentSince),
            resumedAt: content.alert.resumedAt ? formatTime(content.alert.resumedAt) : undefined,
          }
        : undefined,
    mails: input.sent.map((m) => buildSentMailView(d.id, m, formatTime)),
    noMail: d.state === 'sent' ? 'This delivery was sent before the relay kept copies of sent mail.' : 'Not sent yet.',
  };
}

function buildSentMailView(deliveryId: number, m: SentMessage, formatTime: (ms: number) => string) {
  const headers = readHeaderBlock(m.raw);
  return {
    ...m,
    deliveryId,
    name: m.route === '' ? "route not recorded (kept before each route's mail was kept)" : m.route,
    envelopeTo: m.envelopeTo.join(', '),
    // The verdict the mail was sent with (decided once by the trend); notices have none.
    verdict: /^X-Compliance-Verdict:[ \t]*([a-z]+)/im.exec(headers)?.[1],
    messageId: findMessageId(m),
    sentAt: formatTime(m.sentAt),
    emlRoute: encodeURIComponent(m.route),
    emlName: buildEmlFileName(deliveryId, m.route),
    headers,
    srcdoc: m.html !== null ? `${SRCDOC_CSP}${m.html}` : undefined,
    textPart: m.text !== null ? { text: m.text } : undefined,
  };
}

/** Before the mail in its srcdoc: its own CSP, a second fence in case a browser does not apply the page's to srcdoc. */
const SRCDOC_CSP = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`;

function describeGroupDevices(group: { devices: string[]; fixedDevices?: string[] }): string {
  const fixed = group.fixedDevices?.length ? `fixed, failing nothing now: ${group.fixedDevices.join(', ')}` : '';
  const failing = group.devices.length ? `devices: ${group.devices.join(', ')}` : '';
  return [failing, fixed].filter((part) => part !== '').join('; ') || 'the whole report';
}

/** What a delivery holds in a line (templates/dashboard/what.hbs); muted when it cannot be read. */
export function describeContent(content: DeliveryContent): { text: string; muted?: true } {
  if (content.kind === 'report') {
    const { passed, count } = content.counts.overall;
    return { text: `Report ${content.report.id}: ${passed}/${count} passed (${formatPercent(passed, count)})` };
  }
  if (content.kind === 'watchdog')
    return { text: `Watchdog: ${content.alert.kind === 'overdue' ? 'no report received' : 'reports arriving again'}` };
  if (content.kind === 'missed') {
    const { notice } = content;
    return {
      text: `Catch-up notice: ${notice.skipped.length} missed report${notice.skipped.length === 1 ? '' : 's'} not mailed, ${notice.deleted.length} gone from NetBox`,
    };
  }
  if (content.kind === 'digest') {
    const { job } = content;
    return {
      text: `Digest ${job.route}: ${new Date(job.periodStart).toISOString()} to ${new Date(job.periodEnd).toISOString()}${job.late ? ' (late)' : ''}`,
    };
  }
  return { text: content.reason, muted: true };
}
