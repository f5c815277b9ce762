import { isCertificateFailure } from '../shared';
import { SMTP_CONNECTION_TIMEOUT_MS, SMTP_GREETING_TIMEOUT_MS } from './smtp-transport';
import { SMTP_FAILURES } from './smtp-failures';

/** OpenSSL's words when the peer's first bytes are not TLS: an SMTP greeting, read as a TLS record. */
const NOT_TLS = /wrong version number|packet length too long|unknown protocol|ssl3_get_record|record layer failure/i;
/** The codes of failing to reach, secure or log in to the mail server, and those nodemailer and Node give unclassified. */
const CONNECTION_CODES: ReadonlySet<string> = new Set([
  ...Object.keys(SMTP_FAILURES).filter((code) => SMTP_FAILURES[code].scope === 'server' || SMTP_FAILURES[code].configProblem),
  'ENOTFOUND',
  'ERROR',
]);

// What happened, then what to change. Ordered: a TLS failure arrives as ESOCKET like a refused connection.
function describeFixable(code: string, message: string, server: string): string | undefined {
  if (code === 'SMTP_TLS_REQUIRED')
    return (
      `${server} offers no STARTTLS, and the relay logs in: it sent neither the login nor any mail in clear, and the queue waits. ` +
      'Enable STARTTLS on the server, or use its implicit-TLS port (usually 465) with smtps://; only on a path you trust, set SMTP_REQUIRE_TLS=false.'
    );
  if (NOT_TLS.test(message))
    return (
      `${server} does not speak TLS from the first byte (SMTP_URL is smtps://, the server starts in plain text and offers STARTTLS). ` +
      'Use smtp:// with this port (STARTTLS is used when offered), or the server’s implicit-TLS port (usually 465) with smtps://.'
    );
  if (code === 'ETLS' || isCertificateFailure(message))
    return (
      `the certificate of ${server} is not trusted (${message.slice(0, 120)}). ` +
      'Put the CA that signed it in SMTP_CA_FILE (PEM), and make SMTP_URL’s host the name on the certificate.'
    );
  if (code === 'ECONNREFUSED' || /ECONNREFUSED/.test(message))
    return `nothing accepts connections at ${server} (connection refused). Check the host and port in SMTP_URL (587 STARTTLS, 465 smtps://, 25) and that the mail server runs.`;
  if (code === 'EDNS' || /ENOTFOUND|EAI_AGAIN|EAI_NONAME/.test(message))
    return `the host name of ${server} does not resolve (DNS). Check the spelling of the host in SMTP_URL, and that this machine can resolve it (/etc/resolv.conf, the container's DNS).`;
  if (code === 'ETIMEDOUT' || /timed? ?out|Greeting never received/i.test(message))
    return (
      `${server} did not answer in time (${/greeting/i.test(message) ? 'connected, but no SMTP greeting' : 'timed out'}). A firewall may drop the connection, the port may be wrong, ` +
      `or it speaks TLS from the first byte (port 465: use smtps://). Check SMTP_URL; the relay waits ${SMTP_CONNECTION_TIMEOUT_MS / 1000} s to connect and ${SMTP_GREETING_TIMEOUT_MS / 1000} s for the greeting.`
    );
  if (code !== 'EAUTH' && code !== 'ENOAUTH') return undefined;
  return /no auth|ENOAUTH|authentication required|530/i.test(message) && !/Invalid login|535/.test(message)
    ? `${server} requires a login and none is configured. Set SMTP_USER and SMTP_PASSWORD (or SMTP_PASSWORD_FILE).`
    : `${server} refused the login (${message.slice(0, 120)}). Check SMTP_USER and SMTP_PASSWORD (or SMTP_PASSWORD_FILE); some providers need an app password or OAuth2 (OAUTH2_CLIENT_ID, docs/mail-servers.md).`;
}

/** A connection, TLS or login failure in words a user acts on; `server` (`host:port`) defaults to the error's address. */
export function describeMailError(error: { code?: string; message?: string }, server?: string): string | undefined {
  const code = error.code ?? '';
  // The server's answer to a message or a template proves the connection worked: its words are not a connection failure's.
  if (code !== '' && !CONNECTION_CODES.has(code)) return undefined;
  const message = error.message ?? '';
  const where = server ?? /\b(\d{1,3}(?:\.\d{1,3}){3}:\d+)\b/.exec(message)?.[1] ?? 'the mail server in SMTP_URL';
  const words = describeFixable(code, message, where);
  return words && words.charAt(0).toUpperCase() + words.slice(1);
}
