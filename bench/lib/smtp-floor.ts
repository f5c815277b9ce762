import { signBody } from '../../src/webhook';
import { askChild, forkBenchScript, stopChild, waitForMessage } from './processes';
import { BENCH_SECRET } from './relay-env';
import type { CapturedMail, SmtpSink } from './smtp-sink';
import { createBodyFactory } from './webhook-bodies';

/** POSTs one signed body like NetBox and resolves with the relay's status code. */
export async function postSigned(url: string, body: Buffer): Promise<number> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hook-signature': signBody(body, BENCH_SECRET) },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

/**
 * The relay's own rendered mail: one webhook through the running relay, and the mail the sink
 * accepted for it, whole, with its envelope. It also warms the relay (templates, pool, JIT) before
 * anything is timed. The sink must be fresh: its first mail is the one returned.
 */
export async function captureRelayMail(webhookUrl: string, sink: SmtpSink, firstId: number): Promise<CapturedMail> {
  const before = (await sink.stats()).count;
  const status = await postSigned(webhookUrl, createBodyFactory({ firstId }).next().body);
  if (status !== 202) throw new Error(`the first webhook answered ${status}`);
  await sink.waitForCount(before + 1, 60_000);
  const mail = await sink.sample();
  if (!mail) throw new Error('the sink kept no mail');
  return mail;
}

/**
 * The SMTP floor: nodemailer alone (bench/servers/nodemailer-push) sending `mail` `count` times
 * through the relay's transport factory (pool and TCP_NODELAY from `env`) to `sink`; mails/s from
 * the first send to the last answer. `stock`: nodemailer's defaults instead (informational).
 */
export async function measureSmtpFloor(o: {
  sink: SmtpSink;
  env: Record<string, string>;
  mail: CapturedMail;
  count: number;
  stock?: boolean;
  label: string;
  log: (m: string) => void;
}): Promise<number> {
  const pusher = forkBenchScript('servers/nodemailer-push.js');
  try {
    await waitForMessage(pusher, 'ready');
    const before = (await o.sink.stats()).count;
    const request = {
      type: 'run',
      env: o.env,
      count: o.count,
      raw: o.mail.raw.toString('base64'),
      from: o.mail.from,
      to: o.mail.to,
      stock: o.stock ?? false,
    };
    const result = await askChild<{ elapsedMs: number; sent: number; failed: number; error?: string }>(pusher, request, 'result', 600_000);
    if (result.error || result.failed) throw new Error(`${o.label} failed: ${result.error ?? `${result.failed} failed`}`);
    const done = await o.sink.waitForCount(before + o.count, 60_000);
    const rate = o.count / (result.elapsedMs / 1000);
    o.log(
      `${o.label}: ${o.count} mails (${o.mail.raw.length} bytes each) in ${result.elapsedMs} ms (${rate.toFixed(0)}/s), sink saw ${done.count - before}`,
    );
    return rate;
  } finally {
    await stopChild(pusher);
  }
}
