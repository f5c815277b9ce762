import { askChild, forkBenchScript, stopChild, waitForMessage } from './processes';

interface SinkStats {
  count: number;
  firstAt: number;
  lastAt: number;
}

/** A mail exactly as the sink received it, with its SMTP envelope. */
export interface CapturedMail {
  raw: Buffer;
  from: string;
  to: string[];
}

export interface SmtpSink {
  port: number;
  url: string;
  stats(): Promise<SinkStats>;
  /** [report id, accepted at (Date.now())] for every mail accepted so far. */
  arrivals(): Promise<[number, number][]>;
  /** The first mail this sink accepted, whole (undefined before any). */
  sample(): Promise<CapturedMail | undefined>;
  /** Resolves once `count` mails were accepted (polling), or rejects after `timeoutMs`. */
  waitForCount(count: number, timeoutMs: number): Promise<SinkStats>;
  stop(): Promise<void>;
}

/** A real smtp-server in its own process (bench/servers/smtp-sink) on `port` (0: any). */
export async function startSmtpSink(port = 0): Promise<SmtpSink> {
  const child = forkBenchScript('servers/smtp-sink.js', { env: { SINK_PORT: String(port) } });
  const ready = await waitForMessage<{ port: number }>(child, 'ready');
  const stats = () => askChild<SinkStats>(child, { type: 'stats' }, 'stats');
  return {
    port: ready.port,
    url: `smtp://127.0.0.1:${ready.port}`,
    stats,
    async sample() {
      const s = await askChild<{ raw?: string; from?: string; to?: string[] }>(child, { type: 'sample' }, 'sample');
      return s.raw === undefined ? undefined : { raw: Buffer.from(s.raw, 'base64'), from: s.from ?? '', to: s.to ?? [] };
    },
    arrivals: async () => (await askChild<{ arrivals: [number, number][] }>(child, { type: 'arrivals' }, 'arrivals')).arrivals,
    async waitForCount(count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const s = await stats();
        if (s.count >= count) return s;
        if (Date.now() > deadline) throw new Error(`the SMTP sink accepted ${s.count} of ${count} mails within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop() {
      await stopChild(child);
    },
  };
}
