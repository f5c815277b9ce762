/**
 * The end-to-end baseline: nodemailer alone (the relay's own SMTP transport: same pool, same
 * options) pushing messages that were rendered before the clock starts, to the same SMTP sink.
 * With `stock`, nodemailer's own pooled transport with its defaults instead (Nagle's algorithm on):
 * what a hand-written nodemailer script would do.
 * IPC: `{type:'run', env, count, firstId, stock?}` → `{type:'result', elapsedMs, sent}`.
 */
import fs from 'node:fs';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { loadConfig } from '../../src/config';
import { createReportComposer } from '../../src/compose';
import { createSmtpTransport, loadRenderer } from '../../src/mail';
import { defaultTemplatesDir } from '../../src/relay';
import { systemClock } from '../../src/shared';
import type { ClaimedDelivery } from '../../src/store';
import { parseDelivery } from '../../src/webhook';
import { createBodyFactory } from '../lib/webhook-bodies';

process.on('message', (message: { type: string; env: Record<string, string>; count: number; firstId: number; stock?: boolean }) => {
  if (message.type !== 'run') return;
  void push(message).then(
    (result) => process.send!({ type: 'result', ...result }),
    (error: unknown) => process.send!({ type: 'result', error: String((error as Error)?.stack ?? error) }),
  );
});
process.send!({ type: 'ready' });

async function push({ env, count, firstId, stock }: { env: Record<string, string>; count: number; firstId: number; stock?: boolean }) {
  const config = loadConfig(env, { readFile: (f) => fs.readFileSync(f, 'utf8') });
  const compose = createReportComposer({
    renderer: loadRenderer(config.mail.templatesDir ?? defaultTemplatesDir()),
    clock: systemClock,
    from: config.mail.from,
    replyTo: config.mail.replyTo,
    routes: config.routing.routes,
    implicitRoute: config.routing.file === undefined,
    timezone: config.mail.timezone,
    netboxUrl: config.netbox.url,
  });
  const bodies = createBodyFactory({ firstId });
  const messages: SendMailOptions[] = [];
  for (let i = 0; i < count; i++) {
    const { id, body } = bodies.next();
    const parsed = parseDelivery(body);
    if (parsed.kind !== 'report') throw new Error('not a report');
    const composed = await compose({ id: i + 1, reportId: id, dedupKey: parsed.dedupKey, body, attempts: 1 } as ClaimedDelivery);
    const message = await composed.messageFor({ name: config.routing.routes[0]!.name, reminder: false, reason: 'bench' });
    if (!message) throw new Error('no message for the first route');
    messages.push(message);
  }
  const transport = stock ? createStockTransport(config.smtp!.url, config.smtp!.poolSize) : createSmtpTransport(config.smtp!, { readFile: (f) => fs.readFileSync(f) });
  const started = Date.now();
  const results = await Promise.allSettled(messages.map((m) => transport.send(m)));
  const elapsedMs = Date.now() - started;
  await transport.close();
  const failed = results.filter((r) => r.status === 'rejected').length;
  return { elapsedMs, sent: count - failed, failed, startedAt: started };
}

/** nodemailer with its defaults: a pool of the same size, nothing else set. */
function createStockTransport(url: string, poolSize: number) {
  const target = new URL(url);
  const transporter = nodemailer.createTransport({ pool: true, maxConnections: poolSize, host: target.hostname, port: Number(target.port), secure: false });
  return {
    send: (message: SendMailOptions) => transporter.sendMail(message),
    close: async () => transporter.close(),
  };
}
