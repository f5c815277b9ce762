import type { BatchItem, RouteMail, Stage } from './compose-batch';

/** The send stage: claim order, `concurrency` at a time, mails in plan order; once paused, only the probe talks to the server. */
export async function sendBatch(stage: Stage, items: BatchItem[]): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++];
      for (const mail of item.mails) if (mail.mail) await sendRouteMail(stage, item, mail);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(stage.concurrency, items.length)) }, lane));
}

async function sendRouteMail(stage: Stage, item: BatchItem, mail: RouteMail): Promise<void> {
  const { policy, clock } = stage;
  if (item.deferredUntil !== undefined) return;
  if (policy.state !== 'closed' && !item.isProbe) {
    // Behind a send that paused the queue: what this delivery has not sent waits with the queue, untried.
    item.deferredUntil = Math.max(policy.openUntil, clock.now());
    return;
  }
  const answer = await stage.notifier.send(mail.mail!);
  const now = clock.now();
  if (!('failure' in answer)) {
    const { response, path } = answer;
    mail.accepted = { response, at: now };
    if (item.isProbe && policy.state !== 'closed') stage.logger.info('the mail server answers again: resuming deliveries, oldest first');
    policy.decide({ kind: 'sent' }, item.delivery.attempts, now);
    item.log.info(
      { route: mail.route, messageId: mail.mail!.messageId, response, ...(path ? { path } : {}) },
      path ? `mail written to ${path}` : 'mail sent',
    );
    return;
  }
  const { failure } = answer;
  mail.failure = failure;
  const wasClosed = policy.state === 'closed';
  // A delivery that got mails through in this attempt is not failing: its backoff starts over.
  const attempts = item.mails.some((m) => m.accepted) ? 1 : item.delivery.attempts;
  const next = policy.decide({ kind: 'failed', failure, deliveryId: item.delivery.id, isProbe: item.isProbe === true }, attempts, now);
  mail.next = next;
  if (next.next !== 'pause' && next.next !== 'held') return;
  // The delivery's other mails would fail the same way: they wait for the server with it.
  item.deferredUntil ??= next.until;
  if (wasClosed || item.isProbe)
    stage.logger.warn(
      { code: failure.code, error: policy.lastError?.message, pausedUntil: new Date(next.until).toISOString(), failures: policy.failures },
      failure.configProblem
        ? 'CONFIGURATION PROBLEM: no mail can be sent until it is fixed; pausing all deliveries (none is given up for it), then probing with the oldest'
        : failure.retryAfterMs !== undefined
          ? 'the mail server asked to slow down: pausing all deliveries until the time it gave, then going on with the oldest'
          : 'the mail server is unavailable: pausing all deliveries, then probing with the oldest',
    );
}
