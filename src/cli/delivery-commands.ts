import type { Command } from 'commander';
import { DEFAULT_SOURCE_NAME, parseDurationMs, type Config } from '../config';
import { buildDeliveriesJson, createSecretMask, type DeliveryJson } from '../delivery';
import { systemClock } from '../shared';
import { DELIVERY_STATES, openStore, StorageUnavailableError, type DeliveryState, type Store } from '../store';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, loadConfigOrReport, type CliIo } from './io';

/**
 * Operator commands on the outbox: `deliveries` (list), `retry <id>` / `retry --all-dead` (requeue),
 * `prune --dead --older-than 30d`. They open the same store as `serve` (SQLite or PostgreSQL; safe
 * while it runs: SQLite WAL lets another process write) and never print a body or a secret.
 */
export function registerDeliveryCommands(program: Command, io: CliIo, setExitCode: SetExitCode): void {
  program
    .command('deliveries')
    .description('list deliveries, newest first: id, report, NetBox, state, attempts, next attempt, last error')
    .option('--state <state>', `only this state (${DELIVERY_STATES.join('|')})`)
    .option('--limit <n>', 'at most this many (default 50)', '50')
    .option('--source <name>', 'only deliveries of this NetBox source (SOURCES_FILE; `default` for the bare webhook path)')
    .option('--json', 'one JSON document (the admin API shape) instead of a table')
    .action((opts: ListOptions) => listDeliveries(opts, io, setExitCode));

  program
    .command('retry')
    .description('requeue a dead (or sent) delivery by id, or every dead delivery with --all-dead')
    .argument('[id]', 'delivery id (see `deliveries`)')
    .option('--all-dead', 'requeue every dead delivery')
    .action((id: string | undefined, opts: RetryOptions) => retryDeliveries(id, opts, io, setExitCode));

  program
    .command('prune')
    .description('delete old deliveries now: sent ones (as RETENTION_DAYS does), or dead ones with --dead')
    .option('--dead', 'prune dead deliveries (never pruned automatically)')
    .option('--sent', 'prune sent deliveries')
    .requiredOption('--older-than <duration>', 'age of the last change, e.g. 30d, 12h')
    .action((opts: PruneOptions) => pruneDeliveries(opts, io, setExitCode));
}

/** Records a command's exit code. */
type SetExitCode = (code: number) => void;

interface ListOptions {
  state?: string;
  source?: string;
  limit: string;
  json?: boolean;
}

interface RetryOptions {
  allDead?: boolean;
}

interface PruneOptions {
  dead?: boolean;
  sent?: boolean;
  olderThan: string;
}

/** `deliveries`: prints the newest deliveries as a table (or JSON) and the count per state. */
async function listDeliveries(opts: ListOptions, io: CliIo, setExitCode: SetExitCode): Promise<void> {
  if (opts.state !== undefined && !(DELIVERY_STATES as readonly string[]).includes(opts.state)) {
    io.stderr.write(`compliance-relay: --state must be one of ${DELIVERY_STATES.join(', ')}\n`);
    return setExitCode(EXIT_USAGE);
  }
  const limit = Number(opts.limit);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100_000) {
    io.stderr.write('compliance-relay: --limit must be a whole number from 1 to 100000\n');
    return setExitCode(EXIT_USAGE);
  }
  await withStore(io, setExitCode, async (store, config) => {
    if (opts.source !== undefined && !config.sources.some((s) => s.name === opts.source)) {
      io.stderr.write(`compliance-relay: --source must be one of ${config.sources.map((s) => s.name).join(', ')}\n`);
      return setExitCode(EXIT_USAGE);
    }
    const mask = createSecretMask(config.secretValues);
    const rows = await buildDeliveriesJson(
      store,
      await store.listDeliveries({ state: opts.state as DeliveryState | undefined, limit, netboxSource: opts.source }),
      mask,
    );
    if (opts.json) {
      io.stdout.write(`${JSON.stringify({ deliveries: rows, counts: await store.countByState() }, null, 2)}\n`);
      return;
    }
    io.stdout.write(formatTable(rows));
    const counts = await store.countByState();
    io.stdout.write(`\n${DELIVERY_STATES.map((s) => `${s}: ${counts[s]}`).join('  ')}\n`);
  });
}

/** `retry <id>` / `retry --all-dead`: puts one delivery, or every dead one, back in the queue. */
async function retryDeliveries(id: string | undefined, opts: RetryOptions, io: CliIo, setExitCode: SetExitCode): Promise<void> {
  if ((id === undefined) === !opts.allDead) {
    io.stderr.write('compliance-relay: give a delivery id or --all-dead (one of them)\n');
    return setExitCode(EXIT_USAGE);
  }
  await withStore(io, setExitCode, async (store) => {
    const now = systemClock.now();
    if (opts.allDead) {
      const n = await store.requeueAllDead(now);
      io.stdout.write(
        `Requeued ${n} dead ${n === 1 ? 'delivery' : 'deliveries'}; a running relay sends ${n === 1 ? 'it' : 'them'} within WORKER_POLL_MS.\n`,
      );
      return;
    }
    const deliveryId = /^\d{1,15}$/.test(id!) ? Number(id) : NaN;
    const record = Number.isSafeInteger(deliveryId) ? await store.getDelivery(deliveryId) : undefined;
    if (!record) {
      io.stderr.write(`compliance-relay: no delivery ${id}\n`);
      return setExitCode(EXIT_USAGE);
    }
    if (!(await store.requeue(deliveryId, now))) {
      io.stderr.write(`compliance-relay: delivery ${deliveryId} is ${record.state}; only dead or sent deliveries can be requeued\n`);
      return setExitCode(EXIT_USAGE);
    }
    io.stdout.write(`Requeued delivery ${deliveryId} (report ${record.reportId}).\n`);
  });
}

/** `prune --dead/--sent --older-than <duration>`: deletes deliveries last changed before then. */
async function pruneDeliveries(opts: PruneOptions, io: CliIo, setExitCode: SetExitCode): Promise<void> {
  const ageMs = parseDurationMs(opts.olderThan);
  if (ageMs === undefined || (!opts.dead && !opts.sent)) {
    io.stderr.write('compliance-relay: use --dead and/or --sent with --older-than <duration> (e.g. 30d)\n');
    return setExitCode(EXIT_USAGE);
  }
  await withStore(io, setExitCode, async (store) => {
    const before = systemClock.now() - ageMs;
    for (const state of ['sent', 'dead'] as const) {
      if (state === 'sent' ? !opts.sent : !opts.dead) continue;
      const n = await store.pruneDeliveries({ state, before });
      io.stdout.write(
        `Pruned ${n} ${state} ${n === 1 ? 'delivery' : 'deliveries'} last changed before ${new Date(before).toISOString()}.\n`,
      );
    }
  });
}

async function withStore(io: CliIo, setExitCode: SetExitCode, fn: (store: Store, config: Config) => Promise<void>): Promise<void> {
  const config = loadConfigOrReport(io);
  if (!config) return setExitCode(EXIT_CONFIG);
  let store: Store | undefined;
  try {
    store = openStore(config.store);
    await fn(store, config);
  } catch (error) {
    if (!(error instanceof StorageUnavailableError)) throw error;
    io.stderr.write(`compliance-relay: the outbox is not usable (${error.code}): ${error.message}\n`);
    setExitCode(EXIT_UNAVAILABLE);
  } finally {
    await store?.close();
  }
}

const COLUMNS: [string, (d: DeliveryJson) => string][] = [
  ['ID', (d) => String(d.id)],
  ['REPORT', (d) => String(d.reportId)],
  // A named NetBox source shows as `<source>@<address>`; the default source as its address alone, as before sources.
  ['NETBOX', (d) => (d.netboxSource === DEFAULT_SOURCE_NAME ? d.source : `${d.netboxSource}@${d.source}`)],
  ['STATE', (d) => d.state],
  ['ATTEMPTS', (d) => String(d.attempts)],
  ['NEXT ATTEMPT', (d) => d.nextAttemptAt ?? '-'],
  [
    'ROUTES',
    (d) =>
      d.routes.length
        ? d.routes.map((r) => `${r.route}: ${r.outcome === 'send' ? r.state : `${r.outcome} (${r.reason.slice(0, 60)})`}`).join(', ')
        : '-',
  ],
  ['LAST ERROR', (d) => (d.lastError ? `${d.lastErrorCode ?? ''} ${d.lastError}`.trim().slice(0, 120) : '-')],
];

/** A plain aligned table (the last column is not padded). */
function formatTable(rows: DeliveryJson[]): string {
  if (rows.length === 0) return 'No deliveries.\n';
  const cells = [COLUMNS.map(([h]) => h), ...rows.map((r) => COLUMNS.map(([, get]) => get(r).replace(/[\r\n\t]+/g, ' ')))];
  const widths = COLUMNS.map((_, i) => Math.max(...cells.map((row) => row[i].length)));
  return cells.map((row) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]))).join('  ')).join('\n') + '\n';
}
