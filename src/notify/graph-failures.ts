import type { FailureFacts } from '../shared';
import { OAUTH2_FAILURES } from './oauth2-settings';

/** A failure of Microsoft Graph's sendMail. */
function graph(retryable: boolean, scope: 'server' | 'message', words: string): FailureFacts {
  return { retryable, configProblem: false, heldForOperator: false, scope, transport: 'graph', serverReachable: false, words };
}

/** The mail server answered about this message: it is reachable. */
function reply(facts: FailureFacts): FailureFacts {
  return { ...facts, serverReachable: true };
}

/** Graph's codes, and OAuth2's (its token). */
export const GRAPH_FAILURES: Readonly<Record<string, FailureFacts>> = {
  ...OAUTH2_FAILURES,
  // Microsoft Graph's sendMail: 429 (the pause honours Retry-After), 5xx or no answer, 403/404 (the app may
  // not send as the mailbox, or it does not exist), and a 4xx about this message.
  GRAPH_THROTTLED: graph(true, 'server', 'Microsoft Graph asked to slow down (429); the queue waits at least its Retry-After.'),
  GRAPH_UNAVAILABLE: graph(true, 'server', 'Microsoft Graph could not be reached or failed (5xx).'),
  GRAPH_ACCESS_DENIED: {
    ...graph(true, 'server', 'Microsoft Graph refused to send as this mailbox (403/404: permission Mail.Send, or no such mailbox).'),
    configProblem: true,
    heldForOperator: true,
  },
  GRAPH_REJECTED: reply(graph(false, 'message', 'Microsoft Graph refused this message (a 4xx about it: a recipient, its size).')),
};
