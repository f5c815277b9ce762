import { startTestRelay, type TestRelay } from '../helpers/relay-harness';

/** A variable the relay no longer reads still starts the relay, and the start-up log says what replaced it. */
describe('a retired variable at start', () => {
  let relay: TestRelay | undefined;
  afterEach(async () => {
    await relay?.stop();
    relay = undefined;
  });

  it('logs one warning naming the variable and the fixed value now in force', async () => {
    relay = await startTestRelay({ GRAPH_CONCURRENCY: '8' });
    const warnings = relay.logs
      .map((l) => JSON.parse(l) as { level: number; msg: string; variable?: string })
      .filter((l) => l.level === 40);
    const retired = warnings.filter((l) => l.variable === 'GRAPH_CONCURRENCY');
    expect(retired).toHaveLength(1);
    expect(retired[0].msg).toBe(
      "GRAPH_CONCURRENCY is no longer read: Graph requests in flight are fixed at 4, Exchange Online's limit per app and mailbox; remove it",
    );
  });

  it('keeps the webhook rate limit per minute when the retired window is still set', async () => {
    relay = await startTestRelay({ WEBHOOK_RATE_LIMIT: '2', WEBHOOK_RATE_LIMIT_WINDOW_MS: '1000', TRUST_PROXY: 'loopback' });
    const warning = relay.logs
      .map((l) => JSON.parse(l) as { level: number; msg: string; variable?: string })
      .find((l) => l.level === 40 && l.variable === 'WEBHOOK_RATE_LIMIT_WINDOW_MS');
    expect(warning?.msg).toBe('WEBHOOK_RATE_LIMIT_WINDOW_MS is no longer read: WEBHOOK_RATE_LIMIT counts requests per minute; remove it');
    const post = () => fetch(relay!.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const statuses = [];
    for (let i = 0; i < 3; i += 1) statuses.push((await post()).status);
    expect(statuses[2]).toBe(429);
    expect(Number((await post()).headers.get('retry-after'))).toBeGreaterThan(1);
  });

  it('says nothing of the kind when none is set', async () => {
    relay = await startTestRelay({});
    expect(relay.logs.join('\n')).not.toContain('is no longer read');
  });
});
