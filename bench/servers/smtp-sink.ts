/**
 * A real smtp-server in its own process that accepts every mail and notes when it accepted it
 * (and the X-Compliance-Report-Id header, to match mails to webhooks). It does not parse the mail:
 * the sink must cost as little as possible so that it measures its clients, not itself.
 * IPC: `ready {port}`; `{type:'stats'}` → `stats {count, firstAt, lastAt}`; `{type:'arrivals'}` →
 * `arrivals {arrivals: [reportId, acceptedAtMs][]}`; `{type:'sample'}` → `sample {raw?, from?, to?}`: the first
 * mail accepted, whole, with its envelope (the SMTP floor pushes exactly those bytes).
 */
import { SMTPServer } from 'smtp-server';

const arrivals: [number, number][] = [];
let count = 0;
let firstAt = 0;
let lastAt = 0;
/** The first mail, kept whole (base64): one copy, so the sink's own cost stays what it was. */
let sample: { raw: string; from: string; to: string[] } | undefined;

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  logger: false,
  // Clients of a benchmark reconnect a lot; the default backlog limits would skew the figure.
  maxClients: 1000,
  onData(stream, session, callback) {
    let head = '';
    const whole: Buffer[] | undefined = sample ? undefined : [];
    stream.on('data', (chunk: Buffer) => {
      if (head.length < 8192) head += chunk.toString('latin1');
      whole?.push(chunk);
    });
    stream.on('end', () => {
      if (whole && !sample) {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        sample = { raw: Buffer.concat(whole).toString('base64'), from, to: session.envelope.rcptTo.map((r) => r.address) };
      }
      const now = Date.now();
      count += 1;
      if (count === 1) firstAt = now;
      lastAt = now;
      const id = /^X-Compliance-Report-Id:\s*(\d+)/im.exec(head)?.[1];
      if (id && arrivals.length < 1_000_000) arrivals.push([Number(id), now]);
      callback();
    });
  },
});

// A client that drops its connection (a relay stopped at the end of a run) is no failure of the sink's: without a
// listener, smtp-server's 'error' would end this process.
server.on('error', () => undefined);

server.listen(Number(process.env.SINK_PORT ?? 0), '127.0.0.1', () => {
  const port = (server as unknown as { server: { address(): { port: number } } }).server.address().port;
  process.send!({ type: 'ready', port });
});

process.on('message', (message: { type: string }) => {
  if (message.type === 'stats') process.send!({ type: 'stats', count, firstAt, lastAt });
  if (message.type === 'arrivals') process.send!({ type: 'arrivals', arrivals });
  if (message.type === 'sample') process.send!({ type: 'sample', ...sample });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
