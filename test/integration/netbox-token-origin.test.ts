import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import fc from 'fast-check';
import { enrichReport } from '../../src/enrichment';
import { buildNetboxUrl, parseNetboxBase } from '../../src/report';
import { createNetboxClient } from '../../src/netbox';
import { parseDelivery, type ReportDelivery } from '../../src/webhook';
import { buildBody, buildReportData, netboxSignature } from '../helpers/netbox-json';
import { postWebhook, startTestRelay, waitUntil, type TestRelay } from '../helpers/relay-harness';
import { startSmtpPeer, type SmtpPeer } from '../helpers/smtp-peer';

/**
 * Issue 14, item 1: the NetBox token goes to NETBOX_URL's origin and nowhere else, whatever a
 * webhook's `data.url`/`results_url` or a results page's `next` says. A second listener on
 * 127.0.0.2 stands for the attacker.
 */

const TOKEN = '0123456789abcdef0123456789abcdef01234567';
const CREATED = '2026-03-06T15:11:18.123456Z';

interface Peer {
  origin: string;
  host: string;
  port: number;
  requests: { path: string; authorization?: string }[];
  close(): Promise<void>;
}

/** A listener that records every request and answers with `answer(path)` (a NetBox page or report). */
async function startPeer(host: string, answer: (path: string) => unknown = () => ({ detail: 'Not found.' })): Promise<Peer> {
  const requests: Peer['requests'] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    requests.push({ path: req.url ?? '', authorization: req.headers.authorization });
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(answer(req.url ?? '')));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    host,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** An agent that records where each connection goes: a request to any other host needs one. */
function watchingAgent(): { agent: http.Agent; targets: string[] } {
  const targets: string[] = [];
  const agent = new http.Agent({ keepAlive: true });
  const create = agent.createConnection.bind(agent);
  agent.createConnection = (options: { host?: string; port?: number }, callback: unknown) => {
    targets.push(`${options.host}:${options.port}`);
    return (create as (o: unknown, c: unknown) => Socket)(options, callback);
  };
  return { agent, targets };
}

function deliveryWith(fields: { url: string; results_url: string }): ReportDelivery | undefined {
  const data = {
    ...buildReportData({ id: 7, created: CREATED, total_passed: 1, total_count: 2, middle_passed: 1, middle_count: 2 }),
    ...fields,
  };
  try {
    const parsed = parseDelivery(buildBody({ version: '4.6', data }));
    return parsed.kind === 'report' ? parsed : undefined;
  } catch {
    return undefined; // the webhook route would refuse it: nothing is ever fetched for it
  }
}

describe("the NetBox token goes only to NETBOX_URL's origin (issue 14)", () => {
  let netbox: Peer;
  let attacker: Peer;
  /** What the NetBox peer answers: the report (with the webhook's creation time) and one page whose `next` is `nextLink`. */
  let nextLink: string | null = null;
  beforeAll(async () => {
    netbox = await startPeer('127.0.0.1', (path) =>
      path.includes('/reports/') ? { id: 7, created: CREATED } : { count: 2, next: nextLink, previous: null, results: [] },
    );
    attacker = await startPeer('127.0.0.2');
  });
  afterAll(async () => {
    await netbox.close();
    await attacker.close();
  });
  beforeEach(() => {
    netbox.requests.length = 0;
    attacker.requests.length = 0;
    nextLink = null;
  });

  /** Strings a webhook or a `next` could carry, attacks on string joining first. */
  const hostile = () =>
    fc.oneof(
      fc.constantFrom(
        `@127.0.0.2:${attacker.port}/`,
        `@127.0.0.2:${attacker.port}/api/plugins/validity/reports/7/`,
        `.127.0.0.2:${attacker.port}/`,
        `//127.0.0.2:${attacker.port}/api/`,
        `/\t/127.0.0.2:${attacker.port}/`,
        `\\\\127.0.0.2:${attacker.port}/`,
        `/\\127.0.0.2:${attacker.port}/`,
        `${attacker.origin}/api/plugins/validity/test-results/?report_id=7`,
        `http://x@127.0.0.2:${attacker.port}/`,
        `HTTP:127.0.0.2:${attacker.port}/`,
        `javascript:alert(1)`,
        `:${attacker.port}@127.0.0.2/`,
      ),
      fc
        .tuple(
          fc.constantFrom('', '/', '@', '//', '\\', ':', '.', 'http://', `${attacker.origin}`, '/api/'),
          fc.string({ maxLength: 30 }),
          fc.constantFrom('', `@127.0.0.2:${attacker.port}/`, '/'),
        )
        .map(([a, b, c]) => `${a}${b}${c}`),
      fc.webUrl(),
      fc.string({ maxLength: 60 }),
    );

  it("builds only URLs on NETBOX_URL's origin, without userinfo, from any string (property)", () => {
    const base = parseNetboxBase('https://netbox.example.com/netbox');
    fc.assert(
      fc.property(hostile(), fc.boolean(), (input, rebase) => {
        const built = buildNetboxUrl(base, input, { rebaseForeignOrigin: rebase });
        if (!built.ok) return true;
        return (
          built.url.origin === 'https://netbox.example.com' &&
          built.url.username === '' &&
          built.url.password === '' &&
          built.url.pathname.startsWith('/netbox/')
        );
      }),
      { numRuns: 5000, seed: 14 },
    );
  });

  it("sends no request, and no token, to the host a webhook's data.url names; the mail says why (example)", async () => {
    const client = createNetboxClient({ url: netbox.origin, token: TOKEN, timeoutMs: 2000, maxAttempts: 1 });
    try {
      const delivery = deliveryWith({
        url: `@127.0.0.2:${attacker.port}/`,
        results_url: '/api/plugins/validity/test-results/?report_id=7',
      })!;
      const enrichment = await enrichReport(delivery, { client, budgetMs: 5000 });
      expect(enrichment).toMatchObject({ status: 'missing', code: 'UNSAFE_URL' });
      if (enrichment.status === 'missing') expect(enrichment.reason).toContain('is not a NetBox path: it does not start with /');
      expect(attacker.requests).toEqual([]);
    } finally {
      client.close();
    }
  });

  it("does not follow a results page's next to another host (example)", async () => {
    const client = createNetboxClient({ url: netbox.origin, token: TOKEN, timeoutMs: 2000, maxAttempts: 1 });
    try {
      nextLink = `@127.0.0.2:${attacker.port}/`;
      const error = await client
        .streamList('/api/plugins/validity/test-results/?report_id=7', () => undefined, { deadline: Date.now() + 5000 })
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'UNSAFE_URL', retryable: false });
      expect(netbox.requests.map((r) => r.authorization)).toEqual([`Token ${TOKEN}`]);
      expect(attacker.requests).toEqual([]);
    } finally {
      client.close();
    }
  });

  it("for any data.url, results_url or next, a request either goes to NETBOX_URL's origin or is not made (property)", async () => {
    // NetBox's own paths often enough that the later requests (results, then `next`) are reached too.
    const reportPath = fc.oneof(fc.constant('/api/plugins/validity/reports/7/'), hostile());
    const resultsPath = fc.oneof(fc.constant('/api/plugins/validity/test-results/?report_id=7'), hostile());
    let followedNext = 0;
    await fc.assert(
      fc.asyncProperty(reportPath, resultsPath, hostile(), async (url, resultsUrl, next) => {
        const delivery = deliveryWith({ url, results_url: resultsUrl });
        fc.pre(delivery !== undefined);
        netbox.requests.length = 0;
        const { agent, targets } = watchingAgent();
        const client = createNetboxClient({ url: netbox.origin, token: TOKEN, timeoutMs: 2000, maxAttempts: 1, agent });
        nextLink = next;
        try {
          await enrichReport(delivery, { client, budgetMs: 3000 });
        } finally {
          agent.destroy();
        }
        expect(attacker.requests).toEqual([]);
        expect(targets.every((t) => t === `127.0.0.1:${netbox.port}`)).toBe(true);
        if (netbox.requests.length > 2) followedNext += 1;
      }),
      { numRuns: 300, seed: 1414 },
    );
    // The runs did reach the `next` links, not only the first refusal.
    expect(followedNext).toBeGreaterThan(5);
  });
});

describe('a relay given a forged data.url still mails the report, without the details, and logs why', () => {
  const SECRET = 'token-origin-webhook-secret';
  let smtp: SmtpPeer;
  let netbox: Peer;
  let attacker: Peer;
  let relay: TestRelay | undefined;
  beforeAll(async () => {
    smtp = await startSmtpPeer();
    netbox = await startPeer('127.0.0.1', () => ({ id: 9, created: CREATED }));
    attacker = await startPeer('127.0.0.2');
  });
  afterAll(async () => {
    await relay?.stop();
    await netbox.close();
    await attacker.close();
    await smtp.close();
  });

  it("sends nothing to the attacker's listener", async () => {
    relay = await startTestRelay({
      SMTP_URL: smtp.url,
      MAIL_TO: 'netops@example.com',
      WEBHOOK_SECRET: SECRET,
      NETBOX_URL: netbox.origin,
      NETBOX_TOKEN: TOKEN,
    });
    const data = {
      ...buildReportData({ id: 9, created: CREATED, total_passed: 1, total_count: 2, middle_passed: 1, middle_count: 2 }),
      url: `@127.0.0.2:${attacker.port}/`,
    };
    const body = buildBody({ version: '4.6', data });
    const res = await postWebhook(relay.webhookUrl, body, { 'X-Hook-Signature': netboxSignature(body, SECRET) });
    expect(res.status).toBe(202);
    const [mail] = await smtp.waitFor(1);
    expect(mail.parsed.subject).toMatch(/^First: 50\.0%, 1 failing, no HIGH \u2014 report 9 /);
    expect(String(mail.parsed.text)).toContain('Failing tests are not listed: the relay refused to send a request to NetBox');
    await waitUntil(() => relay!.workerOutcomes.length > 0 || undefined, 10_000, 'the outcome');
    expect(relay.workerOutcomes.map((o) => o.settled?.state)).toEqual(['sent']);
    const warning = relay.logs
      .map((l) => JSON.parse(l) as { level: number; code?: string; error?: string })
      .find((l) => l.code === 'UNSAFE_URL');
    expect(warning).toMatchObject({ level: 40, error: expect.stringContaining(`"@127.0.0.2:${attacker.port}/" is not a NetBox path`) });
    expect(attacker.requests).toEqual([]);
    expect(relay.logs.join('\n')).not.toContain(TOKEN);
  });
});
