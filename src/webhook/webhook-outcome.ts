import type { ErrorCode } from '../shared';

/** What happened to one webhook request, for metrics and tests (the HTTP layer reports it, metrics count it). */
export type WebhookOutcome = (
  | { outcome: 'queued' | 'duplicate'; id: number; reportId: number }
  | { outcome: 'ignored'; reason: string }
  | { outcome: 'rejected'; code: ErrorCode }
) & {
  /** The NetBox source whose path was posted to (one of the configured names). */
  source: string;
};
