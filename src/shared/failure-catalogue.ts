/** What the catalogue knows of one delivery failure code. */
export interface FailureFacts {
  /** A later attempt can succeed (principle 3). */
  retryable: boolean;
  /** An operator must act (credentials, TLS, a template): no delivery is given up for it. */
  configProblem: boolean;
  /** `server`: every delivery would fail alike (the worker pauses the whole queue); `message`: this one only. */
  scope: 'server' | 'message';
  /** Which transport sets the code, as docs/errors.md names it (`any` for the relay's own). */
  transport: string;
  /** The failure says nothing against reaching the mail server: it answered about this message, or was never asked. */
  serverReachable: boolean;
  /** What happened, in words an on-call reads at a glance (dashboard, docs/errors.md). */
  words: string;
}

const relay = buildFailureFacts.bind(undefined, 'any');
/** The mail server was never asked (the template or the stored delivery was at fault). */
const NOT_SENT = { answered: true };

/** The relay's own failure codes; notify's FAILURE_CATALOGUE adds the transports'. */
export const RELAY_FAILURES = {
  // The same report renders once the template is fixed: tried again, never given up.
  TEMPLATE: relay(true, 'message', 'A mail template failed to render (a configuration problem).', { answered: true, held: true }),
  RENDER: relay(false, 'message', 'The mail could not be built from this report.', NOT_SENT),
  EUNREADABLE: relay(false, 'message', 'The stored delivery could not be read.', NOT_SENT),
  // The operator removed the route: the relay follows its configuration (restoring the route and `retry` sends it).
  ROUTE_REMOVED: relay(false, 'message', 'Its route is no longer in ROUTES_FILE.', NOT_SENT),
  SMTP_PAUSED: relay(true, 'server', 'Sending is paused: the mail server failed for every message lately.'),
  // Anything else: a retry that fails again costs little, a mail wrongly given up costs a report.
  UNKNOWN: relay(true, 'message', 'The send failed for a reason the relay does not know.'),
} as const satisfies Record<string, FailureFacts>;

/** `answered`: the server answered about this message (or was never asked); `held`: only an operator's fix helps. */
export function buildFailureFacts(
  transport: string,
  retryable: boolean,
  scope: 'server' | 'message',
  words: string,
  flags: { answered?: boolean; held?: boolean } = {},
): FailureFacts {
  return { retryable, configProblem: flags.held === true, scope, transport, serverReachable: flags.answered === true, words };
}

/** Every code the relay may store, with its facts. */
export type FailureCatalogue = Readonly<Record<string, FailureFacts>>;

/** The facts of `code` in `catalogue` (an unknown code reads as `UNKNOWN`). */
export function readFailureFacts(code: unknown, catalogue: FailureCatalogue): FailureFacts {
  return catalogue[parseFailureCode(code, catalogue)] ?? RELAY_FAILURES.UNKNOWN;
}

/** A stored or foreign code as a catalogue code: anything outside the catalogue is `UNKNOWN`. */
export function parseFailureCode(code: unknown, catalogue: FailureCatalogue): string {
  return typeof code === 'string' && Object.hasOwn(catalogue, code) ? code : 'UNKNOWN';
}

/** What happens next to a delivery that failed with these facts, in one sentence. */
export function describeFailureOutcome(facts: FailureFacts): string {
  if (facts.configProblem && facts.scope === 'server') return 'The queue waits for an operator to fix it; nothing is given up.';
  if (facts.configProblem) return 'It is tried again until an operator fixes it; it is never given up.';
  return facts.retryable ? 'It is tried again.' : 'It is not tried again.';
}

/** Node's and OpenSSL's words for an untrusted certificate: nodemailer reports it as `ESOCKET`, like a network fault. */
const CERTIFICATE_NOT_TRUSTED =
  /certificate|self[- ]signed|unable to verify|unable to get (local )?issuer|altnames|CERT_|DEPTH_ZERO|UNABLE_TO_VERIFY|ERR_TLS_CERT/i;

/** Whether an error's words say the server's certificate is untrusted (`ETLS`). */
export function isCertificateFailure(message: string): boolean {
  return CERTIFICATE_NOT_TRUSTED.test(message);
}
