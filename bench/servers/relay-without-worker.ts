/**
 * The relay's real app, store and logger (createRelay from the same environment `serve` reads),
 * listening like `serve`, but with the delivery worker not started: it isolates the ack path
 * (signature, parse, group-committed insert) from the worker's rendering and sending, which the
 * end-to-end benchmark measures.
 */
import fs from 'node:fs';
import http from 'node:http';
import { HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, loadConfig } from '../../src/config';
import { createRelay } from '../../src/relay';
import { createLogger, systemClock } from '../../src/shared';

const config = loadConfig(process.env, { readFile: (f) => fs.readFileSync(f, 'utf8') });
const logger = createLogger({ level: config.log.level, format: 'json', secrets: config.secretValues });
void createRelay(config, { clock: systemClock, logger, readFile: (f) => fs.readFileSync(f) }).then((relay) => {
  const server = http.createServer(relay.app);
  server.headersTimeout = HTTP_HEADERS_TIMEOUT_MS;
  server.requestTimeout = HTTP_REQUEST_TIMEOUT_MS;
  server.keepAliveTimeout = 5_000;
  server.listen(config.http.port, '127.0.0.1', () => {
    process.send!({ type: 'ready', port: (server.address() as { port: number }).port });
  });
  process.on('SIGTERM', () => {
    server.close(() => void relay.stop().then(() => process.exit(0)));
    server.closeAllConnections();
  });
});
