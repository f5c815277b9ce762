/**
 * The load generator, in its own process so its CPU is not the server's, every request a distinct
 * signed NetBox body. Driven over IPC: `{ type: 'run', ... }` → `{ type: 'result', ... }`.
 *
 * As fast as possible (throughput): autocannon's programmatic API on loopback. At a fixed rate
 * (`overallRate`, latency): a paced open-loop sender on node:http with keep-alive connections,
 * bodies signed before the clock starts, each request timed with performance.now(). autocannon's
 * own pacing sends in clumps and its histogram has 1 ms steps: at 200/s it showed a p99 of 12 ms
 * for a bare Express app answering 200, which hid what a server does in a few milliseconds.
 * On new connections (`newConnection`, as NetBox sends): a closed loop on node:http, one socket per request.
 */
import http from 'node:http';
import autocannon from 'autocannon';
import { readCpuMs } from '../lib/processes';
import { computePercentile } from '../lib/stats';
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
  const cpuBefore = options.cpuOfPid !== undefined ? readCpuMs(options.cpuOfPid) : undefined;
  const result = options.newConnection
    ? await runNewConnections(options)
    : options.overallRate !== undefined
      ? await runPaced(options, options.overallRate)
      : await runAutocannon(options);
  return cpuBefore === undefined ? result : { ...result, cpuMs: readCpuMs(options.cpuOfPid!) - cpuBefore };
}

async function runAutocannon(options: LoadOptions): Promise<LoadResult> {
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
            headers: {
              ...request.headers,
              'content-type': 'application/json',
              ...(next.signature ? { 'x-hook-signature': next.signature } : {}),
            },
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

/**
 * Open-loop pacing: request i leaves at start + i / rate whether or not earlier ones were answered
 * (a late answer does not delay the next request), over at most `connections` keep-alive sockets.
 * Latency is from handing the request to node:http to the end of the answer.
 */
async function runPaced(options: LoadOptions, rate: number): Promise<LoadResult> {
  const factory = createBodyFactory({ secret: options.secret, firstId: options.firstId });
  const total = Math.max(1, Math.min(options.amount ?? Number.POSITIVE_INFINITY, Math.round(rate * (options.durationSeconds ?? 10))));
  const prepared = Array.from({ length: total }, () => factory.next());
  const target = new URL(options.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.connections });
  const tally = createTally();
  let settled = 0;
  const startedAt = Date.now();
  const t0 = performance.now() + 20;
  const intervalMs = 1000 / rate;
  await new Promise<void>((resolve) => {
    const send = (item: (typeof prepared)[number]) =>
      postBody(target, item, agent, (outcome) => {
        tally.record(outcome);
        settled += 1;
        if (settled === total) resolve();
      });
    let next = 0;
    const tick = () => {
      const now = performance.now();
      while (next < total && t0 + next * intervalMs <= now) send(prepared[next++]);
      if (next < total) setTimeout(tick, Math.max(0, t0 + next * intervalMs - performance.now()));
    };
    setTimeout(tick, 20);
  });
  agent.destroy();
  return summarize({ ...tally, sent: total, bodyBytes: factory.size, startedAt });
}

/**
 * Closed loop, one TCP connection per request: `connections` senders, each POSTs the next signed body on a
 * socket of its own (no agent, `Connection: close`: the server closes it once it has answered), waits for
 * the answer, then sends the next, until the duration or the count is reached (requests in flight then are
 * still awaited and counted). Latency is from handing the request to node:http, connect included, to the
 * end of the answer.
 */
async function runNewConnections(options: LoadOptions): Promise<LoadResult> {
  if (options.durationSeconds === undefined && options.amount === undefined) throw new Error('a load needs a duration or an amount');
  const bodies = createBodyFactory({ secret: options.secret, firstId: options.firstId });
  const target = new URL(options.url);
  const amount = options.amount ?? Number.POSITIVE_INFINITY;
  const tally = createTally();
  let sent = 0;
  const startedAt = Date.now();
  const deadline = performance.now() + (options.durationSeconds ?? Number.POSITIVE_INFINITY) * 1000;
  const sender = async () => {
    while (sent < amount && performance.now() < deadline) {
      sent += 1;
      const item = bodies.next();
      await new Promise<void>((resolve) =>
        postBody(target, item, false, (outcome) => {
          tally.record(outcome);
          resolve();
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: options.connections }, sender));
  return summarize({ ...tally, sent, bodyBytes: bodies.size, startedAt });
}

type PostOutcome = { status: number; latencyMs: number } | 'error' | 'timeout';

/**
 * POSTs one signed body as NetBox does, through `agent` (keep-alive) or on a socket of its own (`false`:
 * `Connection: close`); `done` hears, once, the status and the latency from handing the request to node:http
 * to the end of the answer, or the failure.
 */
function postBody(
  target: URL,
  item: { body: Buffer; signature?: string },
  agent: http.Agent | false,
  done: (outcome: PostOutcome) => void,
): void {
  const sentAt = performance.now();
  let settled = false;
  const settle = (outcome: PostOutcome) => {
    if (settled) return;
    settled = true;
    done(outcome);
  };
  const req = http.request(
    {
      agent,
      host: target.hostname,
      port: target.port,
      path: target.pathname + target.search,
      method: 'POST',
      timeout: 10_000,
      headers: {
        ...(agent === false ? { connection: 'close' } : {}),
        'content-type': 'application/json',
        'content-length': item.body.length,
        'user-agent': 'python-urllib3/2.2.3',
        ...(item.signature ? { 'x-hook-signature': item.signature } : {}),
      },
    },
    (res) => {
      res.resume();
      res.on('end', () => settle({ status: res.statusCode ?? 0, latencyMs: performance.now() - sentAt }));
      res.on('error', () => settle('error'));
    },
  );
  req.on('timeout', () => {
    settle('timeout');
    req.destroy();
  });
  req.on('error', () => settle('error'));
  req.end(item.body);
}

/** The answers of a load as they come: status codes, the 2xx latencies, errors and timeouts. */
function createTally() {
  const tally = {
    latencies: [] as number[],
    statusCodes: {} as Record<string, number>,
    errors: 0,
    timeouts: 0,
    record(outcome: PostOutcome): void {
      if (outcome === 'error') tally.errors += 1;
      else if (outcome === 'timeout') tally.timeouts += 1;
      else {
        const code = String(outcome.status);
        tally.statusCodes[code] = (tally.statusCodes[code] ?? 0) + 1;
        if (code.startsWith('2')) tally.latencies.push(outcome.latencyMs);
      }
    },
  };
  return tally;
}

/** The figures of a load timed by this process (0.01 ms). */
function summarize(run: {
  latencies: number[];
  statusCodes: Record<string, number>;
  sent: number;
  errors: number;
  timeouts: number;
  bodyBytes: number;
  startedAt: number;
}): LoadResult {
  const durationSeconds = (Date.now() - run.startedAt) / 1000;
  const round = (v: number) => Math.round(v * 100) / 100;
  return {
    ok: run.latencies.length,
    sent: run.sent,
    durationSeconds,
    okPerSecond: run.latencies.length / durationSeconds,
    latencyP50Ms: round(computePercentile(run.latencies, 50)),
    latencyP99Ms: round(computePercentile(run.latencies, 99)),
    latencyMaxMs: round(run.latencies.length ? run.latencies.reduce((a, b) => Math.max(a, b)) : Number.NaN),
    errors: run.errors,
    timeouts: run.timeouts,
    statusCodes: run.statusCodes,
    bodyBytes: run.bodyBytes,
    startedAt: run.startedAt,
  };
}
