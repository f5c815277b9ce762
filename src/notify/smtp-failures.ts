import type { FailureFacts } from '../shared';

/** A failure of the SMTP transport. */
function smtp(retryable: boolean, scope: 'server' | 'message', words: string): FailureFacts {
  return { retryable, configProblem: false, heldForOperator: false, scope, transport: 'smtp', serverReachable: false, words };
}

/** The mail server answered about this message: it is reachable. */
function reply(facts: FailureFacts): FailureFacts {
  return { ...facts, serverReachable: true };
}

/**
 * The SMTP transport's failure codes. SMTP_4XX's scope depends on the reply (421 is about the service,
 * RFC 5321 §3.8), so it is decided where the error is classified. Codes are nodemailer's `err.code` where it
 * has one (nodemailer `lib/errors.js`), so the stored code reads like the library's documentation.
 */
export const SMTP_FAILURES: Readonly<Record<string, FailureFacts>> = {
  SMTP_4XX: reply(smtp(true, 'message', 'The mail server refused the message for now (temporary 4xx).')),
  SMTP_5XX: reply(smtp(false, 'message', 'The mail server refused the message for good (5xx).')),
  EENVELOPE: reply(smtp(false, 'message', 'The mail server refused a sender or recipient address.')),
  EMESSAGE: reply(smtp(false, 'message', 'The mail server refused the message content.')),
  ECONNECTION: smtp(true, 'server', 'The mail server could not be reached.'),
  ECONNREFUSED: smtp(true, 'server', 'The mail server refused the connection (is it running, is SMTP_URL right?).'),
  ECONNRESET: smtp(true, 'server', 'The mail server dropped the connection.'),
  ETIMEDOUT: smtp(true, 'server', 'The mail server did not answer in time.'),
  ESOCKET: smtp(true, 'server', 'The connection to the mail server failed.'),
  EDNS: smtp(true, 'server', "The mail server's name could not be resolved."),
  EPIPE: smtp(true, 'server', 'The mail server closed the connection while the message was sent.'),
  EHOSTUNREACH: smtp(true, 'server', 'The mail server is unreachable from here (no route to the host).'),
  ENETUNREACH: smtp(true, 'server', 'The network of the mail server is unreachable.'),
  EAI_AGAIN: smtp(true, 'server', "The mail server's name could not be resolved now (DNS)."),
  EPROTOCOL: smtp(true, 'message', 'The mail server answered something SMTP does not allow.'),
  ESTREAM: smtp(true, 'message', 'The message could not be streamed to the mail server.'),
  // Certificate trust (untrusted, expired, another host's): nothing changes until an operator fixes
  // SMTP_CA_FILE or SMTP_URL, yet it is retried so that the queue drains by itself once the fix is deployed.
  ETLS: {
    ...smtp(true, 'server', "The mail server's certificate is not trusted (untrusted CA, expired, or another host's name)."),
    configProblem: true,
  },
  EAUTH: { ...smtp(false, 'message', 'The mail server refused the SMTP user name or password.'), configProblem: true },
  ENOAUTH: { ...smtp(false, 'message', 'The mail server wants a login and none is configured.'), configProblem: true },
};
