import { Command, CommanderError } from 'commander';
import type { PreviewOptions } from './preview-command';
import type * as PreviewModule from './preview-command';
import type * as CheckConfigModule from './check-config-command';
import type * as ConfigLoadModule from './load-config-or-report';
import { EXIT_CONFIG, EXIT_USAGE, type CliIo, type SetExitCode } from './io';
import { registerDeliveryCommands } from './register-delivery-commands';
import { registerWaiverCommands } from './register-waiver-commands';
import type * as MigrateModule from './migrate';
import type * as BackupModule from './backup-command';
import type * as NetboxSetupModule from './netbox-setup-command';
import type * as ServeModule from './serve';
import { readPackageVersion } from './read-package-version';

export { type CliIo, EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE } from './io';

/** The name of the webhook and its event rule in NetBox when `netbox-setup --name` is not given. */
const DEFAULT_WEBHOOK_NAME = 'compliance-relay';

/*
 * Every command's module is loaded when that command runs rather than when the CLI starts: `serve`
 * alone needs express, prom-client, the HTTP and dashboard modules; `preview`, `migrate` and `backup`
 * their own; and every command but `backup` the configuration (zod, the store's and webhook's
 * schemas). Declaring the commands needs none of them, so `--help` loads commander and this folder's
 * declarations only (test/integration/lazy-modules.test.ts says what each leaves unloaded).
 */
/* eslint-disable @typescript-eslint/no-require-imports -- lazy on purpose (above) */
const loadServe = () => require('./serve') as typeof ServeModule;
const loadPreview = () => require('./preview-command') as typeof PreviewModule;
const loadMigrate = () => require('./migrate') as typeof MigrateModule;
const loadBackup = () => require('./backup-command') as typeof BackupModule;
const loadCheckConfig = () => require('./check-config-command') as typeof CheckConfigModule;
const loadNetboxSetup = () => require('./netbox-setup-command') as typeof NetboxSetupModule;
const loadConfigOrReport = (io: CliIo) => (require('./load-config-or-report') as typeof ConfigLoadModule).loadConfigOrReport(io);
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * Runs one command line and resolves with its exit code. Commands take their configuration from
 * the environment (and .env), like the server, so `check-config` checks exactly what `serve` uses.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let exitCode = 0;
  const setExitCode: SetExitCode = (code) => {
    exitCode = code;
  };
  const program = createProgram(io, setExitCode);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_USAGE;
    throw error;
  }
  return exitCode;
}

/**
 * The program with every command and option declared (nothing loaded, nothing run until it parses):
 * what `--help` lists, and what the docs are checked against.
 */
export function createProgram(io: CliIo, setExitCode: SetExitCode): Command {
  const program = new Command()
    .name('compliance-relay')
    .description('Receives NetBox validity compliance-report webhooks and e-mails a summary.')
    .version(readPackageVersion(), '-V, --version', 'print the version')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

  // Registered in this order, which is the order `--help` lists them in.
  registerRelayCommands(program, io, setExitCode);
  registerDeliveryCommands(program, io, setExitCode);
  registerWaiverCommands(program, io, setExitCode);
  registerMailCommands(program, io, setExitCode);
  registerSetupCommands(program, io, setExitCode);
  return program;
}

/** `serve`, `check-config`, `migrate` and `verify-smtp`: running the relay and checking what it needs. */
function registerRelayCommands(program: Command, io: CliIo, setExitCode: SetExitCode): void {
  program
    .command('serve', { isDefault: true })
    .description('run the relay: webhook receiver and mail worker (the default)')
    .action(async () => {
      const config = loadConfigOrReport(io);
      setExitCode(config ? await loadServe().serve(config, io) : EXIT_CONFIG);
    });

  program
    .command('check-config')
    .description(
      'validate the environment, ROUTES_FILE, SOURCES_FILE and templates without starting; prints each variable as set or defaulted (secrets redacted)',
    )
    .option('--online', "also ask each NetBox source's NetBox for its status and whether its token reads test results")
    .option('--json', 'print the whole configuration in force as JSON (secrets redacted) instead of the variables')
    .action(async (flags: { online?: boolean; json?: boolean }) =>
      loadCheckConfig().checkConfig(io, setExitCode, { online: flags.online === true, json: flags.json === true }),
    );

  program
    .command('migrate')
    .description('bring the store schema up to date (SQLite, or PostgreSQL when DATABASE_URL is set) and exit')
    .action(async () => {
      const config = loadConfigOrReport(io);
      setExitCode(config ? await loadMigrate().migrateStore(config, io) : EXIT_CONFIG);
    });

  program
    .command('verify-smtp')
    .description('connect to SMTP_URL (OAuth2 token, TLS and login included; or get a Graph token) and print each step; sends nothing')
    .action(() => loadCheckConfig().verifySmtp(io, setExitCode));
}

/** `preview` and `send-test`: what a mail looks like, and whether the SMTP server takes one. */
function registerMailCommands(program: Command, io: CliIo, setExitCode: SetExitCode): void {
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
    .action(async (file: string | undefined, options: PreviewOptions) => {
      const config = loadConfigOrReport(io);
      setExitCode(config ? await loadPreview().previewCommand(file, options, config, io) : EXIT_CONFIG);
    });

  program
    .command('send-test')
    .description('send the sample report through the configured SMTP server and print its answer')
    .option('--to <addresses>', "comma-separated recipients (default: the first route's, i.e. MAIL_TO without ROUTES_FILE)")
    .action(async (options: { to?: string }) => {
      const config = loadConfigOrReport(io);
      setExitCode(config ? await loadPreview().sendTestCommand(options, config, io) : EXIT_CONFIG);
    });
}

/** `backup` and `netbox-setup`: copying the store, and configuring NetBox to call the relay. */
function registerSetupCommands(program: Command, io: CliIo, setExitCode: SetExitCode): void {
  program
    .command('backup')
    .description('copy the SQLite store (DATA_DIR) to a new file while the relay runs (VACUUM INTO); for PostgreSQL use pg_dump')
    .argument('<file>', 'the backup file to create (must not exist)')
    .action((file: string) => {
      setExitCode(loadBackup().backupCommand(file, io));
    });

  program
    .command('netbox-setup')
    .description(
      'create or update (by name) the NetBox webhook and its trigger for validity reports, in the form your NetBox version needs (uses NETBOX_URL and a write-enabled NETBOX_TOKEN)',
    )
    .requiredOption('--payload-url <url>', "the relay's webhook URL as NetBox reaches it, e.g. https://relay.example.com/webhook")
    .option(
      '--secret-file <file>',
      'where the webhook secret is kept: read when it exists, else written (mode 0600) for WEBHOOK_SECRET_FILE',
    )
    .option('--name <name>', 'name of the webhook and its event rule in NetBox', DEFAULT_WEBHOOK_NAME)
    .option('--source <name>', "the NetBox source to set up (SOURCES_FILE); default: NETBOX_URL's")
    .option('--dry-run', 'read NetBox and print the requests that would be sent; change nothing')
    .option('--show-secret', 'print the webhook secret (it is never printed otherwise)')
    .action(
      async (flags: { payloadUrl: string; secretFile?: string; name: string; source?: string; dryRun?: boolean; showSecret?: boolean }) => {
        setExitCode(await loadNetboxSetup().netboxSetupCommand(flags, io));
      },
    );
}
