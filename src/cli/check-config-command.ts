import { describeCatchUp, formatSettings, planCatchUp, redactConfig, type Config } from '../config';
import { loadRenderer, TemplateError } from '../mail';
import { buildFailureCatalogue, createNotifier, describeMailError, findTransport, readFailureCode } from '../notify';
import { verifyRouteTemplates } from '../compose';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, type CliIo } from './io';
import { describeProxySettings } from '../shared';

/** `check-config`: loads the route templates and prints the settings in force (secrets redacted), or with `--json` the whole configuration. */
export async function checkConfig(config: Config, io: CliIo, flags: { online?: boolean; json?: boolean }): Promise<number> {
  try {
    const renderer = loadRenderer(config.mail.templatesDir);
    await verifyRouteTemplates(renderer, { ...config, netbox: config.sources[0].netbox });
  } catch (error) {
    if (!(error instanceof TemplateError)) throw error;
    io.stderr.write(`compliance-relay: ${error.message}\n`);
    return EXIT_CONFIG;
  }
  for (const w of config.warnings) io.stderr.write(`compliance-relay: warning: ${w.variable} ${w.message}\n`);
  io.stdout.write(
    `${flags.json ? JSON.stringify(redactConfig(config, io.transports), null, 2) : describeSettingsInForce(io, config)}\nThe configuration is valid.\n`,
  );
  return flags.online ? (await import('./check-sources-online')).checkSourcesOnline(config, io) : 0;
}

function describeSettingsInForce(io: CliIo, config: Config): string {
  const files = [
    config.routing.file ? `ROUTES_FILE ${config.routing.file}: routes ${config.routing.routes.map((r) => r.name).join(', ')}` : undefined,
    config.sources.length > 1 ? `NetBox sources: ${config.sources.map((s) => s.name).join(', ')}` : undefined,
    ...config.sources.map(
      (s) => `Catch-up of missed reports${config.sources.length > 1 ? ` (${s.name})` : ''}: ${describeCatchUp(planCatchUp(s))}`,
    ),
    config.proxy.httpProxy || config.proxy.httpsProxy
      ? `Proxies for NetBox, OAuth2 and Graph: ${describeProxySettings(config.proxy)}`
      : 'Proxies: none (HTTPS_PROXY and HTTP_PROXY are not set): NetBox, OAuth2 and Graph are reached directly',
  ].filter((line): line is string => line !== undefined);
  return [
    ...formatSettings(io.env, config, io.transports),
    ...files,
    `(check-config --json prints the whole configuration in force.)`,
  ].join('\n');
}

/** `verify-smtp`: checks the mail transport in force, printing each step as it passes, so a failure shows which step failed. */
export async function verifyTransport(config: Config, io: CliIo): Promise<number> {
  const notifier = createNotifier(config.transport, { readFile: io.readFile, proxy: config.proxy }, io.transports);
  try {
    await notifier.verify((step) => io.stdout.write(`  ok  ${step}\n`));
    io.stdout.write(`${findTransport(config.transport, io.transports).describeVerified(config.transport.settings)}\n`);
    return 0;
  } catch (error) {
    io.stderr.write(`compliance-relay: mail transport check failed ${describeMailFailure(error, config, io.transports)}\n`);
    return EXIT_UNAVAILABLE;
  } finally {
    await notifier.close();
  }
}

/** A failed check or send: the catalogue's code, then what to do when a user can fix it, else the server's own words. */
export function describeMailFailure(error: unknown, config: Config, transports: CliIo['transports']): string {
  const err = error as { code?: string; responseCode?: number; message?: string };
  const server = findTransport(config.transport, transports).describeServer?.(config.transport.settings);
  const code = readFailureCode(error, buildFailureCatalogue(transports));
  const reply = err.responseCode ? ` ${err.responseCode}` : '';
  return `(${code}${reply}): ${describeMailError({ code, message: err.message }, server) ?? err.message ?? String(error)}`;
}
