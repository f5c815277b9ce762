/**
 * `compliance-relay waivers list|add|expire` as an operator runs them (test/helpers/run-cli.ts), on the
 * store `serve` uses: SQLite in a temp dir, and PostgreSQL (DATABASE_URL), with a WAIVERS_FILE beside.
 */
import fs from 'node:fs';
import path from 'node:path';
import { EXIT_USAGE } from '../../src/cli';
import { createTestSchema, type TestSchema } from '../helpers/pg-schema';
import { makeTempDir } from '../helpers/relay-harness';
import { runCliCaptured } from '../helpers/run-cli';

/** A day `n` days from today (UTC), as the commands take it: they run on the system clock. */
const day = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString().slice(0, 10);

const STORES: [string, (dir: string) => Promise<{ env: Record<string, string>; drop: () => Promise<void> }>][] = [
  ['SQLite', async (dir) => ({ env: { DATA_DIR: path.join(dir, 'data') }, drop: async () => undefined })],
  [
    'PostgreSQL',
    async (dir) => {
      const schema: TestSchema = await createTestSchema('waivers_cli');
      return { env: { DATA_DIR: path.join(dir, 'data'), DATABASE_URL: schema.url }, drop: () => schema.drop() };
    },
  ],
];

describe.each(STORES)('waivers on the command line (%s)', (_name, openStore) => {
  let dir: string;
  let env: Record<string, string>;
  let drop: () => Promise<void>;

  beforeEach(async () => {
    dir = makeTempDir('waivers-cli-');
    const created = day(-10);
    fs.writeFileSync(
      path.join(dir, 'waivers.yaml'),
      `waivers:\n  - test: telnet\n    device: lab-sw1\n    until: ${day(60)}\n    reason: lab\n    author: alice\n    created: ${created}\n`,
    );
    ({ env, drop } = await openStore(dir));
    env.WAIVERS_FILE = path.join(dir, 'waivers.yaml');
  });
  afterEach(async () => {
    await drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => runCliCaptured(['waivers', ...args], env);
  const listJson = async (...args: string[]) =>
    JSON.parse((await cli('list', '--json', ...args)).stdout) as { waivers: Record<string, unknown>[] };

  it('adds, lists (with the file`s, read-only) and expires, printing an audit line for each change', async () => {
    const added = await cli(
      'add',
      '--test',
      'ntp-synced',
      '--device',
      'sw1',
      '--until',
      day(30),
      '--reason',
      'awaiting replacement',
      '--author',
      'bob',
    );
    expect(added.code).toBe(0);
    expect(added.stdout).toBe(`Added waiver 1: ntp-synced on sw1 (default) until ${day(30)} (end of that day, UTC).\n`);
    expect(JSON.parse(added.stderr.trim())).toMatchObject({
      audit: 'waiver.add',
      waiver: { id: '1', test: 'ntp-synced', device: 'sw1', until: day(30), reason: 'awaiting replacement', author: 'bob' },
    });

    const table = await cli('list');
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+STATUS\s+SOURCE\s+TEST\s+DEVICE\s+UNTIL\s+AUTHOR\s+REASON$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/))).toEqual([
      ['1', 'active', 'default', 'ntp-synced', 'sw1', day(30), 'bob', 'awaiting replacement'],
      ['file:1', 'active (file)', 'default', 'telnet', 'lab-sw1', day(60), 'alice', 'lab'],
    ]);

    const expired = await cli('expire', '1', '--author', 'carol');
    expect([expired.code, expired.stdout]).toEqual([0, 'Expired waiver 1: ntp-synced on sw1 (default) counts as failing again.\n']);
    expect(JSON.parse(expired.stderr.trim())).toMatchObject({ audit: 'waiver.expire', waiver: { id: '1', expiredBy: 'carol' } });
    expect((await listJson('--status', 'expired')).waivers).toEqual([
      expect.objectContaining({ id: '1', status: 'expired', expiredBy: 'carol' }),
    ]);
    expect((await listJson('--status', 'active')).waivers.map((w) => [w.id, w.readOnly])).toEqual([['file:1', true]]);
  });

  it('refuses what the rules refuse, naming the flags, and changes nothing', async () => {
    const refused = await cli('add', '--test', 'ntp', '--all-devices', '--until', day(400), '--author', 'bob');
    expect(refused.code).toBe(EXIT_USAGE);
    expect(refused.stderr).toBe(
      'compliance-relay: The waiver is invalid.\n' +
        '  - --reason: is required when the waiver covers all devices\n' +
        `  - --until: may be at most 180 days after ${day(0)}\n`,
    );
    expect((await cli('expire', 'file:1', '--author', 'bob')).stderr).toBe(
      'compliance-relay: Waiver file:1 comes from WAIVERS_FILE: edit the file to end it.\n',
    );
    expect((await cli('expire', '7', '--author', 'bob')).stderr).toBe('compliance-relay: No waiver 7.\n');
    expect((await cli('list', '--status', 'forever')).code).toBe(EXIT_USAGE);
    expect((await listJson()).waivers.map((w) => w.id)).toEqual(['file:1']);
  });
});
