import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { classifyFailure, FAILURE_CATALOGUE, type OAuth2Config } from '../../src/notify';
// Graph's and OAuth2's pieces are inner files of notify/: only a relay configured for them loads them.
import { classifyGraphResponse, parseRetryAfterMs, withBccHeader } from '../../src/notify/create-graph-notifier';
import { createAccessTokenFetcher, createTokenCache } from '../../src/notify/fetch-access-token';
import { TransportError } from '../../src/notify/notifier';

const T0 = Date.parse('2026-05-01T08:00:00Z');

describe('the token cache: one token shared, renewed before it expires', () => {
  function setup(lifetimeMs: number) {
    let now = T0;
    let fetches = 0;
    const pending: (() => void)[] = [];
    const cache = createTokenCache({
      clock: { now: () => now },
      fetchToken: () => {
        fetches += 1;
        const n = fetches;
        return new Promise((resolve) => pending.push(() => resolve({ accessToken: `t${n}`, expiresAt: now + lifetimeMs })));
      },
    });
    return {
      cache,
      fetches: () => fetches,
      advance: (ms: number) => (now += ms),
      answer: () => pending.splice(0).forEach((resolve) => resolve()),
    };
  }

  it('asks the endpoint once for callers that arrive while a request is in flight', async () => {
    const t = setup(3_600_000);
    const all = Promise.all([t.cache.get(), t.cache.get(), t.cache.get()]);
    t.answer();
    expect((await all).map((x) => x.accessToken)).toEqual(['t1', 't1', 't1']);
    expect(t.fetches()).toBe(1);
  });

  it('serves the cached token until 5 minutes before it expires, then fetches a new one', async () => {
    const t = setup(3_600_000);
    const first = t.cache.get();
    t.answer();
    await first;
    t.advance(3_600_000 - 5 * 60_000 - 1);
    expect((await t.cache.get()).accessToken).toBe('t1');
    t.advance(1);
    const renewed = t.cache.get();
    t.answer();
    expect((await renewed).accessToken).toBe('t2');
  });

  it('renews half-way through a short lifetime, and at once when asked to (a refused token)', async () => {
    const t = setup(60_000);
    const first = t.cache.get();
    t.answer();
    await first;
    t.advance(29_999);
    expect((await t.cache.get()).accessToken).toBe('t1');
    const renewed = t.cache.get({ renew: true });
    t.answer();
    expect((await renewed).accessToken).toBe('t2');
    t.cache.invalidate('t2');
    const after = t.cache.get();
    t.answer();
    expect((await after).accessToken).toBe('t3');
  });

  it('does not cache a failure: the next call asks again', async () => {
    let calls = 0;
    const cache = createTokenCache({
      clock: { now: () => T0 },
      fetchToken: () => {
        calls += 1;
        return calls === 1
          ? Promise.reject(new TransportError('OAUTH2_UNAVAILABLE', 'down'))
          : Promise.resolve({ accessToken: 'ok', expiresAt: T0 + 3_600_000 });
      },
    });
    await expect(cache.get()).rejects.toMatchObject({ code: 'OAUTH2_UNAVAILABLE' });
    expect((await cache.get()).accessToken).toBe('ok');
  });
});

describe('the token request: answers and failures, against a real listener', () => {
  let server: http.Server;
  let answer: (res: http.ServerResponse) => void;
  let url: string;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => answer(res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tenant/oauth2/v2.0/token`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const config = (tokenUrl: string): OAuth2Config => ({
    provider: 'microsoft',
    tokenUrl,
    scope: 'https://outlook.office365.com/.default',
    clientId: 'client',
    clientSecret: 'secret',
    timeoutMs: 2_000,
  });
  const json = (status: number, body: unknown) => (res: http.ServerResponse) => {
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  it('dates the token by expires_in on the injected clock', async () => {
    answer = json(200, { token_type: 'Bearer', expires_in: 3599, access_token: 'abc' });
    expect(await createAccessTokenFetcher(config(url), { clock: { now: () => T0 } })()).toEqual({
      accessToken: 'abc',
      expiresAt: T0 + 3_599_000,
    });
  });

  it("invalid_client / invalid_grant are OAUTH2_REFUSED with the endpoint's description; 503 and no answer OAUTH2_UNAVAILABLE", async () => {
    const fetchToken = createAccessTokenFetcher(config(url), { clock: { now: () => T0 } });
    answer = json(401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided.\r\nTrace ID: x' });
    await expect(fetchToken()).rejects.toMatchObject({ code: 'OAUTH2_REFUSED', message: expect.stringContaining('AADSTS7000215') });
    answer = json(400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
    await expect(fetchToken()).rejects.toMatchObject({ code: 'OAUTH2_REFUSED' });
    answer = json(503, { error: 'temporarily_unavailable' });
    await expect(fetchToken()).rejects.toMatchObject({ code: 'OAUTH2_UNAVAILABLE' });
    await expect(createAccessTokenFetcher(config('http://127.0.0.1:1/token'), { clock: { now: () => T0 } })()).rejects.toMatchObject({
      code: 'OAUTH2_UNAVAILABLE',
    });
  });
});

describe('classification of OAuth2 and Graph failures', () => {
  it('a refused XOAUTH2 login stays OAUTH2_REFUSED although nodemailer attaches 535; a password EAUTH stays EAUTH, held alike', () => {
    const refused = Object.assign(new Error('Invalid login: 535 5.7.3'), { code: 'OAUTH2_REFUSED', responseCode: 535 });
    expect(classifyFailure(refused, FAILURE_CATALOGUE)).toMatchObject({
      kind: 'transient',
      code: 'OAUTH2_REFUSED',
      configProblem: true,
      scope: 'server',
    });
    const password = Object.assign(new Error('Invalid login'), { code: 'EAUTH', responseCode: 535 });
    expect(classifyFailure(password, FAILURE_CATALOGUE)).toMatchObject({
      kind: 'transient',
      code: 'EAUTH',
      configProblem: true,
      scope: 'server',
    });
  });

  it.each([
    [429, { 'Retry-After': '7' }, 'GRAPH_THROTTLED', 7_000],
    [429, {}, 'GRAPH_THROTTLED', 60_000],
    [503, { 'Retry-After': '3' }, 'GRAPH_UNAVAILABLE', 3_000],
    [401, {}, 'OAUTH2_REFUSED', undefined],
    [403, {}, 'GRAPH_ACCESS_DENIED', undefined],
    [404, {}, 'GRAPH_ACCESS_DENIED', undefined],
    [400, {}, 'GRAPH_REJECTED', undefined],
    [413, {}, 'GRAPH_REJECTED', undefined],
  ])('Graph %i → %s', async (status, headers, code, retryAfterMs) => {
    const res = new Response(JSON.stringify({ error: { code: 'SomeCode', message: 'Some message.' } }), { status, headers });
    const error = await classifyGraphResponse(res, T0);
    expect(error).toMatchObject({ code, retryAfterMs });
    expect(error.message).toContain('SomeCode: Some message.');
    const failure = classifyFailure(error, FAILURE_CATALOGUE);
    expect(failure.code).toBe(code);
    expect(failure.kind).toBe(code === 'GRAPH_REJECTED' ? 'permanent' : 'transient');
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfterMs('120', T0)).toBe(120_000);
    expect(parseRetryAfterMs(new Date(T0 + 30_000).toUTCString(), T0)).toBe(30_000);
    expect(parseRetryAfterMs('soon', T0)).toBeUndefined();
    expect(parseRetryAfterMs(null, T0)).toBeUndefined();
  });
});

describe('Graph gets the blind copies as a Bcc header', () => {
  const raw = Buffer.from(
    'From: a@x.example\r\nTo: Ops <ops@x.example>,\r\n b@x.example\r\nCc: c@x.example\r\nReply-To: r@x.example\r\nSubject: s\r\n\r\nbody\r\n',
  );

  it('adds the envelope recipients that no To/Cc header names, and nothing else', () => {
    const out = withBccHeader(raw, ['ops@x.example', 'b@x.example', 'c@x.example', 'audit@x.example', 'r@x.example']).toString();
    expect(out.startsWith('Bcc: audit@x.example, r@x.example\r\nFrom: a@x.example\r\n')).toBe(true);
    expect(out.endsWith(raw.toString())).toBe(true);
    expect(withBccHeader(raw, ['ops@x.example', 'b@x.example'])).toBe(raw);
  });
});
