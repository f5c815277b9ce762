import type { GraphConfig, SmtpConfig } from '../config';
import type { OutgoingMail } from '../mail';
import type { Clock } from '../shared';
import { classifyFailure, type FailureClass } from './classify-failure';

/**
 * What a notifier made of one mail: accepted (`response`: the server's answer, or where the file was
 * written), worth another try later (`failure.scope` says whether the message or the whole server
 * failed), or failed for good.
 */
export type NotifyResult =
  | { status: 'sent'; response: string; path?: string }
  | { status: 'retry'; failure: FailureClass }
  | { status: 'failed'; failure: FailureClass };

/** Where mails go: an SMTP server, Microsoft Graph, or `.eml` files. The only place that knows how. */
export interface Notifier {
  /** The transport's name (its descriptor's `name`). */
  readonly kind: string;
  /** Never rejects: every failure is classified into the result. */
  send(mail: OutgoingMail): Promise<NotifyResult>;
  /**
   * Connects and authenticates (SMTP; with OAuth2 the token is fetched first), fetches a token (Graph:
   * nothing is sent) or checks the directory is writable (file). `onStep` hears each step as it passes.
   */
  verify(onStep?: (step: string) => void): Promise<void>;
  close(): Promise<void>;
}

/** A failed send as a notifier answers it: tried again later (a transient failure) or failed for good. */
export function buildFailedResult(error: unknown): Extract<NotifyResult, { status: 'retry' | 'failed' }> {
  const failure = classifyFailure(error);
  return failure.kind === 'transient' ? { status: 'retry', failure } : { status: 'failed', failure };
}

/** What a notifier may touch: `readFile` reads SMTP_CA_FILE; `clock` dates tokens; `fetch` for token and Graph requests. */
export interface NotifierIo {
  readFile: (file: string) => Buffer;
  clock?: Clock;
  fetch?: typeof fetch;
}

/**
 * One transport, described once: when the configuration selects it, how its notifier is made, and the
 * words the start line (`mail via …`) and `verify-smtp` (after every step passed) say about it.
 */
export interface TransportDescriptor {
  readonly name: string;
  selects(settings: NotifierSettings): boolean;
  create(settings: NotifierSettings, io: NotifierIo): Notifier;
  describeStart(settings: NotifierSettings): string;
  describeVerified(settings: NotifierSettings): string;
}

/** Where the relay's mails go, as configured: Graph, SMTP_URL, otherwise `.eml` files in the outbox directory. */
export interface NotifierSettings {
  smtp?: SmtpConfig;
  graph?: GraphConfig;
  mail: { outboxDir: string };
}
