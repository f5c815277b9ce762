/**
 * The SMTP floor: nodemailer alone, through the relay's own SMTP notifier
 * (`createSmtpNotifier`: the relay's pool size, TCP_NODELAY), pushing one mail the relay rendered
 * (captured whole by the sink from a first delivery) `count` times, all handed to the pool at once.
 * Nothing is rendered or built while the clock runs: the bytes are sent as they are (`raw`).
 * With `stock`, nodemailer's own pooled transport with its defaults instead (Nagle's algorithm on):
 * what a hand-written nodemailer script would do.
 * IPC: `{type:'run', env, count, raw (base64), from, to, stock?}` → `{type:'result', elapsedMs, sent, failed}`.
 */
import fs from 'node:fs';
import nodemailer from 'nodemailer';
import { loadConfig } from '../../src/config';
import type { OutgoingMail } from '../../src/mail';
import { createNotifier } from '../../src/notify';

interface PushRequest {
  type: string;
  env: Record<string, string>;
  count: number;
  raw: string;
  from: string;
  to: string[];
  stock?: boolean;
}

process.on('message', (message: PushRequest) => {
  if (message.type !== 'run') return;
  void push(message).then(
    (result) => process.send!({ type: 'result', ...result }),
    (error: unknown) => process.send!({ type: 'result', error: String((error as Error)?.stack ?? error) }),
  );
});
process.send!({ type: 'ready' });

/** Sends the captured mail `count` times; the clock runs from the first send to the last answer. */
async function push({ env, count, raw, from, to, stock }: PushRequest) {
  const config = loadConfig(env, { readFile: (f) => fs.readFileSync(f, 'utf8') });
  if (config.transport.name !== 'smtp') throw new Error('the floor needs SMTP_URL');
  const smtp = config.transport.settings;
  const bytes = Buffer.from(raw, 'base64');
  const mail: OutgoingMail = { raw: bytes, envelope: { from, to }, messageId: '', subject: '', text: '', html: '' };
  const transport = stock
    ? createStockTransport(smtp.url, smtp.poolSize)
    : createNotifier({ name: 'smtp', settings: smtp }, { readFile: (f) => fs.readFileSync(f) });
  const started = Date.now();
  const results = await Promise.all(Array.from({ length: count }, () => transport.send(mail)));
  const elapsedMs = Date.now() - started;
  await transport.close();
  const failed = results.filter((r) => 'failure' in r).length;
  return { elapsedMs, sent: count - failed, failed, startedAt: started };
}

/** nodemailer with its defaults: a pool of the same size, nothing else set. */
function createStockTransport(url: string, poolSize: number) {
  const target = new URL(url);
  const transporter = nodemailer.createTransport({
    pool: true,
    maxConnections: poolSize,
    host: target.hostname,
    port: Number(target.port),
    secure: false,
  });
  return {
    send: (mail: OutgoingMail) =>
      transporter.sendMail({ raw: mail.raw, envelope: mail.envelope }).then(
        () => ({ response: 'accepted' }),
        () => ({ failure: 'refused' }),
      ),
    close: () => Promise.resolve(transporter.close()),
  };
}
