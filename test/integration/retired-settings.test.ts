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

  it('says nothing of the kind when none is set', async () => {
    relay = await startTestRelay({});
    expect(relay.logs.join('\n')).not.toContain('is no longer read');
  });
});
