import { buildMessageId, buildOutgoingMail, buildThreadId, type OutgoingMail, type Recipients, type Renderer } from '../mail';
import { buildDigestView, type DigestContent } from './build-digest-view';

/** The template set a digest route renders unless it names its own (`template`). */
export const DIGEST_TEMPLATE_SET = 'digest';

export interface DigestMailOptions {
  renderer: Renderer;
  from: string;
  recipients: Recipients;
  /** The outbox record's id and key make the Message-ID, stable across retries. */
  deliveryId: number;
  dedupKey: string;
  date: Date;
  template?: string;
  subject?: string;
}

/**
 * A digest's mail: the digest template set rendered with the period's view, marked automatic like
 * the report mails, and with X-Compliance-Digest naming the route for client-side filters.
 */
export async function buildDigestMail(content: DigestContent, options: DigestMailOptions): Promise<OutgoingMail> {
  const rendered = options.renderer.render(
    buildDigestView(content),
    options.template ?? DIGEST_TEMPLATE_SET,
    options.subject === undefined ? {} : { subject: options.subject },
  );
  return buildOutgoingMail({
    ...rendered,
    ...options.recipients,
    from: options.from,
    messageId: buildMessageId({
      deliveryId: options.deliveryId,
      reportId: null,
      dedupKey: options.dedupKey,
      from: options.from,
      route: content.route,
    }),
    date: options.date,
    // The route's digests stack in one conversation, as a route's reports do.
    threadId: buildThreadId({ from: options.from, route: content.route }),
    headers: {
      'X-Compliance-Digest': content.route,
      'X-Compliance-Digest-Period': `${new Date(content.periodStart).toISOString()}/${new Date(content.periodEnd).toISOString()}`,
      ...(content.late ? { 'X-Compliance-Digest-Late': 'true' } : {}),
    },
  });
}
