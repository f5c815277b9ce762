import type pino from 'pino';
import type { Logger } from 'pino';
import { createSecretMask, SECRET_MARK } from './mask-secrets';

/** Loaded by the first logger: `--help` and `check-config` log nothing and do not load pino. */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only commands that log load it
const loadPino = () => require('pino') as typeof pino;

export type { Logger };

export interface LoggerOptions {
  level: string;
  format: 'json' | 'pretty';
  /** Literal secret values to mask wherever they appear in a log line. */
  secrets?: string[];
  /** Where JSON lines go (default: stdout). */
  destination?: pino.DestinationStream;
}

/** Keys that hold secrets, at the top and one level down, and in a request's headers. */
const REDACT_PATHS = [
  ...['secret', 'password', 'pass', 'token', 'authorization'].flatMap((key) => [key, `*.${key}`]),
  '*.auth.pass',
  'req.headers.authorization',
  'req.headers["x-hook-signature"]',
  'headers["x-hook-signature"]',
  'req.headers.cookie',
];

/** JSON (pino), or pretty for a terminal; secrets masked by key and by value, so one inside a message is never written. */
export function createLogger(options: LoggerOptions): Logger {
  const pino = loadPino();
  const secrets = options.secrets ?? [];
  const maskSecrets = createSecretMask(secrets);
  const base: pino.LoggerOptions = {
    level: options.level,
    redact: { paths: REDACT_PATHS, censor: SECRET_MARK },
    base: { service: 'compliance-relay' },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...(secrets.length > 0 ? { hooks: { streamWrite: maskSecrets } } : {}),
  };
  if (options.format === 'pretty') {
    return pino(base, pino.transport({ target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:standard' } }));
  }
  return pino(base, options.destination ?? pino.destination({ sync: true }));
}

/** A logger that writes nothing, for tests and library use. */
export function createSilentLogger(): Logger {
  return loadPino()({ level: 'silent' });
}
