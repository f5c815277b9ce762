import { DAY_MS, parseNewWaiver, type WaiverRules } from '../../src/waivers';

const NOW = Date.UTC(2026, 10, 27, 9, 0); // 2026-11-27 09:00 UTC
const RULES: WaiverRules = { now: NOW, sources: ['default', 'lab'] };
const BASE = { test: 'ntp', device: 'sw1', until: '2027-03-31', author: 'alice', reason: 'retired in March' };

describe('parseNewWaiver: the rules every way of adding a waiver shares', () => {
  it('builds the waiver to store: the default source, the end of its last day (UTC), made now', () => {
    expect(parseNewWaiver(BASE, RULES)).toEqual({
      ok: true,
      waiver: { ...BASE, source: 'default', endsAt: Date.UTC(2027, 3, 1), createdAt: NOW },
    });
  });

  it('all devices is a device of null, with its reason', () => {
    const parsed = parseNewWaiver({ ...BASE, device: '', allDevices: true, source: 'lab' }, RULES);
    expect(parsed.ok && parsed.waiver).toMatchObject({ device: null, source: 'lab', reason: 'retired in March' });
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    ['no device and not all devices', { ...BASE, device: '' }, ['device']],
    ['a device and all devices', { ...BASE, allDevices: true }, ['device']],
    ['all devices without a reason', { ...BASE, device: undefined, allDevices: true, reason: ' ' }, ['reason']],
    ['no test', { ...BASE, test: '  ' }, ['test']],
    ['no author', { ...BASE, author: undefined }, ['author']],
    ['a date that does not exist', { ...BASE, until: '2027-02-30' }, ['until']],
    ['not a date', { ...BASE, until: 'next year' }, ['until']],
    ['yesterday', { ...BASE, until: '2026-11-26' }, ['until']],
    ['beyond 180 days', { ...BASE, until: '2027-05-27' }, ['until']],
    ['an unknown source', { ...BASE, source: 'prod' }, ['source']],
    ['several problems at once', { test: '', until: 'x', author: '' }, ['test', 'author', 'device', 'until']],
    ['a missing author with a date too far and no device', { test: 'ntp', until: '2099-01-01' }, ['author', 'device', 'until']],
    ['a wrong type beside an unknown source', { ...BASE, allDevices: 'yes', source: 'prod' }, ['allDevices', 'source']],
  ])('refuses %s, naming %j', (_name, request, paths) => {
    const parsed = parseNewWaiver(request, RULES);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? [] : parsed.issues.map((i) => i.path)).toEqual(paths);
  });

  it.each([
    ['today', '2026-11-27', true],
    ['exactly 180 days after today', '2027-05-26', true],
    ['one day more', '2027-05-27', false],
  ])('until %s (%s): accepted %s', (_name, until, ok) => {
    expect(parseNewWaiver({ ...BASE, until }, RULES).ok).toBe(ok);
  });

  it('a file entry counts from its own creation day and may have run out already', () => {
    const created = NOW - 200 * DAY_MS;
    const parsed = parseNewWaiver({ ...BASE, until: '2026-06-01' }, { ...RULES, createdAt: created, pastAllowed: true });
    expect(parsed.ok && parsed.waiver.createdAt).toBe(created);
    expect(parseNewWaiver({ ...BASE, until: '2026-06-01' }, RULES).ok).toBe(false);
  });
});
