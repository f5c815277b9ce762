import { createCircuitBreaker } from '../../src/delivery';

describe('the SMTP circuit breaker', () => {
  const policy = { maxAttempts: 48, baseMs: 1_000, maxDelayMs: 8_000 };

  it('pauses the whole queue after a server failure, lets one probe through, and closes when it gets through', () => {
    const b = createCircuitBreaker(policy, () => 1);
    expect(b.capacity(0, 5)).toBe(5);
    expect(b.serverFailed(100, false)).toBe(1_100);
    // Sends already in flight that fail the same way do not lengthen the pause.
    expect(b.serverFailed(150, false)).toBe(1_100);
    expect(b.capacity(1_099, 5)).toBe(0);
    expect(b.capacity(1_100, 5)).toBe(1);
    b.claimed(1);
    expect(b.state).toBe('probing');
    expect(b.capacity(5_000, 5)).toBe(0);
    b.serverReached();
    expect(b.state).toBe('closed');
    expect(b.capacity(5_000, 5)).toBe(5);
  });

  it('backs off exponentially while probes fail, between half and all of the capped delay', () => {
    const high = createCircuitBreaker(policy, () => 1);
    const low = createCircuitBreaker(policy, () => 0);
    const pauses = (b: typeof high) =>
      [1, 2, 3, 4, 5].map((n) => {
        const until = b.serverFailed(0, n > 1);
        b.claimed(1);
        return until;
      });
    expect(pauses(high)).toEqual([1_000, 2_000, 4_000, 8_000, 8_000]);
    expect(pauses(low)).toEqual([500, 1_000, 2_000, 4_000, 4_000]);
  });

  it('a probe that finds nothing due leaves the breaker open for the next one', () => {
    const b = createCircuitBreaker(policy, () => 1);
    b.serverFailed(0, false);
    b.claimed(0);
    expect(b.state).toBe('open');
    expect(b.capacity(2_000, 3)).toBe(1);
  });

  it('a probe that ended without asking the server lets the next claim probe at once, keeping the backoff', () => {
    const b = createCircuitBreaker(policy, () => 1);
    b.serverFailed(0, false);
    b.claimed(1);
    b.probeEnded(1_500);
    expect(b.state).toBe('open');
    expect(b.capacity(1_500, 3)).toBe(1);
    // The failures so far still count: the next server failure pauses for the second step.
    b.claimed(1);
    expect(b.serverFailed(1_600, true)).toBe(3_600);
    // Closed or open (not probing), it changes nothing.
    b.probeEnded(1_700);
    expect(b.openUntil).toBe(3_600);
  });

  it("one message's 4xx retries that message alone; different deliveries deferred in a row pause the queue", () => {
    const b = createCircuitBreaker(policy, () => 1, 3);
    const cause = { code: 'SMTP_4XX', message: '451 greylisted' };
    expect(b.messageDeferred(0, 1, false, cause)).toBeUndefined();
    // The same delivery again counts once: its own retries never pause the others.
    expect(b.messageDeferred(10, 1, false, cause)).toBeUndefined();
    expect(b.messageDeferred(20, 2, false, cause)).toBeUndefined();
    expect(b.state).toBe('closed');
    expect(b.capacity(20, 5)).toBe(5);
    // An accepted mail between them starts the count again.
    b.mailAccepted();
    expect(b.messageDeferred(30, 3, false, cause)).toBeUndefined();
    expect(b.messageDeferred(40, 4, false, cause)).toBeUndefined();
    expect(b.messageDeferred(50, 5, false, cause)).toBe(1_050);
    expect(b.state).toBe('open');
    expect(b.pausedSince).toBe(50);
    expect(b.lastError).toEqual({ code: 'SMTP_4XX', message: '3 different deliveries in a row answered 4xx; last: 451 greylisted' });
  });

  it('a 4xx answer to the probe keeps the queue paused, with the next backoff step', () => {
    const b = createCircuitBreaker(policy, () => 1);
    b.serverFailed(0, false, { code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
    b.claimed(1);
    expect(b.messageDeferred(1_000, 7, true, { code: 'SMTP_4XX', message: '451 later' })).toBe(3_000);
    expect(b.state).toBe('open');
    expect(b.pausedSince).toBe(0);
    expect(b.lastError?.code).toBe('SMTP_4XX');
    b.claimed(1);
    b.mailAccepted();
    expect(b).toMatchObject({ state: 'closed', openUntil: 0, failures: 0, pausedSince: null, lastError: null });
  });

  it('"try now" lets the probe through at once, keeps the backoff, and does nothing while closed or probing', () => {
    const b = createCircuitBreaker(policy, () => 1);
    expect(b.tryNow(0)).toBe(false);
    b.serverFailed(0, false);
    expect(b.capacity(10, 3)).toBe(0);
    expect(b.tryNow(10)).toBe(true);
    expect(b.capacity(10, 3)).toBe(1);
    b.claimed(1);
    expect(b.tryNow(20)).toBe(false);
    expect(b.serverFailed(30, true)).toBe(2_030);
  });
});
