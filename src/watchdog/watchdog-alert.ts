import type { OutgoingMail } from '../mail';
import { formatDateTime } from '../report';
import { buildJobDelivery, type NewDelivery, type WatchdogAlert } from '../store';
import { buildNoticeMail, type WatchdogMailOptions } from './build-notice-mail';

/** The outbox record for a watchdog mail: its dedup key names the silence, so two records for one silence collapse into one. */
export function buildWatchdogAlert(alert: WatchdogAlert): NewDelivery {
  const since = new Date(alert.silentSince).toISOString();
  return buildJobDelivery(
    { kind: 'watchdog', alert },
    {
      key: `${alert.source ? `${alert.source}/` : ''}${alert.kind}@${since}`,
      reportCreated: since,
      completedAt: new Date(alert.detectedAt).toISOString(),
      receivedAt: alert.detectedAt,
      netboxSource: alert.source,
    },
  );
}

/** "1 day 3 hours", "5 hours 12 minutes", "40 minutes": the two largest units. */
function formatDuration(ms: number): string {
  const units: [string, number][] = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
  ];
  const parts: string[] = [];
  let rest = Math.max(0, ms);
  for (const [name, size] of units) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0 || (parts.length === 0 && name === 'minute')) parts.push(`${n} ${name}${n === 1 ? '' : 's'}`);
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

/**
 * The catch-up listed NetBox's reports well into the silence (past half of it) and found none newer:
 * NetBox has none either. An older listing shows nothing about the rest of the silence.
 */
function netboxHasNone(alert: WatchdogAlert): boolean {
  return alert.netboxCheckedAt != null && alert.netboxCheckedAt >= alert.silentSince + alert.expectEveryMs / 2;
}

/** What the silence can mean, as far as the relay could check NetBox itself (the catch-up lists its reports). */
function describeNetboxCheck(alert: WatchdogAlert, timezone: string): string[] {
  const checked = alert.netboxCheckedAt == null ? undefined : formatDateTime(new Date(alert.netboxCheckedAt).toISOString(), timezone);
  if (netboxHasNone(alert))
    return [
      `NetBox had no newer report either when the relay last listed its reports, at ${checked} (catch-up): no webhook was lost, the tests did not run or did not succeed. Check:`,
    ];
  if (alert.netboxCheckedAt !== undefined)
    return [
      `The relay has not listed NetBox's reports ${checked ? `since ${checked}` : 'yet'} (its catch-up fails: see the logs and compliance_relay_catch_up_failures_total), so it cannot tell whether NetBox has reports whose webhook was lost. Check:`,
    ];
  return ['NetBox drops a webhook that fails without retrying it, so silence can mean a lost report. Check:'];
}

/** The watchdog's mail: "no compliance report received since …" when reports stop, "arriving again" when they resume. */
export function buildWatchdogMail(alert: WatchdogAlert, options: WatchdogMailOptions): Promise<OutgoingMail> {
  const since = formatDateTime(new Date(alert.silentSince).toISOString(), options.timezone);
  let subject: string;
  let lines: string[];
  const from = alert.source ? ` from the NetBox source ${alert.source}` : '';
  if (alert.kind === 'overdue') {
    subject = `No compliance report received since ${since}`;
    lines = [
      `No compliance report${from} has reached the relay since ${since} (${formatDuration(alert.detectedAt - alert.silentSince)} ago).`,
      `One is expected at least every ${formatDuration(alert.expectEveryMs)} (${alert.source ? `expect_report_every of ${alert.source} in SOURCES_FILE` : 'EXPECT_REPORT_EVERY'}).`,
      '',
      ...describeNetboxCheck(alert, options.timezone),
      '- that the scheduled "Run Compliance Tests" still runs and succeeds in NetBox;',
      ...(netboxHasNone(alert)
        ? []
        : [
            '- that the webhook and its event rule exist and are enabled (compliance-relay netbox-setup --dry-run shows what differs);',
            "- NetBox's failed background jobs (Admin > Background Tasks > failed) for webhook errors;",
            "- the relay's logs and /metrics for rejected deliveries (a signature or secret mismatch, say).",
          ]),
      '',
      'You will get one more mail when reports arrive again.',
    ];
  } else {
    const resumedAt = alert.resumedAt ?? alert.detectedAt;
    const at = formatDateTime(new Date(resumedAt).toISOString(), options.timezone);
    subject = 'Compliance reports are arriving again';
    lines = [
      `A compliance report${from} arrived at ${at}, after ${formatDuration(resumedAt - alert.silentSince)} without one (the previous arrived at ${since}).`,
      alert.netboxCheckedAt !== undefined
        ? 'Its own mail follows separately. Reports NetBox created during the silence whose webhook never came are fetched from NetBox by the catch-up and mailed, each marked as such.'
        : 'Its own mail follows separately. Reports that NetBox could not deliver during the silence are not recovered: run the tests again in NetBox if you need them.',
    ];
  }
  return buildNoticeMail(
    { subject, lines: lines.map((text) => ({ text })), route: `watchdog-${alert.kind}`, kind: alert.kind, source: alert.source },
    options,
  );
}
