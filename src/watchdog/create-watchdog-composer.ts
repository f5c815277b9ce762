import { UnreadableDeliveryError, type ComposedNotice } from '../compose';
import type { Clock, Logger } from '../shared';
import type { ClaimedDelivery } from '../store';
import type { Recipients } from '../mail';
import { buildWatchdogMail } from './build-watchdog-mail';
import { parseWatchdogAlert } from './watchdog-alert';
import { buildMissedReportsMail, parseMissedReportsNotice } from './missed-reports-notice';

/** The composer of the watchdog's records: each becomes the watchdog's mail ("no report since …") or the catch-up's notice of missed reports. */
export function createWatchdogComposer(options: {
  from: string;
  recipients: Recipients;
  timezone: string;
  clock: Clock;
}): (delivery: ClaimedDelivery, log?: Logger) => Promise<ComposedNotice> {
  return async (delivery) => {
    const mailOptions = {
      from: options.from,
      recipients: options.recipients,
      timezone: options.timezone,
      deliveryId: delivery.id,
      dedupKey: delivery.dedupKey,
      date: new Date(options.clock.now()),
    };
    const missed = parseMissedReportsNotice(delivery.dedupKey, delivery.body);
    if (missed) return { kind: 'notice', route: 'catch-up', message: await buildMissedReportsMail(missed, mailOptions) };
    const alert = parseWatchdogAlert(delivery.dedupKey, delivery.body);
    if (!alert) throw new UnreadableDeliveryError(`delivery ${delivery.id} is not a watchdog record`);
    return { kind: 'notice', route: 'watchdog', message: await buildWatchdogMail(alert, mailOptions) };
  };
}
