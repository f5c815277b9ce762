import { buildDigestMail, UnreadableDeliveryError, type ComposedNotice } from '../compose';
import type { Renderer } from '../mail';
import type { Route } from '../routing';
import type { Clock, Logger } from '../shared';
import type { ClaimedDelivery } from '../store';
import { collectDigest, type DigestSources } from './collect-digest';
import { parseDigestJob } from './digest-job';

export interface DigestMailSettings extends DigestSources {
  renderer: Renderer;
  routes: readonly Route[];
  from: string;
  /** MAIL_TIMEZONE: the zone of a digest route without its own. */
  defaultTimezone: string;
  clock: Clock;
}

/**
 * The composer of digests: a digest job becomes its route's digest mail (gathered from the store when
 * it is composed, rendered with the route's digest template, sent to the route's recipients).
 */
export function createDigestComposer(settings: DigestMailSettings): (delivery: ClaimedDelivery, log?: Logger) => Promise<ComposedNotice> {
  return async (delivery) => {
    const job = parseDigestJob(delivery.dedupKey, delivery.body);
    if (!job) throw new UnreadableDeliveryError(`delivery ${delivery.id} is not a digest job`);
    const route = settings.routes.find((r) => r.name === job.route && r.digest);
    // A route removed (or no longer a digest) since the period was queued has no recipients to mail.
    if (!route) throw new UnreadableDeliveryError(`digest route ${job.route} is no longer in the routes file`);
    const content = await collectDigest(settings, route, job, route.digest!.timezone ?? settings.defaultTimezone);
    return {
      kind: 'notice',
      route: route.name,
      reason: `digest of ${new Date(job.periodStart).toISOString()} to ${new Date(job.periodEnd).toISOString()}${job.late ? ' (late)' : ''}`,
      message: await buildDigestMail(content, {
        renderer: settings.renderer,
        from: settings.from,
        recipients: { to: route.to, cc: route.cc, bcc: route.bcc, replyTo: route.reply_to },
        deliveryId: delivery.id,
        dedupKey: delivery.dedupKey,
        date: new Date(settings.clock.now()),
        template: route.template,
        subject: route.subject,
      }),
    };
  };
}
