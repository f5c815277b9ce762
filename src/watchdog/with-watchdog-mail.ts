import type { DeliveryComposer } from '../compose';
import type { Clock } from '../shared';
import type { Recipients } from '../mail';
import { buildWatchdogMail } from './build-watchdog-mail';
import { parseWatchdogAlert } from './watchdog-alert';

/**
 * Wraps the report composer so the worker also sends the watchdog's records: a record with a
 * watchdog body becomes the watchdog mail, anything else goes to the report composer unchanged.
 */
export function withWatchdogMail(
  compose: DeliveryComposer,
  options: { from: string; recipients: Recipients; timezone: string; clock: Clock },
): DeliveryComposer {
  return async (delivery, log) => {
    const alert = parseWatchdogAlert(delivery.dedupKey, delivery.body);
    if (!alert) return compose(delivery, log);
    return {
      kind: 'notice',
      route: 'watchdog',
      message: await buildWatchdogMail(alert, {
        from: options.from,
        recipients: options.recipients,
        timezone: options.timezone,
        deliveryId: delivery.id,
        dedupKey: delivery.dedupKey,
        date: new Date(options.clock.now()),
      }),
    };
  };
}
