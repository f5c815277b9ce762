import { askChild, forkBenchScript, stopChild, waitForMessage } from './processes';

export interface LoadOptions {
  url: string;
  connections: number;
  /** Bounded by time, by count, or both (whichever ends first). */
  durationSeconds?: number;
  amount?: number;
  /**
   * Requests per second over all connections (open-loop pacing with node:http and 0.01 ms timing),
   * instead of as fast as possible with autocannon.
   */
  overallRate?: number;
  /**
   * Each request on a TCP connection of its own (`Connection: close`, no keep-alive agent), as NetBox's
   * `requests` sends every webhook; `connections` senders, each sending its next request once answered.
   */
  newConnection?: boolean;
  /** Also reads this process's CPU time (/proc) right before the first request and after the last answer. */
  cpuOfPid?: number;
  /** Signs every body with this secret (X-Hook-Signature). */
  secret?: string;
  /** First report id; each request takes the next one. */
  firstId: number;
}

export interface LoadResult {
  /** 2xx answers. */
  ok: number;
  sent: number;
  durationSeconds: number;
  okPerSecond: number;
  /** Latency of 2xx answers: autocannon's histogram (1 ms steps), or paced runs' own timings (0.01 ms). */
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  bodyBytes: number;
  /** Date.now() in the load process when the first request was about to go. */
  startedAt: number;
  /** CPU time (ms) `cpuOfPid` used during the load. */
  cpuMs?: number;
}

/** Runs one bounded load from a separate process (bench/servers/load-generator) and returns its figures. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const child = forkBenchScript('servers/load-generator.js');
  try {
    await waitForMessage(child, 'ready');
    // A count-bounded load ends when the server has answered them all: give a slow one time.
    const timeoutMs = ((options.durationSeconds ?? 900) + 60) * 1000;
    const reply = await askChild<{ result?: LoadResult; error?: string }>(child, { type: 'run', options }, 'result', timeoutMs);
    if (!reply.result) throw new Error(`load generator failed: ${reply.error}`);
    return reply.result;
  } finally {
    await stopChild(child);
  }
}

/** "3 × 503, 2 errors" — what went wrong during a load, for the note column. */
export function describeFailures(result: LoadResult): string {
  const bad = Object.entries(result.statusCodes)
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, n]) => `${n} × ${code}`);
  if (result.errors) bad.push(`${result.errors} socket errors`);
  if (result.timeouts) bad.push(`${result.timeouts} timeouts`);
  return bad.join(', ');
}
