import { Command, CommanderError } from 'commander';
import type { ListOptions, PruneOptions } from './delivery-commands';
import { EXIT_CONFIG, EXIT_USAGE, readPackageVersion, UsageError, type CliIo, type RunWithConfig } from './io';
import type { NetboxSetupFlags } from '../netbox-setup';
import type { PreviewOptions } from './preview-command';
import type { WaiverListOptions } from './waiver-commands';

export { type CliIo, EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE } from './io';

// Not read from the store's DELIVERY_STATES, so that `--help` loads no store (lazy-modules.test.ts checks it names every one).
const STATE_CHOICES = 'queued|sending|retrying|sent|dead';

/** Runs one command line and resolves with its exit code; configuration comes from the environment (and .env), as for `serve`. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let exitCode = 0;
  const program = createProgram(io, (code) => {
    exitCode = code;
  });
  try {
    // `serve` is the default only when no command is given: any other word must name a command (commander says the nearest).
    await program.parseAsync(argv.length > 2 ? argv : [...argv, 'serve']);
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_USAGE;
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`compliance-relay: ${error.message}\n`);
    return EXIT_USAGE;
  }
  return exitCode;
}

/** The program with every command and option declared (nothing loaded until it parses): what `--help` lists and the docs are checked against. */
export function createProgram(io: CliIo, setExitCode: (code: number) => void): Command {
  const program = new Command()
    .name('compliance-relay')
    .description('Receives NetBox validity compliance-report webhooks and e-mails a summary.')
    .version(readPackageVersion(), '-V, --version', 'print the version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
  const withConfig: RunWithConfig = async (command, options) => {
    const { checkHostResolves, loadConfigOrReport } = await import('./load-config-or-report');
    const config = loadConfigOrReport(io, options?.listens ? await checkHostResolves(io.env) : []);
    setExitCode(config ? await command(config) : EXIT_CONFIG);
  };

  registerRelayCommands(program, io, withConfig);
  registerWaiverCommands(program, io, withConfig);
  registerMailCommands(program, io, withConfig);
  return program;
}

function registerRelayCommands(program: Command, io: CliIo, withConfig: RunWithConfig): void {
  program
    .command('serve')
    .description('run the relay: webhook receiver and mail worker (the default when no command is given)')
    .action(() => withConfig(async (config) => (await import('./serve')).serve(config, io), { listens: true }));

  program
    .command('check-config')
    .description(
      'validate the environment, ROUTES_FILE, SOURCES_FILE and templates without starting; prints each variable as set or defaulted (secrets redacted)',
    )
    .option('--online', "also ask each NetBox source's NetBox for its status and whether its token reads what the configuration needs")
    .option('--json', 'print the whole configuration in force as JSON (secrets redacted) instead of the variables')
    .action((flags: { online?: boolean; json?: boolean }) =>
      withConfig(async (config) => (await import('./check-config-command')).checkConfig(config, io, flags), { listens: true }),
    );

  program
    .command('migrate')
    .description('bring the store schema up to date (SQLite, or PostgreSQL when DATABASE_URL is set) and exit')
    .action(() => withConfig(async (config) => (await import('./store-commands')).migrateStore(config, io)));

  program
    .command('verify-smtp')
    .description(
      'connect to SMTP_URL (OAuth2 token, TLS and login included), get a Graph token, or check that the .eml directory is writable, printing each step; sends nothing',
    )
    .action(() => withConfig(async (config) => (await import('./check-config-command')).verifyTransport(config, io)));

  // On the outbox `serve` uses (safe while it runs: SQLite WAL lets another process write); never a body or a secret.
  program
    .command('deliveries')
    .description('list deliveries, newest first: id, report, NetBox, state, attempts, next attempt, route mails, last error')
    .option('--state <state>', `only this state (${STATE_CHOICES})`)
    .option('--limit <n>', 'at most this many (default 50)', '50')
    .option('--source <name>', 'only deliveries of this NetBox source (SOURCES_FILE; `default` for the bare webhook path)')
    .option('--json', 'one JSON document (the admin API shape) instead of a table')
    .action(async (opts: ListOptions) => (await import('./delivery-commands')).listDeliveries(opts, io, withConfig));

  program
    .command('retry')
    .description('requeue a dead (or sent) delivery by id, or every dead delivery with --all-dead')
    .argument('[id]', 'delivery id (see `deliveries`)')
    .option('--all-dead', 'requeue every dead delivery')
    .action(async (id: string | undefined, opts: { allDead?: boolean }) =>
      (await import('./delivery-commands')).retryDeliveries(id, opts, io, withConfig),
    );

  program
    .command('prune')
    .description('delete old deliveries now: sent ones with --sent (as RETENTION_DAYS does), dead ones with --dead, or both')
    .option('--dead', 'prune dead deliveries (never pruned automatically)')
    .option('--sent', 'prune sent deliveries')
    .requiredOption('--older-than <duration>', 'age of the last change, e.g. 30d, 12h')
    .action(async (opts: PruneOptions) => (await import('./delivery-commands')).pruneDeliveries(opts, io, withConfig));
}

/** `waivers list|add|expire`, with the rules of the dashboard and the admin API; each change prints its audit line (JSON) on stderr. */
function registerWaiverCommands(program: Command, io: CliIo, withConfig: RunWithConfig): void {
  const waivers = program.command('waivers').description('accepted exceptions: list, add or expire waivers (see docs/waivers.md)');
  waivers
    .command('list')
    .description('list waivers, newest first: stored ones and WAIVERS_FILE entries (read-only)')
    .option('--status <status>', 'only active (expiring included), expiring (within 7 days) or expired ones')
    .option('--source <name>', 'only this NetBox source')
    .option('--test <name>', 'only this test')
    .option('--device <name>', 'only this device')
    .option('--json', 'one JSON document (the admin API shape) instead of a table')
    .action(async (opts: WaiverListOptions) => (await import('./waiver-commands')).listWaivers(opts, io, withConfig));

  waivers
    .command('add')
    .description('accept a failing test on a device (or on all devices, with a reason) until a date')
    .requiredOption('--test <name>', 'the test, as NetBox names it')
    .option('--device <name>', 'the device, as NetBox names it')
    .option('--all-devices', 'every device of the source (then --reason is required)')
    .requiredOption('--until <YYYY-MM-DD>', 'the last day the waiver holds (UTC), at most 180 days ahead')
    .option('--reason <text>', 'why the failure is accepted')
    .requiredOption('--author <name>', 'who accepts it')
    .option('--source <name>', 'the NetBox source (default: default)')
    .action(async (opts: object) => (await import('./waiver-commands')).addWaiver(opts, io, withConfig));

  waivers
    .command('expire')
    .description('end a stored waiver now (it stays listed, as expired); WAIVERS_FILE entries end in the file')
    .argument('<id>', 'the waiver id (see `waivers list`)')
    .requiredOption('--author <name>', 'who ends it')
    .action(async (id: string, opts: { author: string }) => (await import('./waiver-commands')).expireWaiver(id, opts, io, withConfig));
}

function registerMailCommands(program: Command, io: CliIo, withConfig: RunWithConfig): void {
  program
    .command('preview')
    .description(
      'render a delivery (or a digest) with the current templates and write subject.txt, mail.html, mail.txt and mail.eml; sends nothing',
    )
    .argument('[delivery.json]', 'a delivery body as NetBox sends it')
    .option('--id <n>', 'a delivery from the store, by id')
    .option('--last', 'the newest delivery in the store')
    .option('--route <name>', 'the route whose template set, subject and recipients to use (default: the first)')
    .option('--digest <route>', 'a digest route: render its digest from the stored history instead of a delivery')
    .option(
      '--period <period>',
      'with --digest: last (default: the last completed period), current (its tick to now) or <from>/<to> (ISO 8601)',
    )
    .option('--group <key>', 'a route by owner (netbox_contacts): the owner group whose mail to write (default: the first)')
    .requiredOption('--out <dir>', 'where to write the four files')
    .action((file: string | undefined, options: PreviewOptions) =>
      withConfig(async (config) => (await import('./preview-command')).previewCommand(file, options, config, io)),
    );

  program
    .command('send-test')
    .description('send the sample report through the configured mail server and print its answer')
    .option('--to <addresses>', "comma-separated recipients (default: the first route's, i.e. MAIL_TO without ROUTES_FILE)")
    .action((options: { to?: string }) =>
      withConfig(async (config) => (await import('./preview-command')).sendTestCommand(options, config, io)),
    );

  program
    .command('backup')
    .description('copy the SQLite store (DATA_DIR) to a new file while the relay runs (VACUUM INTO); for PostgreSQL use pg_dump')
    .argument('<file>', 'the backup file to create (must not exist)')
    .action((file: string) => withConfig(async (config) => (await import('./store-commands')).backupStore(file, config, io)));

  program
    .command('netbox-setup')
    .description(
      'create or update (by name) the NetBox webhook and its trigger for validity reports, in the form your NetBox version needs (uses NETBOX_URL and a write-enabled NETBOX_TOKEN)',
    )
    .requiredOption('--payload-url <url>', "the relay's webhook URL as NetBox reaches it, e.g. https://relay.example.com/webhook")
    .option(
      '--secret-file <file>',
      'where the webhook secret is kept when the relay has none set: read when it exists, else written (mode 0600) for WEBHOOK_SECRET_FILE',
    )
    .option('--name <name>', 'name of the webhook and its event rule in NetBox', 'compliance-relay')
    .option('--source <name>', "the NetBox source to set up (SOURCES_FILE); default: NETBOX_URL's")
    .option('--dry-run', 'read NetBox and print the requests that would be sent; change nothing')
    .option('--show-secret', 'print the webhook secret (it is never printed otherwise)')
    .action((flags: NetboxSetupFlags) =>
      withConfig(async (config) => (await import('./netbox-setup-command')).netboxSetupCommand(flags, config, io)),
    );
}
