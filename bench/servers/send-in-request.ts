/**
 * Baseline: the hand-written receiver a team would run instead of the relay — Express, the signature
 * checked on the raw body, one Handlebars template rendered and the mail sent with nodemailer inside
 * the request, answered once the SMTP server accepted it. Nothing is stored (a crash or an SMTP outage
 * loses the report), nothing is retried, the mail is a plain summary without trend, chart or links.
 * Its sender is the relay's own (`createSmtpNotifier`: pooled, TCP_NODELAY), so the comparison
 * is of what each does per mail, not of Nagle's algorithm. Env: PORT, SMTP_URL, SMTP_POOL_SIZE,
 * WEBHOOK_SECRET, MAIL_FROM, MAIL_TO.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import express from 'express';
import Handlebars from 'handlebars';
import { loadConfig } from '../../src/config';
import { buildOutgoingMail } from '../../src/mail';
import { createNotifier } from '../../src/notify';

const config = loadConfig(process.env, { readFile: (f) => fs.readFileSync(f, 'utf8') });
if (config.transport.name !== 'smtp') throw new Error('send-in-request needs SMTP_URL');
const transport = createNotifier(config.transport, { readFile: (f) => fs.readFileSync(f) });
const secret = process.env.WEBHOOK_SECRET ?? '';
const from = process.env.MAIL_FROM ?? 'relay@example.com';
const to = process.env.MAIL_TO ?? 'ops@example.com';

const html = Handlebars.compile(`<h1>Compliance report {{id}}</h1>
<p>{{total_passed}}/{{total_count}} passed</p>
<table>
  <tr><th>Severity</th><th>Passed</th></tr>
  <tr><td>LOW</td><td>{{low_passed}}/{{low_count}}</td></tr>
  <tr><td>MIDDLE</td><td>{{middle_passed}}/{{middle_count}}</td></tr>
  <tr><td>HIGH</td><td>{{high_passed}}/{{high_count}}</td></tr>
</table>`);
const text = Handlebars.compile(`Compliance report {{id}}: {{total_passed}}/{{total_count}} passed
LOW {{low_passed}}/{{low_count}}, MIDDLE {{middle_passed}}/{{middle_count}}, HIGH {{high_passed}}/{{high_count}}
`);

function signatureMatches(raw: Buffer, header: string | undefined): boolean {
  const expected = Buffer.from(crypto.createHmac('sha512', secret).update(raw).digest('hex'));
  const given = Buffer.from(header ?? '');
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}

const app = express();
app.disable('x-powered-by');
app.post(
  '/webhook',
  express.json({ limit: 1_048_576, verify: (req, _res, buf) => ((req as unknown as { raw: Buffer }).raw = buf) }),
  (req, res) => {
    if (!signatureMatches((req as unknown as { raw: Buffer }).raw, req.get('x-hook-signature'))) {
      res.status(401).json({ error: 'bad signature' });
      return;
    }
    const data = (req.body as { data: Record<string, number> }).data;
    // Built with MailComposer as nodemailer's sendMail would build it, then sent as those bytes.
    buildOutgoingMail({
      from,
      to: [to],
      cc: [],
      bcc: [],
      subject: `Compliance report ${data.id}: ${data.total_passed}/${data.total_count} passed`,
      headers: { 'X-Compliance-Report-Id': String(data.id) },
      html: html(data),
      text: text(data),
      attachments: [],
      messageId: `<report-${data.id}.${Date.now()}@example.com>`,
      date: new Date(),
    })
      .then((mail) => transport.send(mail))
      .then(
        (result) =>
          'failure' in result ? res.status(502).json({ error: result.failure.message }) : res.status(200).json({ status: 'sent' }),
        (error: unknown) => res.status(502).json({ error: String(error) }),
      );
  },
);
const server = http.createServer(app);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.send!({ type: 'ready', port: (server.address() as { port: number }).port });
});
process.on('SIGTERM', () => {
  server.close(() => void transport.close().then(() => process.exit(0)));
  server.closeAllConnections();
});
