import { applyWaivers, buildWaiverEnd, DAY_MS, type WaivablePair, type Waiver } from '../../src/waivers';

const NOW = Date.UTC(2026, 10, 27, 9, 0); // 2026-11-27 09:00 UTC
const LAST_REPORT = NOW - DAY_MS;

/** A waiver made a month ago, in force through `until` unless said otherwise. */
function waiver(id: string, test: string, device: string | null, until = '2027-03-31', extra: Partial<Waiver> = {}): Waiver {
  return {
    id,
    origin: 'store',
    source: 'default',
    test,
    device,
    until,
    endsAt: buildWaiverEnd(until),
    reason: device === null ? 'lab estate, retired in March' : '',
    author: 'alice',
    createdAt: NOW - 30 * DAY_MS,
    expiredAt: null,
    expiredBy: null,
    ...extra,
  };
}

const pair = (device: string, test: string, severity: WaivablePair['severity'] = 'MIDDLE'): WaivablePair => ({ device, test, severity });
const key = (p: WaivablePair) => `${p.device}/${p.test}`;

describe('applyWaivers: which failing pairs a waiver takes out', () => {
  it.each<[string, WaivablePair[], Waiver[], { waived: string[]; failing: string[] }]>([
    ['no waivers: every pair fails', [pair('sw1', 'ntp')], [], { waived: [], failing: ['sw1/ntp'] }],
    [
      'a waiver on its device and test',
      [pair('sw1', 'ntp'), pair('sw2', 'ntp')],
      [waiver('1', 'ntp', 'sw1')],
      { waived: ['sw1/ntp'], failing: ['sw2/ntp'] },
    ],
    [
      'all devices: every device failing the test',
      [pair('sw1', 'ntp'), pair('sw2', 'ntp'), pair('sw1', 'ssh')],
      [waiver('1', 'ntp', null)],
      { waived: ['sw1/ntp', 'sw2/ntp'], failing: ['sw1/ssh'] },
    ],
    [
      'names are exact: another test or case does not match',
      [pair('sw1', 'NTP'), pair('SW1', 'ntp')],
      [waiver('1', 'ntp', 'sw1')],
      { waived: [], failing: ['sw1/NTP', 'SW1/ntp'] },
    ],
    [
      'an expired waiver no longer holds',
      [pair('sw1', 'ntp')],
      [waiver('1', 'ntp', 'sw1', '2026-11-26')],
      { waived: [], failing: ['sw1/ntp'] },
    ],
    [
      'one ended early (expired by hand) no longer holds',
      [pair('sw1', 'ntp')],
      [waiver('1', 'ntp', 'sw1', '2027-03-31', { endsAt: NOW - 1, expiredAt: NOW - 1, expiredBy: 'bob' })],
      { waived: [], failing: ['sw1/ntp'] },
    ],
    [
      'the last day of until still holds',
      [pair('sw1', 'ntp')],
      [waiver('1', 'ntp', 'sw1', '2026-11-27')],
      { waived: ['sw1/ntp'], failing: [] },
    ],
    [
      'a waiver made after now does not hold yet',
      [pair('sw1', 'ntp')],
      [waiver('1', 'ntp', 'sw1', '2027-03-31', { createdAt: NOW + 1 })],
      { waived: [], failing: ['sw1/ntp'] },
    ],
  ])('%s', (_name, pairs, waivers, expected) => {
    const outcome = applyWaivers(pairs, waivers, NOW, { previousReportAt: LAST_REPORT });
    expect(outcome.waived.map((m) => key(m.pair))).toEqual(expected.waived);
    expect(outcome.failing.map(key)).toEqual(expected.failing);
  });

  it('a waiver naming the device decides before an all-devices one, whatever their ends', () => {
    const named = waiver('7', 'ntp', 'sw1', '2026-12-01');
    const outcome = applyWaivers([pair('sw1', 'ntp')], [waiver('3', 'ntp', null, '2027-05-01'), named], NOW);
    expect(outcome.waived).toEqual([{ pair: pair('sw1', 'ntp'), waiver: named }]);
  });
});

describe('applyWaivers: expiring within 7 days', () => {
  it.each<[string, string, boolean]>([
    ['ends tomorrow night', '2026-11-28', true],
    ['ends in 7 days', '2026-12-03', true],
    ['ends in 8 days', '2026-12-04', false],
    ['ends in March', '2027-03-31', false],
  ])('%s (until %s): flagged %s', (_name, until, flagged) => {
    const outcome = applyWaivers([pair('sw1', 'ntp')], [waiver('1', 'ntp', 'sw1', until)], NOW);
    expect(outcome.expiring.map((w) => w.id)).toEqual(flagged ? ['1'] : []);
  });

  it('only waivers that waived something here, each once, soonest first', () => {
    const waivers = [
      waiver('1', 'ntp', null, '2026-12-02'),
      waiver('2', 'ssh', 'sw1', '2026-11-28'),
      waiver('3', 'snmp', 'sw9', '2026-11-28'),
    ];
    const outcome = applyWaivers([pair('sw1', 'ntp'), pair('sw2', 'ntp'), pair('sw1', 'ssh')], waivers, NOW);
    expect(outcome.expiring.map((w) => w.id)).toEqual(['2', '1']);
  });
});

describe('applyWaivers: "waiver expired" (a waiver ended since the previous report, its pair fails again)', () => {
  it.each<[string, Waiver, number | null, boolean]>([
    ['ended last night, after the previous report', waiver('1', 'ntp', 'sw1', '2026-11-26'), LAST_REPORT, true],
    [
      'expired by hand an hour ago',
      waiver('1', 'ntp', 'sw1', '2027-03-31', { endsAt: NOW - 3_600_000, expiredAt: NOW - 3_600_000 }),
      LAST_REPORT,
      true,
    ],
    ['ended before the previous report (that mail already said so)', waiver('1', 'ntp', 'sw1', '2026-11-20'), LAST_REPORT, false],
    ['no previous report to compare with', waiver('1', 'ntp', 'sw1', '2026-11-26'), null, false],
    [
      'made and ended since the previous report: it never hid the pair',
      waiver('1', 'ntp', 'sw1', '2026-11-26', { createdAt: LAST_REPORT + 1 }),
      LAST_REPORT,
      false,
    ],
  ])('%s → %s', (_name, w, previousReportAt, expired) => {
    const outcome = applyWaivers([pair('sw1', 'ntp'), pair('sw2', 'ntp')], [w], NOW, { previousReportAt });
    expect(outcome.failing.map(key)).toEqual(['sw1/ntp', 'sw2/ntp']);
    expect(outcome.waiverExpired.map((m) => [key(m.pair), m.waiver.id])).toEqual(expired ? [['sw1/ntp', '1']] : []);
  });

  it('a pair still waived by another waiver is waived, not "waiver expired"', () => {
    const outcome = applyWaivers([pair('sw1', 'ntp')], [waiver('1', 'ntp', 'sw1', '2026-11-26'), waiver('2', 'ntp', null)], NOW, {
      previousReportAt: LAST_REPORT,
    });
    expect(outcome.waived.map((m) => m.waiver.id)).toEqual(['2']);
    expect(outcome.waiverExpired).toEqual([]);
  });
});

describe('applyWaivers: a HIGH failure hidden on several devices is always named', () => {
  it.each<[string, WaivablePair[], Waiver[], [string, string[]][]]>([
    [
      'all devices, HIGH on two devices: named',
      [pair('sw1', 'telnet', 'HIGH'), pair('sw2', 'telnet', 'HIGH')],
      [waiver('1', 'telnet', null)],
      [['telnet', ['sw1', 'sw2']]],
    ],
    [
      'all devices, HIGH on one device only: not',
      [pair('sw1', 'telnet', 'HIGH'), pair('sw2', 'telnet', 'MIDDLE')],
      [waiver('1', 'telnet', null)],
      [],
    ],
    [
      'all devices, MIDDLE on many devices: not',
      [pair('sw1', 'ntp'), pair('sw2', 'ntp'), pair('sw3', 'ntp')],
      [waiver('1', 'ntp', null)],
      [],
    ],
    [
      'one waiver per device, HIGH on two devices: each names its device',
      [pair('sw1', 'telnet', 'HIGH'), pair('sw2', 'telnet', 'HIGH')],
      [waiver('1', 'telnet', 'sw1'), waiver('2', 'telnet', 'sw2')],
      [],
    ],
    [
      'devices sorted, each once',
      [pair('sw9', 'telnet', 'HIGH'), pair('sw1', 'telnet', 'HIGH'), pair('sw9', 'telnet', 'HIGH')],
      [waiver('1', 'telnet', null)],
      [['telnet', ['sw1', 'sw9']]],
    ],
  ])('%s', (_name, pairs, waivers, named) => {
    const outcome = applyWaivers(pairs, waivers, NOW);
    expect(outcome.mustName.map((h) => [h.test, h.devices])).toEqual(named);
  });
});
