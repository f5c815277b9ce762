/**
 * The admin API's /api/waivers on the real relay (a real listener on port 0, SQLite in a temp dir), with
 * WAIVERS_FILE beside it: add, list with filters, expire, the errors' codes, the audit lines and the
 * gauge of active waivers on /metrics.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../../src/shared';
import { makeTempDir, startTestRelay, type TestRelay } from '../helpers/relay-harness';

const ADMIN_TOKEN = 'waivers-admin-token-0123456789';
const NOW = Date.UTC(2026, 10, 27, 9, 0);
const FILE = `waivers:
  - test: telnet-disabled
    device: lab-sw1
    until: 2027-03-31
    reason: lab switch, retired in March
    author: alice
    created: 2026-11-20
`;

describe('the admin API for waivers', () => {
  let relay: TestRelay;
  const clock: Clock & { at: number } = { at: NOW, now: () => clock.at };

  beforeEach(async () => {
    clock.at = NOW;
    const dir = makeTempDir('waivers-api-');
    fs.writeFileSync(path.join(dir, 'waivers.yaml'), FILE);
    relay = await startTestRelay({ ADMIN_TOKEN, WAIVERS_FILE: path.join(dir, 'waivers.yaml') }, { clock });
  });
  afterEach(() => relay.stop());

  const call = (method: string, route: string, body?: unknown, token = ADMIN_TOKEN) =>
    fetch(`${relay.url}${route}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  const json = async (response: Response) => (await response.json()) as Record<string, any>;
  const gauge = async () => /^compliance_relay_waivers_active (\d+)$/m.exec(await (await fetch(`${relay.url}/metrics`)).text())?.[1];

  it('adds a waiver, lists it with the file`s (read-only), and counts both as active', async () => {
    const request = { test: 'ntp-synced', device: 'sw1', until: '2026-12-02', reason: 'awaiting replacement', author: 'bob' };
    const added = await call('POST', '/api/waivers', request);
    expect(added.status).toBe(201);
    const { waiver } = await json(added);
    expect(waiver).toEqual({
      id: expect.stringMatching(/^\d+$/),
      origin: 'store',
      readOnly: false,
      status: 'expiring',
      source: 'default',
      test: 'ntp-synced',
      device: 'sw1',
      allDevices: false,
      until: '2026-12-02',
      endsAt: '2026-12-03T00:00:00.000Z',
      reason: 'awaiting replacement',
      author: 'bob',
      createdAt: new Date(NOW).toISOString(),
      expiredAt: null,
      expiredBy: null,
    });
    const listed = (await json(await call('GET', '/api/waivers'))).waivers as { id: string; readOnly: boolean }[];
    expect(listed.map((w) => [w.id, w.readOnly])).toEqual([
      [waiver.id, false],
      ['file:1', true],
    ]);
    expect((await json(await call('GET', '/api/waivers?status=expiring'))).waivers.map((w: { id: string }) => w.id)).toEqual([waiver.id]);
    expect((await json(await call('GET', '/api/waivers?test=telnet-disabled'))).waivers.map((w: { id: string }) => w.id)).toEqual([
      'file:1',
    ]);
    expect((await json(await call('GET', `/api/waivers/${waiver.id}`))).waiver).toEqual(waiver);
    expect(await gauge()).toBe('2');

    const audit = relay.logs.map((line) => JSON.parse(line) as Record<string, unknown>).find((l) => l.audit === 'waiver.add');
    expect(audit?.waiver).toEqual({
      id: waiver.id,
      source: 'default',
      test: 'ntp-synced',
      device: 'sw1',
      until: '2026-12-02',
      reason: 'awaiting replacement',
      author: 'bob',
    });
  });

  it('expires a stored waiver (kept, with who ended it); a file`s, an ended or an unknown one is refused with its code', async () => {
    const { waiver } = await json(
      await call('POST', '/api/waivers', { test: 'ntp', allDevices: true, until: '2027-01-31', reason: 'lab', author: 'bob' }),
    );
    clock.at = NOW + 3_600_000;
    const expired = await call('POST', `/api/waivers/${waiver.id}/expire`, { author: 'carol' });
    expect(expired.status).toBe(200);
    expect((await json(expired)).waiver).toMatchObject({
      status: 'expired',
      expiredBy: 'carol',
      expiredAt: new Date(NOW + 3_600_000).toISOString(),
    });
    expect((await json(await call('GET', '/api/waivers?status=expired'))).waivers.map((w: { id: string }) => w.id)).toEqual([waiver.id]);
    expect(await gauge()).toBe('1');
    const audit = relay.logs.map((line) => JSON.parse(line) as Record<string, unknown>).find((l) => l.audit === 'waiver.expire');
    expect(audit?.waiver).toMatchObject({ id: waiver.id, device: '(all devices)', reason: 'lab', author: 'bob', expiredBy: 'carol' });

    const codes = async (response: Response) => [response.status, (await json(response)).error.code];
    expect(await codes(await call('POST', `/api/waivers/${waiver.id}/expire`, { author: 'carol' }))).toEqual([409, 'CONFLICT']);
    expect(await codes(await call('POST', '/api/waivers/file:1/expire', { author: 'carol' }))).toEqual([409, 'CONFLICT']);
    expect(await codes(await call('POST', '/api/waivers/4242/expire', { author: 'carol' }))).toEqual([404, 'NOT_FOUND']);
    expect(await codes(await call('POST', '/api/waivers/file:1/expire', {}))).toEqual([400, 'INVALID_REQUEST']);
    expect(await codes(await call('GET', '/api/waivers/4242'))).toEqual([404, 'NOT_FOUND']);
  });

  it('refuses a bad waiver with every problem, bad JSON, bad filters and a missing token, storing nothing', async () => {
    const bad = await call('POST', '/api/waivers', { test: 'ntp', allDevices: true, until: '2027-12-31', author: 'bob', source: 'lab' });
    expect(bad.status).toBe(400);
    const { error } = await json(bad);
    expect(error.code).toBe('INVALID_REQUEST');
    expect(error.issues.map((i: { path: string }) => i.path)).toEqual(['reason', 'until', 'source']);
    expect((await json(await call('POST', '/api/waivers', '{"test": '))).error.code).toBe('BODY_NOT_JSON');
    expect((await json(await call('GET', '/api/waivers?status=forever'))).error).toMatchObject({
      code: 'INVALID_REQUEST',
      issues: [{ path: 'status' }],
    });
    const anonymous = await call('GET', '/api/waivers', undefined, 'wrong-token-0123456789');
    expect([anonymous.status, (await json(anonymous)).error.code, anonymous.headers.get('www-authenticate')]).toEqual([
      401,
      'UNAUTHORIZED',
      'Bearer realm="compliance-relay"',
    ]);
    expect((await json(await call('GET', '/api/waivers'))).waivers.map((w: { id: string }) => w.id)).toEqual(['file:1']);
  });
});

describe('without ADMIN_TOKEN', () => {
  it('the waivers API is off like the rest of the admin API', async () => {
    const relay = await startTestRelay({});
    try {
      const response = await fetch(`${relay.url}/api/waivers`);
      expect([response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([404, 'ADMIN_DISABLED']);
    } finally {
      await relay.stop();
    }
  });
});
