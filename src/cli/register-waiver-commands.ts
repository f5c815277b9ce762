import type { Command } from 'commander';
import type * as WaiverCommandsModule from './waiver-commands';
import type { WaiverAddOptions, WaiverListOptions } from './waiver-commands';
import type { CliIo, SetExitCode } from './io';

/* eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: `--help` loads no store */
const loadActions = () => require('./waiver-commands') as typeof WaiverCommandsModule;

/**
 * `waivers list|add|expire`: accepted exceptions in the store `serve` uses (safe while it runs), with the
 * rules of the dashboard and the admin API; each add and expire prints its audit line (JSON) on stderr.
 */
export function registerWaiverCommands(program: Command, io: CliIo, setExitCode: SetExitCode): void {
  const waivers = program.command('waivers').description('accepted exceptions: list, add or expire waivers (see docs/waivers.md)');
  waivers
    .command('list')
    .description('list waivers, newest first: stored ones and WAIVERS_FILE entries (read-only)')
    .option('--status <status>', 'only active (expiring included), expiring (within 7 days) or expired ones')
    .option('--source <name>', 'only this NetBox source')
    .option('--test <name>', 'only this test')
    .option('--device <name>', 'only this device')
    .option('--json', 'one JSON document (the admin API shape) instead of a table')
    .action((opts: WaiverListOptions) => loadActions().listWaivers(opts, io, setExitCode));

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
    .action((opts: WaiverAddOptions) => loadActions().addWaiver(opts, io, setExitCode));

  waivers
    .command('expire')
    .description('end a stored waiver now (it stays listed, as expired); WAIVERS_FILE entries end in the file')
    .argument('<id>', 'the waiver id (see `waivers list`)')
    .requiredOption('--author <name>', 'who ends it')
    .action((id: string, opts: { author: string }) => loadActions().expireWaiver(id, opts, io, setExitCode));
}
