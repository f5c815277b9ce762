import type { OutgoingMail } from '../mail';
import type { FailureClass } from './classify-failure';

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
  readonly kind: 'smtp' | 'graph' | 'file';
  /** Never rejects: every failure is classified into the result. */
  send(mail: OutgoingMail): Promise<NotifyResult>;
  /**
   * Connects and authenticates (SMTP; with OAuth2 the token is fetched first), fetches a token (Graph:
   * nothing is sent) or checks the directory is writable (file). `onStep` hears each step as it passes.
   */
  verify(onStep?: (step: string) => void): Promise<void>;
  close(): Promise<void>;
}
