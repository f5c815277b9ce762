import type { Config, SourceConfig } from '../config';
import { NetboxError } from '../netbox';
import { createSourceNetboxClient } from '../relay';
import { systemClock } from '../shared';
import { checkOwnerRoutesOnline } from './check-owner-routes';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, type CliIo } from './io';

/** One source's NetBox as `check-config --online` found it. */
interface SourceCheck {
  line: string;
  /** 0 when fine; EXIT_CONFIG when NetBox refused (token, plugin); EXIT_UNAVAILABLE when it did not answer. */
  exitCode: number;
}

/**
 * `check-config --online`: asks each source's NetBox, with that source's token only, for its status
 * (version, validity plugin) and for one test result (the token may read what enrichment reads).
 * Prints one line per source; resolves with the worst exit code (0 when every source is usable).
 */
export async function checkSourcesOnline(config: Config, io: CliIo): Promise<number> {
  let exitCode = 0;
  for (const source of config.sources) {
    const check = await checkSource(config, source, io);
    io.stdout.write(`${check.line}\n`);
    // A refusal (fix the configuration) outranks an outage (try again).
    if (check.exitCode === EXIT_CONFIG || (check.exitCode !== 0 && exitCode === 0)) exitCode = check.exitCode;
  }
  await checkOwnerRoutesOnline(config, io);
  return exitCode;
}

async function checkSource(config: Config, source: SourceConfig, io: CliIo): Promise<SourceCheck> {
  const name = `NetBox source ${source.name}`;
  if (!source.netbox.url) return { line: `${name}: no NetBox URL, nothing to check (links stay relative, no enrichment)`, exitCode: 0 };
  const client = createSourceNetboxClient(config, source, { clock: systemClock, readFile: io.readFile }, { maxAttempts: 1 });
  const budget = () => ({ deadline: systemClock.now() + config.netbox.timeoutMs });
  try {
    const status = (await client.getJson('/api/status/', budget())) as { 'netbox-version'?: unknown; plugins?: Record<string, unknown> };
    const version = typeof status['netbox-version'] === 'string' ? status['netbox-version'] : 'unknown';
    const validity = status.plugins?.validity;
    if (typeof validity !== 'string') {
      return { line: `${name} (${client.url}): NetBox ${version}, but the validity plugin is not installed`, exitCode: EXIT_CONFIG };
    }
    const found = `${name} (${client.url}): NetBox ${version}, validity ${validity}`;
    if (!source.netbox.token) return { line: `${found}; no token: mails go without the failing results`, exitCode: 0 };
    await client.getJson('/api/plugins/validity/test-results/?limit=1&brief=1', budget());
    return { line: `${found}; the token reads test results`, exitCode: 0 };
  } catch (error) {
    if (!(error instanceof NetboxError)) throw error;
    const exitCode = error.retryable ? EXIT_UNAVAILABLE : EXIT_CONFIG;
    return { line: `${name} (${client.url}): ${error.code}: ${error.message}`, exitCode };
  } finally {
    client.close();
  }
}
