import { once } from 'node:events';
import http, { type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, redactConfig, type Config } from '../config';
import { TemplateError } from '../mail';
import { findTransport, type TransportDescriptor } from '../notify';
import { createRelay, type Relay } from '../relay';
import { createLogger, systemClock, type Logger } from '../shared';
import { DataDirLockedError, lockDataDir, PG_POOL_SIZE, type DataDirLock } from '../store';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, readPackageVersion, type CliIo } from './io';

/** Why a DATA_DIR cannot be had that only the operator can change: a file in its place, no right to write, a read-only disk. */
const DATA_DIR_REFUSALS = new Set(['EEXIST', 'ENOTDIR', 'EACCES', 'EPERM', 'EROFS']);

/** `serve`: locks DATA_DIR, binds the port, then builds and starts the relay (so a failed start changed nothing); ends on a signal. */
export async function serve(config: Config, io: CliIo): Promise<number> {
  const format = io.stdoutIsTty === true ? 'pretty' : 'json';
  const logger = createLogger({ level: config.log.level, format, secrets: config.secretValues });
  // One short line; the whole configuration in force (redacted) only at debug.
  logger.info(describeBoot(config, io.transports));
  logger.debug({ config: redactConfig(config, io.transports) }, 'configuration in force');

  let lock: DataDirLock | undefined;
  try {
    lock = config.store.databaseUrl ? undefined : lockDataDir(config.store.dataDir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (!(error instanceof DataDirLockedError)) {
      // The directory is there but its storage refuses the lock's write: a volume remounted read-only, a full disk.
      if (code?.startsWith('SQLITE_')) {
        logger.fatal(
          { code, dir: config.store.dataDir },
          `DATA_DIR ${config.store.dataDir} cannot be written now (${code}: ${(error as Error).message}); nothing was changed. Is its volume read-only or full? The relay takes its lock there to start; a supervisor (the systemd unit, the compose file's restart policy) starts it again.`,
        );
        return EXIT_UNAVAILABLE;
      }
      if (!DATA_DIR_REFUSALS.has(code ?? '')) throw error;
      logger.fatal(
        { code, dir: config.store.dataDir },
        `DATA_DIR ${config.store.dataDir} cannot be used (${code}); nothing was changed. DATA_DIR accepts a directory this user can create or write (not a file).`,
      );
      return EXIT_CONFIG;
    }
    logger.fatal({ code: error.code, dir: error.dataDir, pid: error.pid }, describeLockedDataDir(error));
    return EXIT_CONFIG;
  }
  const gate = createGatedServer();
  const bound = await bindPort(gate.server, config, logger);
  if (!bound) {
    lock?.release();
    return EXIT_CONFIG;
  }
  let relay;
  try {
    relay = await createRelay(config, { clock: systemClock, logger, readFile: io.readFile, transports: io.transports });
  } catch (error) {
    gate.server.close();
    lock?.release();
    if (!(error instanceof TemplateError)) throw error;
    logger.fatal({ file: error.file, line: error.line }, error.message);
    return EXIT_CONFIG;
  }
  await relay.start();
  gate.open(relay.app);
  const address = gate.server.address() as AddressInfo;
  logger.info(
    { host: address.address, port: address.port, webhook: config.sources[0].path },
    `listening on ${address.address}:${address.port}, webhook at ${config.sources[0].path}`,
  );
  return waitForSignal(gate.server, relay, { config, io, logger, lock });
}

/** The HTTP server, listening before the relay exists: requests that arrive meanwhile wait for the app (never a half-built relay). */
function createGatedServer(): { server: http.Server; open: (app: RequestListener) => void } {
  let app: RequestListener | undefined;
  const waiting: (() => void)[] = [];
  // Node checks header/request timeouts every connectionsCheckingInterval (30 s by default): often enough to hold them.
  const server = http.createServer({ connectionsCheckingInterval: Math.min(1_000, HTTP_HEADERS_TIMEOUT_MS) }, (req, res) => {
    if (app) app(req, res);
    else waiting.push(() => app!(req, res));
  });
  // Slow clients are cut: headers and the whole request have bounds, so nobody pins a socket.
  server.headersTimeout = HTTP_HEADERS_TIMEOUT_MS;
  server.requestTimeout = HTTP_REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = 5_000;
  return {
    server,
    open(ready) {
      app = ready;
      for (const next of waiting.splice(0)) next();
    },
  };
}

async function bindPort(server: http.Server, config: Config, logger: Logger): Promise<boolean> {
  try {
    // `once` rejects with the 'error' a failed listen emits instead of 'listening'.
    await once(server.listen(config.http.port, config.http.host), 'listening');
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const words = describeListenError(code, config.http);
    if (!words) throw error;
    logger.fatal({ code, host: config.http.host, port: config.http.port }, words);
    return false;
  }
}

/** On SIGTERM/SIGINT: no new requests, sends in flight finished, then the store and the lock let go. */
async function waitForSignal(server: http.Server, relay: Relay, { config, io, logger, lock }: Shutdown): Promise<number> {
  // A second signal resolves nothing more: the shutdown under way goes on.
  const signal = await new Promise<string>((resolve) => io.onSignal(resolve));
  logger.info({ signal }, 'shutting down: no new requests; finishing sends in flight');
  const closed = new Promise<void>((done) => server.close(() => done()));
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), config.http.shutdownTimeoutMs);
  force.unref();
  try {
    // The worker stops claiming now, not once the last request is answered: the whole stop stays within the bound.
    await relay.stop(closed);
    clearTimeout(force);
    lock?.release();
    logger.info('stopped');
    return 0;
  } catch (error) {
    lock?.release();
    logger.error({ err: error }, 'error while stopping');
    return 1;
  }
}

type Shutdown = { config: Config; io: CliIo; logger: Logger; lock: DataDirLock | undefined };

export function describeLockedDataDir(error: DataDirLockedError): string {
  return (
    `DATA_DIR ${error.dataDir} is in use by another relay (PID ${error.pid ?? 'unknown'}); nothing was changed. ` +
    'One relay per SQLite data directory: stop that relay, or set DATA_DIR to another directory. ' +
    'To run several replicas, give them one PostgreSQL database (DATABASE_URL).'
  );
}

export function describeListenError(code: string | undefined, where: { host: string; port: number }): string | undefined {
  const at = `PORT=${where.port} on HOST=${where.host}`;
  if (code === 'EADDRINUSE')
    return `${at} is already in use (another relay or program listens there); nothing was changed. Stop it, or set PORT to a free port.`;
  if (code === 'EACCES')
    return `${at} needs privileges this user lacks (ports below 1024); nothing was changed. Set PORT to 1024 or above (e.g. 8080).`;
  if (code === 'EADDRNOTAVAIL')
    return `HOST=${where.host} is not an address of this machine; nothing was changed. Set HOST to one of its addresses, 127.0.0.1 or 0.0.0.0.`;
  return undefined;
}

export function describeBoot(config: Config, transports?: readonly TransportDescriptor[]): string {
  const store = config.store.databaseUrl ? `PostgreSQL (pool ${PG_POOL_SIZE})` : `SQLite in ${config.store.dataDir}`;
  const mail = findTransport(config.transport, transports).describeStart(config.transport.settings);
  const routes = config.routing.routes.length;
  const { url: netboxUrl } = config.sources[0].netbox;
  const netbox = netboxUrl ? `NetBox ${new URL(netboxUrl).host}` : 'no NetBox';
  return `compliance-relay ${readPackageVersion()} starting: ${store}, mail via ${mail}, ${routes} route${routes === 1 ? '' : 's'}, ${netbox}, dashboard ${config.admin.token ? 'on' : 'off'}`;
}
