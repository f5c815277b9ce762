import type { SendMailOptions } from 'nodemailer';
import type { Clock, Logger } from '../shared';
import { buildMessage, buildMessageId, buildReportView, type Recipients, type RenderPool, type Renderer } from '../mail';
import type { ReportInsights } from '../enrichment';
import type { ClaimedDelivery } from '../store';
import { parseDelivery, type ReportDelivery } from '../webhook';

/**
 * Turns a stored delivery into the mail to send. `log` is the worker's logger for this delivery
 * (bound to its deliveryId and attempt), for anything composing wants to say (enrichment, say).
 */
export type MailComposer = (delivery: ClaimedDelivery, log?: Logger) => Promise<SendMailOptions>;

export interface MailComposerOptions {
  renderer: Renderer;
  /** Renders off the event loop when given (`serve`); the result is the renderer's, errors included. */
  renderPool?: RenderPool;
  clock: Clock;
  from: string;
  recipients: Recipients;
  timezone: string;
  netboxUrl?: string;
  /** Failing results from NetBox, the trend and the CSV; never throws, bounded by its own budget. */
  /** `log` is bound to the delivery (deliveryId, attempt), so enrichment lines carry it. */
  insights?: (delivery: ReportDelivery, log?: Logger) => Promise<ReportInsights>;
}

/** A delivery whose stored bytes no longer parse (they did at ingest): permanent. */
export class UnreadableDeliveryError extends Error {
  readonly code = 'EUNREADABLE';
}

/**
 * Re-parses the stored bytes (the exact body NetBox sent), builds the view, renders the templates
 * and assembles the message. Message-ID comes from the delivery, Date from the injected clock.
 */
export function createMailComposer(options: MailComposerOptions): MailComposer {
  return async (delivery, log) => {
    const parsed = parseDelivery(delivery.body);
    if (parsed.kind !== 'report') throw new UnreadableDeliveryError(`delivery ${delivery.id} is not a report: ${parsed.reason}`);
    const insights = options.insights ? await options.insights(parsed, log) : undefined;
    const view = buildReportView(parsed, { netboxUrl: options.netboxUrl, timezone: options.timezone, enrichment: insights?.enrichment, trend: insights?.trend });
    const rendered = options.renderPool ? await options.renderPool.render(view) : options.renderer.render(view);
    return buildMessage({
      rendered,
      from: options.from,
      recipients: options.recipients,
      messageId: buildMessageId({ deliveryId: delivery.id, reportId: delivery.reportId, dedupKey: delivery.dedupKey, from: options.from }),
      date: new Date(options.clock.now()),
      headers: {
        'X-Compliance-Report-Id': String(parsed.report.id),
        'X-Compliance-Pass-Percent': view.overall.percent === null ? 'none' : view.overall.percent.toFixed(1),
        'X-Compliance-High-Failed': String(view.highFailed),
      },
      attachments: insights?.attachments.length ? insights.attachments : undefined,
    });
  };
}
