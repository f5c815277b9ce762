import type { BatchItem } from '../delivery';
import { describeMailError, readFailureCode, type Notifier } from '../notify';
import { coalesceRuns, createRepeatingTask, type Clock, type FailureCatalogue, type Logger } from '../shared';

/** The latest word on whether mail can leave: from a connection check (`verify`) or a real delivery's outcome (`send`). */
interface TransportStatus {
  ok: boolean;
  source?: 'verify' | 'send';
  checkedAt?: number;
  code?: string;
  message?: string;
  nextCheckAt?: number;
}

export type TransportHealth = ReturnType<typeof createTransportHealth>;

/** Whether the mail transport can send, for /readyz: from each real send, and a periodic `verify()` between sends. */
export function createTransportHealth(options: {
  notifier: Notifier;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
  /** The relay's catalogue (its transports' codes and its own): a failed check's code is read with it. */
  failures: FailureCatalogue;
  /** The queue is held for an operator: its probe is the check, and a check's login more would count towards a lockout. */
  held?: () => boolean;
}) {
  let current: TransportStatus = { ok: true };

  const set = (next: TransportStatus) => {
    if (current.ok && !next.ok)
      options.logger.warn(
        { code: next.code, error: next.message, source: next.source },
        'mail transport check failing: deliveries wait in the outbox (/readyz stays 200 and names smtp as failing)',
      );
    if (!current.ok && next.ok) options.logger.info({ source: next.source }, 'mail transport check passing again');
    current = next;
  };

  /** What to change when a user can fix the failure (refused, DNS, TLS, certificate, login), else the error as it came. */
  const fail = (source: TransportStatus['source'], code: string, message: string) =>
    set({
      ok: false,
      source,
      checkedAt: options.clock.now(),
      code,
      message: describeMailError({ code, message }) ?? message.slice(0, 300),
    });

  // The notifier's verify: connect, TLS, login (or the .eml directory is writable).
  const check = coalesceRuns((): Promise<TransportStatus> =>
    options.notifier
      .verify()
      .then(
        () => set({ ok: true, source: 'verify', checkedAt: options.clock.now() }),
        (error: unknown) =>
          fail('verify', readFailureCode(error, options.failures), String((error as { message?: unknown } | null)?.message ?? error)),
      )
      .then(() => current),
  );

  let nextCheckAt: number | undefined;
  const checks = createRepeatingTask(() => {
    nextCheckAt = options.clock.now() + options.intervalMs;
    if (!options.held?.()) void check();
  }, options.intervalMs);
  return {
    status: (): TransportStatus => (nextCheckAt === undefined ? current : { ...current, nextCheckAt }),
    /** Sent → ok; a connection, TLS or login failure → failing. */
    record({ settled, failure }: Pick<BatchItem, 'settled' | 'failure'>): void {
      if (settled?.state === 'sent') {
        // Without a Message-ID every route held the report back: nothing was sent, so nothing is learnt about the transport.
        if (settled.messageId) set({ ok: true, source: 'send', checkedAt: options.clock.now() });
        return;
      }
      // The server answered about this message, or was never asked: nothing is learnt about reaching it.
      if (!failure || failure.serverReachable) return;
      fail('send', failure.code, failure.message);
    },
    check,
    /** Checks now and then every `intervalMs` (the timer does not keep the process alive). */
    start: checks.start,
    stop() {
      checks.stop();
      nextCheckAt = undefined;
    },
  };
}
