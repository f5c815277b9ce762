import type { OutgoingMail } from '../mail';
import { formatDateTime } from '../report';
import { buildJobDelivery, type MissedReportsNotice, type NewDelivery } from '../store';
import { buildNoticeMail, type NoticeLine, type WatchdogMailOptions } from './build-notice-mail';

/** The outbox record of a notice: its dedup key names the reports, so a catch-up run again queues the same notice once. */
export function buildMissedReportsRecord(notice: MissedReportsNotice): NewDelivery {
  const ids = [...notice.skipped.map((r) => r.id), ...notice.deleted, ...(notice.refused ?? [])].sort((a, b) => a - b);
  const at = new Date(notice.detectedAt).toISOString();
  const key = `${notice.source ? `${notice.source}/` : ''}missed@${ids[0]}-${ids.at(-1)}`;
  return buildJobDelivery(
    { kind: 'missed', notice },
    { key, reportCreated: at, completedAt: at, receivedAt: notice.detectedAt, netboxSource: notice.source },
  );
}

/** "report 12, 13, 17": ids, a run of consecutive ones shown as a range. */
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

/** The notice's mail: what was missed, which were not mailed (with links) and which NetBox had already deleted. */
export function buildMissedReportsMail(notice: MissedReportsNotice, options: WatchdogMailOptions): Promise<OutgoingMail> {
  const from = notice.source ? ` of the NetBox source ${notice.source}` : '';
  const refused = notice.refused ?? [];
  const missed = notice.mailed + notice.skipped.length + notice.deleted.length + refused.length;
  const lines: NoticeLine[] = [
    {
      text: `The relay found ${missed} compliance report${missed === 1 ? '' : 's'}${from} in NetBox whose webhook never reached it. ${notice.mailed} of them ${notice.mailed === 1 ? 'is' : 'are'} mailed one by one (the newest), each marked as fetched from NetBox.`,
    },
  ];
  if (notice.skipped.length > 0) {
    lines.push({ text: '' }, { text: 'Not mailed (older than the ones mailed one by one), still in NetBox:' });
    for (const r of notice.skipped)
      lines.push({ text: `- report ${r.id}, created ${formatDateTime(r.created, options.timezone)}: ${r.link}`, link: r.link });
  }
  const paragraph = (text: string) => lines.push({ text: '' }, { text });
  if (notice.deleted.length > 0)
    paragraph(
      `No longer in NetBox when the relay asked (validity keeps only its newest reports), so not mailed: report ${formatIdRanges(notice.deleted)}.`,
    );
  if (refused.length > 0)
    paragraph(
      `Refused, so not mailed: report ${formatIdRanges(refused)} (its fields fail the checks a webhook's report must pass; the relay's log says which).`,
    );
  const subject = `${missed} compliance report${missed === 1 ? '' : 's'} missed while the relay was not told`;
  return buildNoticeMail({ subject, lines, route: 'catch-up-missed', kind: 'missed', source: notice.source }, options);
}
