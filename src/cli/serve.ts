import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { redactConfig, type Config } from '../config';
import { TemplateError } from '../mail';
import { createRelay } from '../relay';
import { createLogger, resolveLogFormat, systemClock } from '../shared';
import { EXIT_CONFIG, type CliIo } from './io';

/**
 * `compliance-relay serve`: builds the relay, listens, and on SIGTERM/SIGINT stops accepting,
 * lets sends in flight finish within SHUTDOWN_TIMEOUT_MS, closes SMTP and the store. Resolves
 * with the exit code once everything is closed.
 */
export async function serve(config: Config, io: CliIo): Promise<number> {
  const format = resolveLogFormat(config.log.format, io.stdoutIsTty === true);
  const logger = createLogger({ level: config.log.level, format, secrets: config.secretValues });
  // One short line; the whole configuration in force (redacted) only at debug.
  logger.info(describeBoot(config));
  logger.debug({ config: redactConfig(config) }, 'configuration in force');

  let relay;
  try {
    relay = createRelay(config, { clock: systemClock, logger, readFile: io.readFile });
  } catch (error) {
    if (error instanceof TemplateError) {
      logger.fatal({ file: error.file, line: error.line }, error.message);
      return EXIT_CONFIG;
    }
    throw error;
  }
  await relay.start();

  // Node looks for expired header/request timeouts only every connectionsCheckingInterval (30 s by
  // default): check often enough that HTTP_HEADERS_TIMEOUT_MS is what a slow client really gets.
  const server = http.createServer({ connectionsCheckingInterval: Math.min(1_000, config.http.headersTimeoutMs) }, relay.app);
  // Slow clients are cut: headers and the whole request have bounds, so nobody pins a socket.
  server.headersTimeout = config.http.headersTimeoutMs;
  server.requestTimeout = config.http.requestTimeoutMs;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.http.port, config.http.host, () => resolve());
  });
  io.markStarted?.();
  const address = server.address() as AddressInfo;
  logger.info(
    { host: address.address, port: address.port, webhook: config.webhook.path },
    `listening on ${address.address}:${address.port}, webhook at ${config.webhook.path}`,
  );

  return new Promise<number>((resolve) => {
    let shuttingDown = false;
    io.onSignal((signal) => {
      if (shuttingDown) return;
      shuttingDown = true;
      logger.info({ signal }, 'shutting down: no new requests; finishing sends in flight');
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeIdleConnections();
      const force = setTimeout(() => server.closeAllConnections(), config.http.shutdownTimeoutMs);
      force.unref();
      void closed
        .then(() => relay.stop())
        .then(
          () => {
            clearTimeout(force);
            logger.info('stopped');
            resolve(0);
          },
          (error: unknown) => {
            logger.error({ err: error }, 'error while stopping');
            resolve(1);
          },
        );
    });
  });
}

/** The boot line: what the relay stores in, mails through and talks to, in one short sentence. */
export function describeBoot(config: Config): string {
  const store = config.store.databaseUrl ? `PostgreSQL (pool ${config.store.databasePoolSize})` : `SQLite in ${config.store.dataDir}`;
  const mail = config.smtp ? `SMTP ${new URL(config.smtp.url).host}` : `.eml files in ${config.mail.outboxDir}`;
  const routes = config.routing.routes.length;
  const netbox = config.netbox.url ? `NetBox ${new URL(config.netbox.url).host}` : 'no NetBox';
  return `compliance-relay starting: ${store}, mail via ${mail}, ${routes} route${routes === 1 ? '' : 's'}, ${netbox}, dashboard ${config.admin.token ? 'on' : 'off'}`;
}
