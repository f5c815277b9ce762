import type { OutgoingMail } from '../mail';
import { formatDateTime } from '../report';
import { WATCHDOG_KEY_PREFIX, type NewDelivery } from '../store';
import { buildNoticeMail, type NoticeLine, type WatchdogMailOptions } from './build-notice-mail';

/**
 * The catch-up's notice of missed reports it did not mail one by one (beyond the newest mailed) and of those NetBox
 * deleted before the relay could fetch them; stored as a watchdog record (same outbox, same recipients).
 */
export interface MissedReportsNotice {
  kind: 'missed';
  /** The named NetBox source; absent: the default source. */
  source?: string;
  detectedAt: number;
  /** How many missed reports this catch-up queued to be mailed one by one. */
  mailed: number;
  /** Missed reports not mailed (older than the newest mailed), oldest first, with their page in NetBox. */
  skipped: { id: number; created: string; link: string }[];
  /** Ids of missed reports NetBox no longer has (validity keeps the newest `store_reports`), ascending. */
  deleted: number[];
  /** Ids of missed reports whose fields fail the checks a webhook's report must pass (not mailed), ascending. */
  refused?: number[];
}

/** The JSON key that marks a body as the catch-up's notice (a NetBox body never has it). */
const MARK = 'compliance_relay_missed_reports';

/** The outbox record of a notice: its dedup key names the reports, so a catch-up run again queues the same notice once. */
export function buildMissedReportsRecord(notice: MissedReportsNotice): NewDelivery {
  const ids = [...notice.skipped.map((r) => r.id), ...notice.deleted, ...(notice.refused ?? [])].sort((a, b) => a - b);
  const at = new Date(notice.detectedAt).toISOString();
  return {
    kind: 'watchdog',
    dedupKey: `${WATCHDOG_KEY_PREFIX}${notice.source ? `${notice.source}/` : ''}missed@${ids[0]}-${ids.at(-1)}`,
    reportId: 0,
    reportCreated: at,
    completedAt: at,
    source: 'catch-up',
    body: Buffer.from(JSON.stringify({ [MARK]: notice }), 'utf8'),
    receivedAt: notice.detectedAt,
    ...(notice.source ? { netboxSource: notice.source } : {}),
  };
}

/** The notice in a stored body, or undefined when the body is something else. */
export function parseMissedReportsNotice(dedupKey: string, body: Buffer): MissedReportsNotice | undefined {
  if (!dedupKey.startsWith(WATCHDOG_KEY_PREFIX)) return undefined;
  try {
    const value = (JSON.parse(body.toString('utf8')) as Record<string, unknown>)[MARK] as MissedReportsNotice | undefined;
    return value?.kind === 'missed' ? value : undefined;
  } catch {
    return undefined;
  }
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
