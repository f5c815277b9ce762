import path from 'node:path';
import { runNetboxSetup, NetboxSetupError, type NetboxSetupFlags } from '../netbox-setup';
import type { Config } from '../config';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, type CliIo } from './io';

/** `compliance-relay netbox-setup`: checks the flags and the source's NetBox URL and token, then runs the setup. */
export async function netboxSetupCommand(flags: NetboxSetupFlags, config: Config, io: CliIo): Promise<number> {
  const fail = (code: number, message: string) => {
    io.stderr.write(`compliance-relay netbox-setup: ${message}.\n`);
    return code;
  };
  const source = config.sources.find((s) => s.name === (flags.source ?? DEFAULT_SOURCE_NAME));
  if (!source) return fail(EXIT_USAGE, `--source must be one of ${config.sources.map((s) => s.name).join(', ')}`);
  // What the source lacks, named as the operator configures it (variables or SOURCES_FILE fields).
  const [url, token] =
    source.name === DEFAULT_SOURCE_NAME
      ? ['NETBOX_URL is required (the NetBox address, with its base path if any)', 'NETBOX_TOKEN (or NETBOX_TOKEN_FILE) is required']
      : [`source ${source.name} needs netbox_url in SOURCES_FILE`, `source ${source.name} needs token_file or token_env in SOURCES_FILE`];
  const problems = [
    ...(source.netbox.url ? [] : [url]),
    ...(source.netbox.token ? [] : [`${token}: a NetBox API token allowed to write webhooks and event rules`]),
  ];
  if (problems.length) return fail(EXIT_CONFIG, problems.join('; '));
  const protocol = URL.canParse(flags.payloadUrl) ? new URL(flags.payloadUrl).protocol : undefined;
  if ((protocol !== 'http:' && protocol !== 'https:') || flags.payloadUrl.length > 500)
    return fail(
      EXIT_USAGE,
      `--payload-url must be an http(s) URL of at most 500 characters (the relay's webhook address as NetBox reaches it, e.g. https://relay.example.com${source.path})`,
    );
  if (flags.name.length === 0 || flags.name.length > 150) return fail(EXIT_USAGE, '--name must be 1 to 150 characters');
  try {
    const secretFile = flags.secretFile ? path.resolve(io.cwd, flags.secretFile) : undefined;
    const ca = source.netbox.caFile ? io.readFile(source.netbox.caFile) : undefined;
    await runNetboxSetup({ ...flags, secretFile }, { source, ca, proxy: config.proxy }, (line) => io.stdout.write(`${line}\n`));
    return 0;
  } catch (error) {
    if (!(error instanceof NetboxSetupError)) throw error;
    io.stderr.write(`compliance-relay netbox-setup: ${error.message}\n`);
    return error.kind === 'unavailable' ? EXIT_UNAVAILABLE : EXIT_CONFIG;
  }
}
