import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';

export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  parsed: ParsedMail;
}

/** How the peer answers DATA: accept, fail with an SMTP code, or drop the connection. */
export type SmtpBehaviour =
  /** `after`: the "250 OK" waits for it too (the test decides when the send completes). */
  { type: 'accept'; delayMs?: number; after?: Promise<unknown> } | { type: 'reject'; code: number; message?: string } | { type: 'drop' };

export interface SmtpPeer {
  port: number;
  url: string;
  received: ReceivedMail[];
  /** Replaces what the peer does from the next message on. */
  setBehaviour(next: SmtpBehaviour | ((attempt: number) => SmtpBehaviour)): void;
  /** Resolves once `count` mails were accepted (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** Number of DATA attempts seen (accepted or not). */
  attempts: number;
  close(): Promise<void>;
}

/**
 * A real SMTP server from `smtp-server` on port 0 (no auth unless given, no TLS unless given).
 * Every accepted message is parsed with mailparser, as a user's mail client would see it.
 */
export async function startSmtpPeer(
  options: { behaviour?: SmtpBehaviour; server?: Partial<SMTPServerOptions>; port?: number } = {},
): Promise<SmtpPeer> {
  let decide: (attempt: number) => SmtpBehaviour = () => options.behaviour ?? { type: 'accept' };
  const received: ReceivedMail[] = [];
  const waiters: { count: number; resolve: (m: ReceivedMail[]) => void }[] = [];
  let attempts = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: options.server?.secure ? [] : ['STARTTLS'],
    logger: false,
    // close() ends what a client left open (a TLS connection half-closed by a stopped relay) after 1 s,
    // not smtp-server's 30 s: those sockets kept a jest worker alive past its suite.
    closeTimeout: 1_000,
    ...options.server,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        attempts += 1;
        const behaviour = decide(attempts);
        if (behaviour.type === 'drop') {
          // Close the client's socket without an answer (smtp-server keeps its connections by session id).
          const conn = (server as unknown as { connections: Set<{ _socket: { destroy(): void }; id: string }> }).connections;
          for (const c of conn) if (c.id === session.id) c._socket.destroy();
          return;
        }
        if (behaviour.type === 'reject') {
          const err = Object.assign(new Error(behaviour.message ?? `rejected with ${behaviour.code}`), { responseCode: behaviour.code });
          callback(err);
          return;
        }
        const raw = Buffer.concat(chunks);
        const delay = Promise.all([new Promise((r) => setTimeout(r, behaviour.delayMs ?? 0)), behaviour.after]);
        void delay
          .then(() => simpleParser(raw))
          .then((parsed) => {
            received.push({
              envelope: {
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                to: session.envelope.rcptTo.map((r) => r.address),
              },
              raw,
              parsed,
            });
            for (const w of [...waiters]) {
              if (received.length >= w.count) {
                waiters.splice(waiters.indexOf(w), 1);
                w.resolve(received.slice());
              }
            }
            // A delayed "250 OK": the mail is here, the sender does not know yet (a send in flight).
            if (behaviour.delayMs) setTimeout(() => callback(), behaviour.delayMs);
            else callback();
          }, callback);
      });
    },
  });
  // A client that gives up mid-handshake (a refused certificate) is an error of that connection only.
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  // A client that dies (a relay SIGKILLed mid-send) resets its connections; smtp-server reports that
  // as an 'error' event, which without a listener would throw in the test process.
  server.on('error', () => undefined);
  const port = (server as unknown as { server: { address(): AddressInfo } }).server.address().port;
  return {
    port,
    url: `${options.server?.secure ? 'smtps' : 'smtp'}://127.0.0.1:${port}`,
    received,
    get attempts() {
      return attempts;
    },
    setBehaviour(next) {
      decide = typeof next === 'function' ? next : () => next;
    },
    waitFor(count, timeoutMs = 10_000) {
      if (received.length >= count) return Promise.resolve(received.slice());
      return new Promise((resolve, reject) => {
        const w = { count, resolve };
        waiters.push(w);
        setTimeout(() => {
          const i = waiters.indexOf(w);
          if (i >= 0) {
            waiters.splice(i, 1);
            reject(new Error(`expected ${count} mails within ${timeoutMs} ms, got ${received.length}`));
          }
        }, timeoutMs).unref();
      });
    },
    close() {
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
