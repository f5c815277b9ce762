import type { z } from 'zod';
import type { OutgoingMail } from '../mail';
import type { Clock, ConfigIssue, FailureCatalogue, FailureFacts, ProxySettings } from '../shared';

/** A failed send as the retry policy reads it: its code, with the catalogue's facts of that code. */
export interface FailureClass extends Pick<FailureFacts, 'configProblem' | 'scope' | 'serverReachable'> {
  kind: 'transient' | 'permanent';
  /** Stable code from the relay's catalogue (buildFailureCatalogue), stored with the delivery and used in metrics. */
  code: string;
  message: string;
  /** The server asked for this pause before the next try (Graph's Retry-After): the queue waits at least this long. */
  retryAfterMs?: number;
}

/** A failure with one of its transport's codes; `ownCode` survives nodemailer overwriting `code` with EAUTH. */
export class TransportError extends Error {
  readonly ownCode: string;
  readonly retryAfterMs?: number;
  constructor(
    readonly code: string,
    message: string,
    options: { retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.ownCode = code;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** A transport's sender: `send` rejects with an error whose `code` is one of its descriptor's `failures`. */
export interface Sender {
  send(mail: OutgoingMail): Promise<{ response: string; path?: string }>;
  /** Connects and logs in (SMTP), fetches a token (Graph) or checks the directory is writable (file); `onStep` hears each step. */
  verify(onStep?: (step: string) => void): Promise<void>;
  close(): Promise<void>;
}

/** Where mails go, as the relay uses it: the transport's sender with every failure classified. The only place that sends. */
export interface Notifier extends Omit<Sender, 'send'> {
  /** Never rejects: resolves with the sender's answer, or with the `failure`, classified. */
  send(mail: OutgoingMail): Promise<{ response: string; path?: string } | { failure: FailureClass }>;
}

/** What a notifier may touch; without `fetch`, token and Graph requests use the global fetch through `proxy`. */
export interface NotifierIo {
  readFile: (file: string) => Buffer;
  clock?: Clock;
  fetch?: typeof fetch;
  proxy?: ProxySettings;
}

/** One transport: its settings, its configuration (undefined when not selected), its sender, its words and its failure codes. */
export interface TransportDescriptor<Name extends string = string, Settings = unknown, Shape extends z.ZodRawShape = z.ZodRawShape> {
  readonly name: Name;
  readonly settings: Shape;
  /** What `MAIL_TRANSPORT=<name>` means, for the reference; absent: not chosen by MAIL_TRANSPORT (its own settings choose it). */
  readonly choice?: string;
  configure(env: Readonly<Record<string, unknown>>, context: TransportContext): Settings | undefined;
  create(settings: Settings, io: NotifierIo): Sender;
  describeStart(settings: Settings): string;
  /** What an operator should know about it at start: each a log line's fields and message. */
  describeStartWarnings(settings: Settings): { fields: Record<string, unknown>; message: string }[];
  describeVerified(settings: Settings): string;
  /** The mail server (`host:port`) the words of a failure to reach it name; absent: the address in the error, if any. */
  describeServer?(settings: Settings): string;
  /** How `check-config --json` shows it: `smtp` holds its configuration, or says where mails go instead. */
  describeConfig(settings: Settings): { smtp: unknown } & Record<string, unknown>;
  /** The transports' settings this configuration reads: `check-config` lists only these among their defaults. */
  settingsInForce(settings: Settings): readonly string[];
  /** Sends in flight at once (the worker's batch). */
  concurrency(settings: Settings): number;
  /** Secret values its configuration holds or derives (a password, a key), masked wherever logged. */
  secrets(settings: Settings): string[];
  readonly failures: FailureCatalogue;
}

/** What a transport's `configure` may use besides the parsed environment, and where it reports problems. */
export interface TransportContext {
  issues: ConfigIssue[];
  /** Variables whose value the schema refused: rules comparing with them are not checked. */
  broken: ReadonlySet<string>;
  /** Reads a file the settings name (a CA, a key), at boot. */
  readFile: (file: string) => string;
  /** The environment as given: a retired variable a transport still honours for a release is read from here. */
  rawEnv: Readonly<Record<string, string>>;
  /** DATA_DIR/mail, where `.eml` files go. */
  outboxDir: string;
  /** Real mail needs recipients: reports MAIL_TO when neither it nor ROUTES_FILE is given (`when`: what sends real mail). */
  requireRecipients(when: string): void;
}

/** The transport in force: the chosen descriptor's name and the configuration it took. */
export type ConfiguredTransport<D> = D extends TransportDescriptor<infer Name, infer Settings> ? { name: Name; settings: Settings } : never;

/** The environment a transport reads: its own section (and any other it shares), as parsed, and MAIL_FROM. */
export type SectionEnv<Shape extends z.ZodRawShape> = z.infer<z.ZodObject<Shape>> & { MAIL_FROM: string };
