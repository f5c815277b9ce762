/**
 * The dashboard's waivers pages on the real relay (a real listener, SQLite in a temp dir): the add form
 * opened pre-filled from a link (names only, no authority: it needs a session), its CSRF check, its
 * problems shown with what was typed, the list with its filters, and expiring from the list.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../../src/shared';
import { decodeEntities, hrefsOf, textOf } from '../helpers/html';
import { makeTempDir, startTestRelay, type TestRelay } from '../helpers/relay-harness';

const ADMIN_TOKEN = 'waivers-dashboard-token-0123456789';
const NOW = Date.UTC(2026, 10, 27, 9, 0);
const FILE = `waivers:
  - test: snmp-v3
    all_devices: true
    until: 2026-11-01
    reason: SNMP rollout
    author: alice
    created: 2026-10-01
`;

describe('the waivers pages of the dashboard', () => {
  let relay: TestRelay;
  let cookie: string;
  const clock: Clock & { at: number } = { at: NOW, now: () => clock.at };

  beforeEach(async () => {
    clock.at = NOW;
    const dir = makeTempDir('waivers-ui-');
    fs.writeFileSync(path.join(dir, 'waivers.yaml'), FILE);
    relay = await startTestRelay({ ADMIN_TOKEN, WAIVERS_FILE: path.join(dir, 'waivers.yaml') }, { clock });
    const login = await fetch(`${relay.url}/ui/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `token=${ADMIN_TOKEN}`,
    });
    cookie = login.headers.get('set-cookie')!.split(';')[0];
  });
  afterEach(() => relay.stop());

  const get = (route: string, withCookie = true) =>
    fetch(`${relay.url}${route}`, { redirect: 'manual', headers: withCookie ? { Cookie: cookie } : {} });
  const post = (route: string, fields: Record<string, string>) =>
    fetch(`${relay.url}${route}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
  const valueOf = (page: string, name: string) => decodeEntities(new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1] ?? '');
  const rowsOf = (page: string) =>
    [...page.matchAll(/<tr data-waiver="([^"]+)" data-status="([^"]+)" data-origin="([^"]+)">/g)].map((m) => m.slice(1));

  it('a link opens the form pre-filled; the waiver added there is listed as active, beside the file`s expired one', async () => {
    expect((await get('/ui/waivers/new?source=default&test=ntp-synced&device=sw%201', false)).headers.get('location')).toBe('/ui/login');
    const form = await (await get('/ui/waivers/new?source=default&test=ntp-synced&device=sw%201')).text();
    expect([valueOf(form, 'test'), valueOf(form, 'device'), valueOf(form, 'until')]).toEqual(['ntp-synced', 'sw 1', '']);
    expect(form).toMatch(/<option selected>default<\/option>/);
    const fields = {
      csrf: valueOf(form, 'csrf'),
      source: 'default',
      test: 'ntp-synced',
      device: 'sw 1',
      until: '2027-01-15',
      reason: '',
      author: 'dana',
    };

    const added = await post('/ui/waivers', fields);
    expect(added.status).toBe(303);
    const id = /added=(\d+)$/.exec(added.headers.get('location')!)![1];
    const list = await (await get(added.headers.get('location')!)).text();
    expect(textOf(list)).toContain(`Waiver #${id} added.`);
    expect(rowsOf(list)).toEqual([
      [id, 'active', 'store'],
      ['file:1', 'expired', 'file'],
    ]);
    expect(textOf(list)).toContain('snmp-v3 · all devices');
    expect(textOf(list)).toContain('WAIVERS_FILE (read-only)');
    // Only the stored waiver in force can be expired here.
    expect(list.match(/action="\/ui\/waivers\/[^"]+\/expire"/g)).toEqual([`action="/ui/waivers/${id}/expire"`]);
    expect((await relay.relay.store.listWaivers({ at: NOW })).map((w) => [w.test, w.device, w.author])).toEqual([
      ['ntp-synced', 'sw 1', 'dana'],
    ]);
    // Each row offers the form again, pre-filled, to renew it (the link a mail will carry: names only).
    const renew = hrefsOf(list).find((href) => href.includes('test=ntp-synced'));
    expect(renew).toBe('/ui/waivers/new?source=default&test=ntp-synced&device=sw+1');
    expect(valueOf(await (await get(renew!)).text(), 'device')).toBe('sw 1');
  });

  it('refuses a form without the session`s CSRF token, and shows every problem with what was typed', async () => {
    const form = await (await get('/ui/waivers/new')).text();
    const typed = { source: 'default', test: 'telnet', device: '', all_devices: 'on', until: '2027-12-31', reason: '', author: 'erin' };
    expect((await post('/ui/waivers', { ...typed, csrf: 'forged' })).status).toBe(403);
    const refused = await post('/ui/waivers', { ...typed, csrf: valueOf(form, 'csrf') });
    expect(refused.status).toBe(400);
    const page = await refused.text();
    expect(textOf(page)).toContain('reason is required when the waiver covers all devices');
    expect(textOf(page)).toContain('until may be at most 180 days after 2026-11-27');
    expect([valueOf(page, 'test'), valueOf(page, 'author'), valueOf(page, 'until')]).toEqual(['telnet', 'erin', '2027-12-31']);
    expect(page).toContain('name="all_devices" value="on" checked');
    expect(await relay.relay.store.listWaivers({ at: NOW })).toEqual([]);
  });

  it('expires a waiver from the list: it stays, as expired, with who ended it; filters narrow the list', async () => {
    const csrf = valueOf(await (await get('/ui/waivers/new')).text(), 'csrf');
    await post('/ui/waivers', { csrf, source: 'default', test: 'ntp', device: 'sw1', until: '2026-12-01', author: 'dana' });
    await post('/ui/waivers', { csrf, source: 'default', test: 'ssh', device: 'sw2', until: '2027-02-01', author: 'dana' });
    const [ntp, ssh] = (await relay.relay.store.listWaivers({ at: NOW })).reverse();
    expect(rowsOf(await (await get('/ui/waivers?status=expiring')).text())).toEqual([[ntp.id, 'expiring', 'store']]);
    expect(rowsOf(await (await get('/ui/waivers?test=ssh')).text())).toEqual([[ssh.id, 'active', 'store']]);

    expect((await post(`/ui/waivers/${ssh.id}/expire`, { author: 'frank' })).status).toBe(403);
    const expired = await post(`/ui/waivers/${ssh.id}/expire`, { csrf, author: 'frank' });
    expect(expired.headers.get('location')).toBe(`/ui/waivers?expired=${ssh.id}`);
    const list = await (await get('/ui/waivers?status=expired')).text();
    expect(rowsOf(list)).toEqual([
      [ssh.id, 'expired', 'store'],
      ['file:1', 'expired', 'file'],
    ]);
    expect(textOf(list)).toContain('by frank');
    const again = await post(`/ui/waivers/${ssh.id}/expire`, { csrf, author: 'frank' });
    expect([again.status, textOf(await again.text())]).toEqual([409, expect.stringContaining(`Waiver ${ssh.id} has already ended.`)]);
    expect((await post('/ui/waivers/file:1/expire', { csrf, author: 'frank' })).status).toBe(409);
  });
});
