import type { Command } from 'commander';
import type * as DeliveryCommandsModule from './delivery-commands';
import type { ListOptions, PruneOptions, RetryOptions } from './delivery-commands';
import type { CliIo, SetExitCode } from './io';

/*
 * The states `--state` accepts, as the help text lists them. Written out rather than read from the
 * store's DELIVERY_STATES so that declaring the commands loads no store (and no zod) for `--help`;
 * `deliveries --state` is still checked against the store's list, and
 * test/integration/lazy-modules.test.ts checks that this help line names every one of them.
 */
const STATE_CHOICES = 'queued|sending|retrying|sent|dead';

/* eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose (above) */
const loadActions = () => require('./delivery-commands') as typeof DeliveryCommandsModule;

/**
 * Operator commands on the outbox: `deliveries` (list), `retry <id>` / `retry --all-dead` (requeue),
 * `prune --dead --older-than 30d`. They open the same store as `serve` (SQLite or PostgreSQL; safe
 * while it runs: SQLite WAL lets another process write) and never print a body or a secret.
 */
export function registerDeliveryCommands(program: Command, io: CliIo, setExitCode: SetExitCode): void {
  program
    .command('deliveries')
    .description('list deliveries, newest first: id, report, NetBox, state, attempts, next attempt, last error')
    .option('--state <state>', `only this state (${STATE_CHOICES})`)
    .option('--limit <n>', 'at most this many (default 50)', '50')
    .option('--source <name>', 'only deliveries of this NetBox source (SOURCES_FILE; `default` for the bare webhook path)')
    .option('--json', 'one JSON document (the admin API shape) instead of a table')
    .action((opts: ListOptions) => loadActions().listDeliveries(opts, io, setExitCode));

  program
    .command('retry')
    .description('requeue a dead (or sent) delivery by id, or every dead delivery with --all-dead')
    .argument('[id]', 'delivery id (see `deliveries`)')
    .option('--all-dead', 'requeue every dead delivery')
    .action((id: string | undefined, opts: RetryOptions) => loadActions().retryDeliveries(id, opts, io, setExitCode));

  program
    .command('prune')
    .description('delete old deliveries now: sent ones (as RETENTION_DAYS does), or dead ones with --dead')
    .option('--dead', 'prune dead deliveries (never pruned automatically)')
    .option('--sent', 'prune sent deliveries')
    .requiredOption('--older-than <duration>', 'age of the last change, e.g. 30d, 12h')
    .action((opts: PruneOptions) => loadActions().pruneDeliveries(opts, io, setExitCode));
}
