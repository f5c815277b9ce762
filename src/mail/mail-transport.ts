import type { SendMailOptions } from 'nodemailer';

export interface SendResult {
  messageId: string;
  /** The SMTP server's final answer, or where the .eml file was written. */
  response: string;
  accepted: string[];
  rejected: string[];
  /** Set for the file transport. */
  path?: string;
}

/** Where mails go: an SMTP server, Microsoft Graph, or .eml files when neither is configured. */
export interface MailTransport {
  readonly kind: 'smtp' | 'file' | 'graph';
  send(message: SendMailOptions): Promise<SendResult>;
  /**
   * Connects and authenticates (SMTP; with OAuth2 the token is fetched first), fetches a token (Graph:
   * nothing is sent) or checks the directory is writable (file). `onStep` hears each step as it passes
   * (`verify-smtp` prints them).
   */
  verify(onStep?: (step: string) => void): Promise<void>;
  close(): Promise<void>;
}
