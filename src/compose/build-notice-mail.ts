import { buildMessageId, buildOutgoingMail, loadRenderer, type Recipients, type Renderer } from '../mail';
import { formatDateTime } from '../report';
import type { Clock } from '../shared';
import { parseJobDelivery, type DeliveryRecord, type InternalJob, type MissedReportsNotice, type WatchdogAlert } from '../store';
import { UnreadableDeliveryError, type ComposedNotice } from './report-composer';

/** A TEMPLATES_DIR without this set (copied before notices had templates) renders notices with the shipped one. */
export const NOTICE_TEMPLATE_SET = 'notice';

export type NoticeJob = Extract<InternalJob, { kind: 'watchdog' | 'missed' }>;

/** Composes the watchdog's and the catch-up's notices; the Message-ID is built from its route, so a retry keeps it. */
export function createNoticeComposer(options: {
  renderer: Renderer;
  from: string;
  recipients: Recipients;
  timezone: string;
  clock: Clock;
}) {
  // Loaded on the first notice, only for a TEMPLATES_DIR without the set.
  let shipped: Renderer | undefined;
  const renderer = () => (options.renderer.sets.includes(NOTICE_TEMPLATE_SET) ? options.renderer : (shipped ??= loadRenderer()));
  return async (delivery: DeliveryRecord): Promise<ComposedNotice> => {
    const job = parseJobDelivery(delivery.dedupKey, delivery.body!);
    if (job?.kind !== 'watchdog' && job?.kind !== 'missed')
      throw new UnreadableDeliveryError(`delivery ${delivery.id} is not a watchdog record`);
    const view = buildNoticeView(job, options.timezone);
    const { kind, source } = view.notice;
    const route = kind === 'missed' ? 'catch-up-missed' : `watchdog-${kind}`;
    const { from } = options;
    const message = await buildOutgoingMail({
      ...renderer().render(view, NOTICE_TEMPLATE_SET),
      ...options.recipients,
      from,
      messageId: buildMessageId({ deliveryId: delivery.id, reportId: 0, dedupKey: delivery.dedupKey, from, route }),
      date: new Date(options.clock.now()),
      headers: { 'X-Compliance-Watchdog': kind, ...(source ? { 'X-Compliance-Source': source } : {}) },
    });
    return { kind: 'notice', route: job.kind === 'missed' ? 'catch-up' : 'watchdog', message };
  };
}

/** One line of a notice and the link it ends with; an empty text is a blank line. */
type NoticeLine = { text: string; url: string | null };

/** The view of a notice mail (templates/README.md documents it). */
export function buildNoticeView(job: NoticeJob, timezone: string) {
  const { subject, lines, kind, source } =
    job.kind === 'missed' ? describeMissedReports(job.notice, timezone) : describeSilence(job.alert, timezone);
  return {
    notice: {
      kind,
      source: source ?? null,
      // A named source's notices say which NetBox they are about, as its reports do.
      defaultSubject: source ? `${source}: ${subject}` : subject,
      lines,
    },
  };
}

/** "12–14, 17": a run of consecutive ids as a range. */
function formatIdRanges(ids: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < ids.length;) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j] + 1) j += 1;
    parts.push(j === i ? String(ids[i]) : `${ids[i]}–${ids[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

function describeMissedReports(notice: MissedReportsNotice, timezone: string) {
  const from = notice.source ? ` of the NetBox source ${notice.source}` : '';
  const refused = notice.refused ?? [];
  const missed = notice.mailed + notice.skipped.length + notice.deleted.length + refused.length;
  const line = (text: string): NoticeLine => ({ text, url: null });
  const lines: NoticeLine[] = [
    line(
      `The relay found ${missed} compliance report${missed === 1 ? '' : 's'}${from} in NetBox whose webhook never reached it. ${notice.mailed} of them ${notice.mailed === 1 ? 'is' : 'are'} mailed one by one (the newest), each marked as fetched from NetBox.`,
    ),
  ];
  if (notice.skipped.length > 0) {
    lines.push(line(''), line('Not mailed (older than the ones mailed one by one), still in NetBox:'));
    for (const r of notice.skipped) lines.push({ text: `- report ${r.id}, created ${formatDateTime(r.created, timezone)}: `, url: r.link });
  }
  const paragraph = (text: string) => lines.push(line(''), line(text));
  if (notice.deleted.length > 0)
    paragraph(
      `No longer in NetBox when the relay asked (validity keeps only its newest reports), so not mailed: report ${formatIdRanges(notice.deleted)}.`,
    );
  if (refused.length > 0)
    paragraph(
      `Refused, so not mailed: report ${formatIdRanges(refused)} (its fields fail the checks a webhook's report must pass; the relay's log says which).`,
    );
  const subject = `${missed} compliance report${missed === 1 ? '' : 's'} missed while the relay was not told`;
  return { subject, lines, kind: 'missed', source: notice.source };
}

/** "1 day 3 hours", "5 hours 12 minutes", "40 minutes": the two largest units. */
function formatDuration(ms: number): string {
  const parts: string[] = [];
  let rest = Math.max(0, ms);
  for (const [name, size] of Object.entries({ day: 86_400_000, hour: 3_600_000, minute: 60_000 })) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || (parts.length === 0 && name === 'minute')) parts.push(`${n} ${name}${n === 1 ? '' : 's'}`);
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

function describeSilence(alert: WatchdogAlert, timezone: string) {
  const since = formatDateTime(new Date(alert.silentSince).toISOString(), timezone);
  const from = alert.source ? ` from the NetBox source ${alert.source}` : '';
  const notice = (subject: string, lines: string[]) => ({
    subject,
    lines: lines.map((text): NoticeLine => ({ text, url: null })),
    kind: alert.kind,
    source: alert.source,
  });
  // The catch-up listed NetBox's reports past half of the silence and found none newer: NetBox has none either.
  const netboxHasNone = alert.netboxCheckedAt != null && alert.netboxCheckedAt >= alert.silentSince + alert.expectEveryMs / 2;
  const checked = alert.netboxCheckedAt == null ? undefined : formatDateTime(new Date(alert.netboxCheckedAt).toISOString(), timezone);
  if (alert.kind === 'overdue')
    return notice(`No compliance report received since ${since}`, [
      `No compliance report${from} has reached the relay since ${since} (${formatDuration(alert.detectedAt - alert.silentSince)} ago).`,
      `One is expected at least every ${formatDuration(alert.expectEveryMs)} (${alert.source ? `expect_report_every of ${alert.source} in SOURCES_FILE` : 'EXPECT_REPORT_EVERY'}).`,
      '',
      netboxHasNone
        ? `NetBox had no newer report either when the relay last listed its reports, at ${checked} (catch-up): no webhook was lost, the tests did not run or did not succeed. Check:`
        : alert.netboxCheckedAt !== undefined
          ? `The relay has not listed NetBox's reports ${checked ? `since ${checked}` : 'yet'} (its catch-up fails: see the logs and compliance_relay_catch_up_failures_total), so it cannot tell whether NetBox has reports whose webhook was lost. Check:`
          : 'NetBox drops a webhook that fails without retrying it, so silence can mean a lost report. Check:',
      '- that the scheduled "Run Compliance Tests" still runs and succeeds in NetBox;',
      ...(netboxHasNone
        ? []
        : [
            '- that the webhook and its event rule exist and are enabled (compliance-relay netbox-setup --dry-run shows what differs);',
            "- NetBox's failed background jobs (Admin > Background Tasks > failed) for webhook errors;",
            "- the relay's logs and /metrics for rejected deliveries (a signature or secret mismatch, say).",
          ]),
      '',
      'You will get one more mail when reports arrive again.',
    ]);
  const resumedAt = alert.resumedAt ?? alert.detectedAt;
  const at = formatDateTime(new Date(resumedAt).toISOString(), timezone);
  return notice('Compliance reports are arriving again', [
    `A compliance report${from} arrived at ${at}, after ${formatDuration(resumedAt - alert.silentSince)} without one (the previous arrived at ${since}).`,
    alert.netboxCheckedAt !== undefined
      ? 'Its own mail follows separately. Reports NetBox created during the silence whose webhook never came are fetched from NetBox by the catch-up and mailed, each marked as such.'
      : 'Its own mail follows separately. Reports that NetBox could not deliver during the silence are not recovered: run the tests again in NetBox if you need them.',
  ]);
}
