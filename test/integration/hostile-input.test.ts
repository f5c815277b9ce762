import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { parseDelivery } from '../../src/webhook';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

const SECRET = 'hostile-input-webhook-secret';
/** Requests that must be refused (or ignored) and never stored: runs × batch. */
const INVALID_RUNS = 490;
const INVALID_BATCH = 20;
/** Valid reports carrying hostile strings: they are stored and mailed. */
const VALID_RUNS = 20;
const VALID_BATCH = 10;
const SEED = 20261121;

interface Sent {
  kind: string;
  body: Buffer;
  headers: Record<string, string>;
}

const sign = (body: Buffer) => ({ 'X-Hook-Signature': netboxSignature(body, SECRET) });
const signed = (kind: string, body: Buffer): Sent => ({ kind, body, headers: sign(body) });
const validBody = (id: number, fields: Record<string, unknown> = {}, username?: string) =>
  buildBody({ version: '4.6', username, data: { ...buildReportData({ id }), ...fields } });

/** Strings that try to end a header line, add a header, or inject markup. */
const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    'x\r\nBcc: attacker@evil.example',
    'x\nX-Injected: yes',
    'x\r\n\r\n<html>body injection',
    '<script>alert(1)</script>',
    '"><img src=x onerror=alert(1)>',
    '{{defaultSubject}}',
    '\u2028\u2029\u0000\u0085',
    'a'.repeat(290),
  ),
  fc
    .tuple(fc.string({ maxLength: 10 }), fc.constantFrom('\r\n', '\n', '\r', '<script>', '</p>', '&amp;'), fc.string({ maxLength: 10 }))
    .map((p) => p.join('')),
);

/** A value of the wrong type for a report field. */
const wrongValue = fc.oneof(
  fc.constantFrom<unknown>(null, true, [], {}, '5', -1, 1.5, 2 ** 64, -0.0001, 'NaN', [1], { n: 1 }),
  fc.string({ maxLength: 5 }),
);

const STRING_FIELDS = ['url', 'results_url', 'created'];
const REPORT_FIELDS = [
  'id',
  'url',
  'device_count',
  'test_count',
  'total_passed',
  'total_count',
  'low_passed',
  'low_count',
  'middle_passed',
  'middle_count',
  'high_passed',
  'high_count',
  'results_url',
  'created',
];

/** Every kind of request that must get a 4xx (or a 200 "ignored") and leave nothing stored. */
const invalidRequest: fc.Arbitrary<Sent> = fc.oneof(
  fc.uint8Array({ maxLength: 3000 }).map((bytes) => signed('random bytes', Buffer.from(bytes))),
  fc.tuple(fc.integer({ min: 1, max: 1_000_000 }), fc.double({ min: 0, max: 0.999, noNaN: true })).map(([id, cut]) => {
    const body = validBody(id);
    return signed('truncated JSON', body.subarray(0, Math.floor(body.length * cut)));
  }),
  fc.tuple(fc.integer({ min: 1, max: 20_000 }), fc.constantFrom('[', '{"a":')).map(([depth, open]) => {
    const close = open === '[' ? ']' : '}';
    return signed(
      'deeply nested JSON',
      Buffer.from(`{"event": "created", "object_type": "validity.compliancereport", "data": ${open.repeat(depth)}1${close.repeat(depth)}}`),
    );
  }),
  fc
    .tuple(
      fc.constantFrom(...REPORT_FIELDS),
      fc.oneof(
        wrongValue.map((v) => ({ v })),
        fc.constantFrom('1e309', '123456789012345678901234567890', '-1e400').map((raw) => ({ raw })),
      ),
    )
    .map(([field, wrong]) => {
      // A string is the right type for the string fields: give those a non-string.
      const value =
        'v' in wrong && STRING_FIELDS.includes(field) && typeof wrong.v === 'string' ? [wrong.v] : 'v' in wrong ? wrong.v : undefined;
      // Raw number literals (1e309 is Infinity to JSON.parse) go into the bytes unquoted.
      const literal = 'raw' in wrong ? wrong.raw : JSON.stringify(value);
      const body = validBody(1)
        .toString('latin1')
        .replace(new RegExp(`"${field}": ("[^"]*"|[^,}]*)`), `"${field}": ${literal}`);
      return signed(`wrong type for ${field}`, Buffer.from(body, 'latin1'));
    }),
  fc
    .tuple(fc.integer({ min: 1, max: 1000 }), fc.constantFrom('total', 'low', 'middle', 'high'))
    .map(([id, level]) => signed('passed above count', validBody(id, { [`${level}_passed`]: 9, [`${level}_count`]: 3 }))),
  fc
    .tuple(
      fc.integer({ min: 1, max: 1000 }),
      fc.constantFrom(
        Buffer.from([0xff]),
        Buffer.from([0xc3, 0x28]),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
      ),
    )
    .map(([id, bad]) => {
      const body = validBody(id);
      const at = body.indexOf('report-');
      return signed('invalid UTF-8', Buffer.concat([body.subarray(0, at), bad, body.subarray(at)]));
    }),
  fc
    .tuple(
      fc.integer({ min: 1, max: 1000 }),
      fc.constantFrom('wrong', 'partial', 'other body', 'other secret', 'missing', 'prefixed', 'empty'),
    )
    .map(([id, how]) => {
      const body = validBody(id);
      const good = netboxSignature(body, SECRET);
      const header = {
        wrong: 'ab'.repeat(64),
        partial: good.slice(0, 64),
        'other body': netboxSignature(validBody(id + 1), SECRET),
        'other secret': netboxSignature(body, `${SECRET}x`),
        missing: undefined,
        prefixed: `sha512=${good}`,
        empty: ' ',
      }[how];
      const headers: Record<string, string> = header === undefined ? {} : { 'X-Hook-Signature': header };
      return { kind: `signature ${how}`, body, headers };
    }),
  fc
    .constantFrom(
      '{}',
      '[]',
      'null',
      '"created"',
      '{"event": "created"}',
      '{"event": "created", "model": "compliancereport", "data": null}',
    )
    .map((s) => signed('not an envelope', Buffer.from(s))),
  fc
    .constantFrom('__proto__', 'constructor', 'prototype')
    .map((key) =>
      signed(
        'prototype keys in place of the report',
        Buffer.from(`{"event": "created", "object_type": "validity.compliancereport", "data": {"${key}": {"id": 5, "polluted": true}}}`),
      ),
    ),
);

/** Valid reports whose strings are hostile: accepted, and mailed without header injection or raw markup. */
const hostileValidRequest = fc.record({
  display: hostileString,
  username: hostileString,
  key: fc.oneof(
    hostileString.map((s) => s.slice(0, 200)),
    fc.constantFrom('__proto__', 'constructor'),
  ),
  value: hostileString,
});

describe('hostile input over a real listener (fast-check)', () => {
  let dir: string;
  let smtp: SmtpPeer;
  let relay: TestRelay;
  const counts = new Map<string, number>();
  let requests = 0;

  beforeAll(async () => {
    dir = makeTempDir('relay-hostile-');
    // The shipped templates, with a subject that carries report strings: the way a user's copy might.
    fs.cpSync(path.join(__dirname, '../../templates'), path.join(dir, 'templates'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'templates/report/subject.hbs'),
      '{{defaultSubject}} {{report.display}}{{#if triggeredBy}} by {{triggeredBy}}{{/if}}',
    );
    smtp = await startSmtpPeer();
    relay = await startTestRelay(
      {
        SMTP_URL: smtp.url,
        MAIL_TO: 'oncall@example.com',
        WEBHOOK_SECRET: SECRET,
        TEMPLATES_DIR: path.join(dir, 'templates'),
        LOG_LEVEL: 'warn',
      },
      { dataDir: path.join(dir, 'data') },
    );
  });
  afterAll(async () => {
    await relay.stop();
    await smtp.close();
    fs.rmSync(dir, { recursive: true, force: true });
    process.stdout.write(`hostile-input: ${requests} requests — ${[...counts].map(([k, n]) => `${k}: ${n}`).join(', ')}\n`);
  });

  const send = async (r: Sent) => {
    requests += 1;
    counts.set(r.kind, (counts.get(r.kind) ?? 0) + 1);
    return postWebhook(relay.webhookUrl, r.body, r.headers);
  };

  it(`refuses ${INVALID_RUNS * INVALID_BATCH} malformed, mistyped or wrongly signed requests and stores none`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(invalidRequest, { minLength: INVALID_BATCH, maxLength: INVALID_BATCH }), async (batch) => {
        const answers = await Promise.all(batch.map(send));
        for (const [i, a] of answers.entries()) {
          const ignored = a.status === 200 && a.json?.status === 'ignored';
          if (!ignored && (a.status < 400 || a.status >= 500))
            throw new Error(`${batch[i].kind}: answered ${a.status} ${JSON.stringify(a.json)}`);
          if (!ignored && typeof a.json?.error?.code !== 'string')
            throw new Error(`${batch[i].kind}: no error code in ${JSON.stringify(a.json)}`);
        }
      }),
      { numRuns: INVALID_RUNS, seed: SEED },
    );
    expect(await relay.relay.store.listDeliveries()).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Still up and answering.
    expect((await fetch(`${relay.url}/healthz`)).status).toBe(200);
  }, 300_000);

  it(`accepts ${VALID_RUNS * VALID_BATCH} valid reports with hostile strings and mails them without header injection or raw markup`, async () => {
    // Ids above anything the refused requests used: each report here is new.
    let nextId = 1_000_001;
    const accepted: number[] = [];
    await fc.assert(
      fc.asyncProperty(fc.array(hostileValidRequest, { minLength: VALID_BATCH, maxLength: VALID_BATCH }), async (batch) => {
        const answers = await Promise.all(
          batch.map((r) => {
            const id = nextId++;
            const body = validBody(
              id,
              { display: r.display, custom_fields: JSON.parse(`{${JSON.stringify(r.key)}: ${JSON.stringify(r.value)}}`) },
              r.username,
            );
            return send(signed('valid report with hostile strings', body)).then((a) => ({ a, id }));
          }),
        );
        for (const { a, id } of answers) {
          if (a.status !== 202) throw new Error(`report ${id}: answered ${a.status} ${JSON.stringify(a.json)}`);
          accepted.push(id);
        }
      }),
      { numRuns: VALID_RUNS, seed: SEED },
    );
    const total = VALID_RUNS * VALID_BATCH;
    expect(accepted).toHaveLength(total);
    await waitUntil(
      async () => ((await relay.relay.store.readQueue()).counts.sent === total ? true : undefined),
      240_000,
      `${total} mails sent`,
    );
    expect(smtp.received).toHaveLength(total);

    // Nothing stored that does not parse as a report.
    for (const d of await relay.relay.store.listDeliveries({ limit: total + 1 })) expect(d.state).toBe('sent');
    for (const mail of smtp.received) {
      const head = mail.raw.toString('latin1').split(/\r?\n\r?\n/)[0];
      const names = head
        .split(/\r?\n/)
        .filter((l) => !/^[ \t]/.test(l))
        .map((l) => l.slice(0, l.indexOf(':')).toLowerCase());
      // Exactly the headers the relay writes, each once: nothing injected, nothing split.
      expect(names.filter((n) => ['bcc', 'x-injected', 'subject', 'to', 'from', 'message-id'].includes(n)).sort()).toEqual([
        'from',
        'message-id',
        'subject',
        'to',
      ]);
      expect(mail.envelope.to).toEqual(['oncall@example.com']);
      expect(mail.parsed.subject ?? '').not.toMatch(/[\r\n]/);
      const html = String(mail.parsed.html);
      expect(html).not.toMatch(/<script|<img src=x|<html>body injection/i);
    }
    expect(parseDelivery(validBody(1)).kind).toBe('report');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  }, 400_000);
});
