/**
 * The load generator, in its own process so its CPU is not the server's: autocannon's programmatic
 * API on loopback, every request a distinct signed NetBox body. Driven over IPC:
 * `{ type: 'run', ... }` → `{ type: 'result', ... }`.
 */
import autocannon from 'autocannon';
import { createBodyFactory } from '../lib/webhook-bodies';
import type { LoadOptions, LoadResult } from '../lib/load';

process.on('message', (message: { type: string; options: LoadOptions }) => {
  if (message.type !== 'run') return;
  void runLoad(message.options).then(
    (result) => process.send!({ type: 'result', result }),
    (error: unknown) => process.send!({ type: 'result', error: String((error as Error)?.stack ?? error) }),
  );
});
process.send!({ type: 'ready' });

async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const bodies = createBodyFactory({ secret: options.secret, firstId: options.firstId });
  let sent = 0;
  const startedAt = Date.now();
  const result = await autocannon({
    url: options.url,
    method: 'POST',
    // autocannon refuses more connections than requests.
    connections: options.amount !== undefined ? Math.min(options.connections, options.amount) : options.connections,
    pipelining: 1,
    // autocannon rejects keys given as undefined: pass only the bounds that are set.
    ...(options.durationSeconds !== undefined ? { duration: options.durationSeconds } : {}),
    ...(options.amount !== undefined ? { amount: options.amount } : {}),
    ...(options.overallRate !== undefined ? { overallRate: options.overallRate } : {}),
    timeout: 10,
    headers: { 'content-type': 'application/json', 'user-agent': 'python-urllib3/2.2.3' },
    requests: [
      {
        setupRequest: (request) => {
          const next = bodies.next();
          sent += 1;
          return {
            ...request,
            body: next.body,
            headers: { ...request.headers, 'content-type': 'application/json', ...(next.signature ? { 'x-hook-signature': next.signature } : {}) },
          };
        },
      },
    ],
  });
  const statusCodes: Record<string, number> = {};
  let ok = 0;
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) {
    statusCodes[code] = stat.count ?? 0;
    if (code.startsWith('2')) ok += stat.count ?? 0;
  }
  return {
    ok,
    sent,
    durationSeconds: result.duration,
    okPerSecond: ok / result.duration,
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    latencyMaxMs: result.latency.max,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    bodyBytes: bodies.size,
    startedAt,
  };
}
