import { createRetryDecider, type AttemptOutcome, type NextState, type RetryDecider } from '../../src/delivery';
import { buildFailureClass, FAILURE_CATALOGUE } from '../../src/notify';

const settings = { maxAttempts: 5, baseMs: 1_000, maxDelayMs: 8_000 };
const T0 = 100_000;

/** A failed send of delivery `deliveryId` (not the probe unless said). */
function failed(code: string, options: { deliveryId?: number; isProbe?: boolean; scope?: 'server' | 'message' } = {}): AttemptOutcome {
  const failure = { ...buildFailureClass(code, `${code} happened`, FAILURE_CATALOGUE), ...(options.scope ? { scope: options.scope } : {}) };
  return { kind: 'failed', failure, deliveryId: options.deliveryId ?? 1, isProbe: options.isProbe ?? false };
}

function notBuilt(code: string): AttemptOutcome {
  return { kind: 'not-built', failure: buildFailureClass(code, `${code} happened`, FAILURE_CATALOGUE) };
}

/** A policy whose jitter is the middle of every range. */
const decider = (): RetryDecider => createRetryDecider(settings, () => 0.5);

describe('the retry policy: the next state from (outcome, attempts, now)', () => {
  // Jitter 0.5: backoff after attempt n is floor(0.5 · min(8 s, 1 s · 2^(n-1))); a first pause is 750 ms.
  const table: [string, AttemptOutcome, number, NextState][] = [
    ['an accepted mail is sent', { kind: 'sent' }, 1, { next: 'sent' }],
    ["a message's 4xx retries it alone, with backoff", failed('SMTP_4XX'), 1, { next: 'backoff', at: T0 + 500 }],
    ['the backoff doubles with each attempt', failed('SMTP_4XX'), 3, { next: 'backoff', at: T0 + 2_000 }],
    ['and is capped', failed('SMTP_4XX'), 4, { next: 'backoff', at: T0 + 4_000 }],
    ['past the last attempt a transient failure is dead', failed('SMTP_4XX'), 5, { next: 'dead' }],
    ['a 5xx is dead at once', failed('SMTP_5XX'), 1, { next: 'dead' }],
    ['a refused password login holds the queue for the operator', failed('EAUTH'), 1, { next: 'held', until: T0 + 5_000 }],
    ['a refused connection pauses the queue', failed('ECONNREFUSED'), 1, { next: 'pause', until: T0 + 750 }],
    ['421 (a 4xx about the service) pauses the queue', failed('SMTP_4XX', { scope: 'server' }), 1, { next: 'pause', until: T0 + 750 }],
    ['an outage past the last attempt is dead', failed('ECONNREFUSED'), 5, { next: 'dead' }],
    // Held: the next probe waits at least five first delays (a login each), whatever the backoff says.
    ['a refused OAuth2 token is held for the operator', failed('OAUTH2_REFUSED'), 1, { next: 'held', until: T0 + 5_000 }],
    ['and never dead, even past the last attempt', failed('OAUTH2_REFUSED'), 99, { next: 'held', until: T0 + 5_000 }],
    ['Graph refusing the app the mailbox is held too', failed('GRAPH_ACCESS_DENIED'), 99, { next: 'held', until: T0 + 5_000 }],
    ['a login refused past the last attempt is still held', failed('EAUTH'), 99, { next: 'held', until: T0 + 5_000 }],
    ['no login configured, where the server wants one: held', failed('ENOAUTH'), 99, { next: 'held', until: T0 + 5_000 }],
    ['an untrusted certificate: held', failed('ETLS'), 99, { next: 'held', until: T0 + 5_000 }],
    ['a login without STARTTLS offered: held', failed('SMTP_TLS_REQUIRED'), 99, { next: 'held', until: T0 + 5_000 }],
    ['a template error is retried alone, never dead', notBuilt('TEMPLATE'), 99, { next: 'backoff', at: T0 + 4_000 }],
    ['a report that cannot be built is dead at once', notBuilt('RENDER'), 1, { next: 'dead' }],
  ];

  it.each(table)('%s', (_name, outcome, attempts, expected) => {
    expect(decider().decide(outcome, attempts, T0)).toEqual(expected);
  });

  it('a server that says when to come back is tried again then, plus a little jitter, however short or long, within the largest delay', () => {
    const throttled = (retryAfterMs: number) => ({
      ...failed('GRAPH_THROTTLED'),
      failure: { ...buildFailureClass('GRAPH_THROTTLED', '429', FAILURE_CATALOGUE), retryAfterMs },
    });
    // Jitter 0.5 of a second at most: 500 ms.
    expect(decider().decide(throttled(3_000), 1, T0)).toEqual({ next: 'pause', until: T0 + 3_500 });
    expect(decider().decide(throttled(100), 1, T0)).toEqual({ next: 'pause', until: T0 + 600 });
    expect(decider().decide(throttled(45_000), 1, T0)).toEqual({ next: 'pause', until: T0 + 8_000 + 500 });
    // However many probes it took: a throttle never makes a delivery dead.
    expect(decider().decide(throttled(3_000), 99, T0)).toEqual({ next: 'pause', until: T0 + 3_500 });
  });
});

describe('the retry policy: a throttled server is paced, not backed off', () => {
  const throttled = (retryAfterMs: number, isProbe: boolean) => ({
    kind: 'failed' as const,
    failure: {
      ...buildFailureClass('SMTP_4XX', '450 4.7.1 rate limit, try again in 3 seconds', FAILURE_CATALOGUE),
      scope: 'server' as const,
      retryAfterMs,
    },
    deliveryId: 1,
    isProbe,
  });

  it('each throttle waits what the server asked, not a growing backoff, and an accepted mail resumes at once', () => {
    const b = createRetryDecider({ maxAttempts: 48, baseMs: 60_000, maxDelayMs: 3_600_000 }, () => 0);
    const untils = [0, 10_000, 20_000, 30_000].map((now, i) => {
      const next = b.decide(throttled(3_000, i > 0), 1, now);
      b.claimed(1);
      return next.next === 'pause' ? next.until - now : undefined;
    });
    expect(untils).toEqual([3_000, 3_000, 3_000, 3_000]);
    expect(b.failures).toBe(0);
    expect(b.lastError?.code).toBe('SMTP_4XX');
    b.decide({ kind: 'sent' }, 1, 33_000);
    expect(b.state).toBe('closed');
    expect(b.capacity(33_000, 5)).toBe(5);
    // An outage after it starts at the first step of the backoff.
    expect(b.decide(failed('ECONNREFUSED'), 1, 40_000)).toEqual({ next: 'pause', until: 40_000 + 30_000 });
  });
});

describe('the retry policy: a queue held for an operator', () => {
  it('probes at most once per five first delays however often the probe is refused, and says it is held', () => {
    const b = createRetryDecider({ maxAttempts: 3, baseMs: 1_000, maxDelayMs: 8_000 }, () => 1);
    let now = 0;
    const probes: number[] = [];
    for (let n = 1; n <= 6; n += 1) {
      const next = b.decide(failed('EAUTH', { isProbe: n > 1 }), n, now);
      expect(next.next).toBe('held');
      expect(b).toMatchObject({ held: true, lastError: { code: 'EAUTH' } });
      now = b.openUntil;
      expect(b.capacity(now - 1, 5)).toBe(0);
      expect(b.capacity(now, 5)).toBe(1);
      b.claimed(1);
      probes.push(now);
    }
    const gaps = probes.slice(1).map((t, i) => t - probes[i]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(5_000);
    // The fix: the probe gets through, the queue flows.
    expect(b.decide({ kind: 'sent' }, 7, now)).toEqual({ next: 'sent' });
    expect(b).toMatchObject({ state: 'closed', held: false });
  });

  it('an outage is not held: a refused connection pauses without the hold', () => {
    const b = decider();
    b.decide(failed('ECONNREFUSED'), 1, T0);
    expect(b).toMatchObject({ state: 'open', held: false });
  });
});

describe('the retry policy: the pause (the circuit breaker as a policy)', () => {
  const top = () => createRetryDecider({ maxAttempts: 48, baseMs: 1_000, maxDelayMs: 8_000 }, () => 1);

  it('pauses the whole queue after a server failure, lets one probe through, and ends when it gets through', () => {
    const b = top();
    expect(b.capacity(0, 5)).toBe(5);
    expect(b.decide(failed('ECONNREFUSED'), 1, 100)).toEqual({ next: 'pause', until: 1_100 });
    // Sends already in flight that fail the same way do not lengthen the pause.
    expect(b.decide(failed('ECONNREFUSED', { deliveryId: 2 }), 1, 150)).toEqual({ next: 'pause', until: 1_100 });
    expect(b.capacity(1_099, 5)).toBe(0);
    expect(b.capacity(1_100, 5)).toBe(1);
    b.claimed(1);
    expect(b.state).toBe('probing');
    expect(b.capacity(5_000, 5)).toBe(0);
    // A 5xx proves the server reachable: the pause ends, that message is dead.
    expect(b.decide(failed('SMTP_5XX', { isProbe: true }), 1, 5_000)).toEqual({ next: 'dead' });
    expect(b.state).toBe('closed');
    expect(b.capacity(5_000, 5)).toBe(5);
  });

  it('backs off exponentially while probes fail, between half and all of the capped delay', () => {
    const pauses = (b: RetryDecider) =>
      [1, 2, 3, 4, 5].map((n) => {
        const next = b.decide(failed('ECONNREFUSED', { isProbe: n > 1 }), 1, 0);
        b.claimed(1);
        return next.next === 'pause' ? next.until : undefined;
      });
    expect(pauses(top())).toEqual([1_000, 2_000, 4_000, 8_000, 8_000]);
    expect(pauses(createRetryDecider({ maxAttempts: 48, baseMs: 1_000, maxDelayMs: 8_000 }, () => 0))).toEqual([
      500, 1_000, 2_000, 4_000, 4_000,
    ]);
  });

  it('a probe that finds nothing due, or ends without asking the server, lets the next claim probe at once', () => {
    const b = top();
    b.decide(failed('ECONNREFUSED'), 1, 0);
    b.claimed(0);
    expect(b.state).toBe('open');
    expect(b.capacity(2_000, 3)).toBe(1);
    b.claimed(1);
    b.probeEnded(1_500);
    expect(b.state).toBe('open');
    expect(b.capacity(1_500, 3)).toBe(1);
    // The failures so far still count: the next server failure pauses for the second step.
    b.claimed(1);
    expect(b.decide(failed('ECONNREFUSED', { isProbe: true }), 1, 1_600)).toEqual({ next: 'pause', until: 3_600 });
    b.probeEnded(1_700);
    expect(b.openUntil).toBe(3_600);
  });

  it("one message's 4xx retries that message alone; different deliveries deferred in a row pause the queue", () => {
    const b = top();
    const greylisted = (deliveryId: number) => failed('SMTP_4XX', { deliveryId });
    expect(b.decide(greylisted(1), 1, 0).next).toBe('backoff');
    // The same delivery again counts once: its own retries never pause the others.
    expect(b.decide(greylisted(1), 2, 10).next).toBe('backoff');
    expect(b.decide(greylisted(2), 1, 20).next).toBe('backoff');
    expect(b.state).toBe('closed');
    // An accepted mail between them starts the count again.
    b.decide({ kind: 'sent' }, 1, 25);
    expect(b.decide(greylisted(3), 1, 30).next).toBe('backoff');
    expect(b.decide(greylisted(4), 1, 40).next).toBe('backoff');
    expect(b.decide(greylisted(5), 1, 50)).toEqual({ next: 'pause', until: 1_050 });
    expect(b.state).toBe('open');
    expect(b.pausedSince).toBe(50);
    expect(b.lastError).toEqual({ code: 'SMTP_4XX', message: '3 different deliveries in a row answered 4xx; last: SMTP_4XX happened' });
  });

  it('a 4xx answer to the probe keeps the queue paused, with the next backoff step; an accepted mail ends it', () => {
    const b = top();
    b.decide(failed('ECONNREFUSED'), 1, 0);
    b.claimed(1);
    expect(b.decide(failed('SMTP_4XX', { deliveryId: 7, isProbe: true }), 1, 1_000)).toEqual({ next: 'pause', until: 3_000 });
    expect(b.state).toBe('open');
    expect(b.pausedSince).toBe(0);
    expect(b.lastError?.code).toBe('SMTP_4XX');
    b.claimed(1);
    b.decide({ kind: 'sent' }, 1, 3_000);
    expect(b).toMatchObject({ state: 'closed', openUntil: 0, failures: 0, pausedSince: null, lastError: null });
  });

  it('"try now" lets the probe through at once, keeps the backoff, and does nothing while closed or probing', () => {
    const b = top();
    expect(b.tryNow(0)).toBe(false);
    b.decide(failed('ECONNREFUSED'), 1, 0);
    expect(b.capacity(10, 3)).toBe(0);
    expect(b.tryNow(10)).toBe(true);
    expect(b.capacity(10, 3)).toBe(1);
    b.claimed(1);
    expect(b.tryNow(20)).toBe(false);
    expect(b.decide(failed('ECONNREFUSED', { isProbe: true }), 1, 30)).toEqual({ next: 'pause', until: 2_030 });
  });
});
