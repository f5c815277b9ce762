import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '../../src/config';
import type { BatchItem } from '../../src/delivery';
import type { WebhookOutcome } from '../../src/webhook';
import type { TransportDescriptor } from '../../src/notify';
import { createRelay, type Relay } from '../../src/relay';
import { createLogger, systemClock, type Clock, type Logger } from '../../src/shared';

export interface TestRelay {
  url: string;
  webhookUrl: string;
  relay: Relay;
  config: Config;
  dataDir: string;
  logs: string[];
  workerOutcomes: BatchItem[];
  webhookOutcomes: WebhookOutcome[];
  stop(): Promise<void>;
}

/** A fresh temp directory, removed by the caller (or left for inspection on failure). */
export function makeTempDir(prefix = 'relay-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * The real relay, in-process, on a real HTTP listener on port 0, with SQLite in a temp dir.
 * Log lines are captured (JSON) for assertions such as "no secret was logged".
 */
export async function startTestRelay(
  env: Record<string, string | undefined> = {},
  options: {
    clock?: Clock;
    dataDir?: string;
    random?: () => number;
    sleep?: (ms: number) => Promise<void>;
    transports?: readonly TransportDescriptor[];
    /** Shortens what the relay holds fixed (polling, retries, leases, budgets), the one test-only injection. */
    tune?: (config: Config) => Config;
  } = {},
): Promise<TestRelay> {
  const dataDir = options.dataDir ?? makeTempDir();
  const loaded = loadConfig(
    { DATA_DIR: dataDir, LOG_LEVEL: 'debug', CATCH_UP_EVERY: 'off', ...env },
    { readFile: (f) => fs.readFileSync(f, 'utf8'), transports: options.transports },
  );
  // Quick polling unless the test tunes it: work that nothing wakes the worker for is found in 50 ms, not a second.
  const quick: Config = { ...loaded, worker: { ...loaded.worker, pollMs: 50 } };
  const config = options.tune ? options.tune(quick) : quick;
  const logs: string[] = [];
  const logger: Logger = createLogger({
    level: config.log.level,
    format: 'json',
    secrets: config.secretValues,
    destination: { write: (line: string) => void logs.push(line) },
  });
  const workerOutcomes: BatchItem[] = [];
  const webhookOutcomes: WebhookOutcome[] = [];
  const relay = await createRelay(config, {
    clock: options.clock ?? systemClock,
    logger,
    readFile: (f) => fs.readFileSync(f),
    random: options.random,
    sleep: options.sleep,
    transports: options.transports,
    onWorkerOutcome: (e) => workerOutcomes.push(e),
    onWebhookOutcome: (e) => webhookOutcomes.push(e),
  });
  await relay.start();
  const server = http.createServer(relay.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    webhookUrl: `${url}${config.sources[0].path}`,
    relay,
    config,
    dataDir,
    logs,
    workerOutcomes,
    webhookOutcomes,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await relay.stop();
    },
  };
}

/** POSTs raw bytes like NetBox's `requests` does. */
export async function postWebhook(
  url: string,
  body: Buffer | string,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'User-Agent': 'python-urllib3/2.2.3', 'Accept-Encoding': 'identity', ...headers },
    body,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}

/** Polls `check` until it returns a value (not undefined) or the time is up. */
export async function waitUntil<T>(
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A `tune` that retries within `maxDelayMs` instead of the relay's minutes: for tests of what a retry does, not when. */
export function quickRetries(baseMs: number, maxDelayMs: number): (config: Config) => Config {
  return (config) => ({ ...config, retry: { ...config.retry, baseMs, maxDelayMs } });
}

/** A `tune` that gives all of one mail's NetBox requests `enrichBudgetMs` (and one request `timeoutMs`) instead of the relay's 30 s (10 s). */
export function quickNetbox(enrichBudgetMs: number, timeoutMs?: number): (config: Config) => Config {
  return (config) => ({ ...config, netbox: { ...config.netbox, enrichBudgetMs, timeoutMs: timeoutMs ?? config.netbox.timeoutMs } });
}

/** A `tune` for startTestRelay: the SMTP connection, greeting and idle timeouts all set to `ms`. */
export function smtpTimeouts(ms: number): (config: Config) => Config {
  return (config) =>
    config.transport.name === 'smtp'
      ? {
          ...config,
          transport: {
            ...config.transport,
            settings: { ...config.transport.settings, connectionTimeoutMs: ms, greetingTimeoutMs: ms, socketTimeoutMs: ms },
          },
        }
      : config;
}
