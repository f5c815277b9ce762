import { buildWaiverEnd } from '../../src/waivers';
import { configMessages, loadWithFiles } from '../helpers/config-files';

const load = loadWithFiles;
const messagesOf = configMessages;

const GOOD = `waivers:
  - test: telnet-disabled
    device: lab-sw1
    until: 2027-03-31
    reason: lab switch, retired in March
    author: alice@example.com
    created: 2026-11-20
  - source: default
    test: ntp-synced
    all_devices: true
    until: 2026-06-30
    reason: NTP servers being replaced
    author: bob
    created: 2026-01-10
`;

describe('WAIVERS_FILE', () => {
  it('without it: no file waivers', () => {
    expect(load({}).waivers).toEqual({ fileWaivers: [] });
  });

  it("reads the file's entries as read-only waivers numbered in file order; one already over stays as history", () => {
    const { waivers } = load({ WAIVERS_FILE: 'waivers.yaml' }, { '/srv/waivers.yaml': GOOD });
    expect(waivers.file).toBe('/srv/waivers.yaml');
    expect(waivers.fileWaivers).toEqual([
      {
        id: 'file:1',
        origin: 'file',
        source: 'default',
        test: 'telnet-disabled',
        device: 'lab-sw1',
        until: '2027-03-31',
        endsAt: buildWaiverEnd('2027-03-31'),
        reason: 'lab switch, retired in March',
        author: 'alice@example.com',
        createdAt: Date.UTC(2026, 10, 20),
        expiredAt: null,
        expiredBy: null,
      },
      expect.objectContaining({ id: 'file:2', device: null, until: '2026-06-30', createdAt: Date.UTC(2026, 0, 10) }),
    ]);
  });

  it('lists every problem with its line, the waiver and the field', () => {
    const bad = `waivers:
  - test: telnet-disabled
    until: 2027-03-31
    author: alice
    created: 2026-11-20
  - test: ntp
    all_devices: true
    until: 2026-12-01
    author: bob
    created: 2026-11-20
  - test: ssh
    device: sw1
    source: prod
    until: 2027-12-31
    author: carol
    created: 2026-11-20
    colour: red
`;
    expect(messagesOf({ WAIVERS_FILE: '/etc/w.yaml' }, { '/etc/w.yaml': bad })).toEqual([
      'WAIVERS_FILE: /etc/w.yaml line 2: waiver 1 device: is required (or all devices, with a reason)',
      'WAIVERS_FILE: /etc/w.yaml line 6: waiver 2 reason: is required when the waiver covers all devices',
      'WAIVERS_FILE: /etc/w.yaml line 11: waiver 3: unknown key colour (check the spelling)',
      'WAIVERS_FILE: /etc/w.yaml line 14: waiver 3 until: may be at most 180 days after 2026-11-20',
      'WAIVERS_FILE: /etc/w.yaml line 13: waiver 3 source: must be a configured source (default)',
    ]);
  });

  it('checks until against 180 days from the entry`s created day, and the source against the configured ones', () => {
    const entry = (extra: string) => `waivers:\n  - test: ssh\n    device: sw1\n    author: carol\n    created: 2026-11-20\n${extra}`;
    expect(messagesOf({ WAIVERS_FILE: 'w.yaml' }, { '/srv/w.yaml': entry('    until: 2027-05-20\n') })).toEqual([
      'WAIVERS_FILE: /srv/w.yaml line 6: waiver 1 until: may be at most 180 days after 2026-11-20',
    ]);
    expect(messagesOf({ WAIVERS_FILE: 'w.yaml' }, { '/srv/w.yaml': entry('    until: 2027-05-19\n') })).toEqual([]);
    expect(messagesOf({ WAIVERS_FILE: 'w.yaml' }, { '/srv/w.yaml': entry('    until: 2026-12-20\n    source: lab\n') })).toEqual([
      'WAIVERS_FILE: /srv/w.yaml line 7: waiver 1 source: must be a configured source (default)',
    ]);
  });

  it('a missing file is named', () => {
    expect(messagesOf({ WAIVERS_FILE: 'nope.yaml' }, {})).toEqual(['WAIVERS_FILE: cannot read /srv/nope.yaml: ENOENT']);
  });
});
