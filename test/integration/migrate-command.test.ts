import fs from 'node:fs';
import { EXIT_UNAVAILABLE, runCli } from '../../src/cli';
import { PG_MIGRATIONS } from '../../src/store';
import { captureIo } from '../helpers/cli-io';
import { createTestSchema } from '../helpers/pg-schema';
import { makeTempDir } from '../helpers/relay-harness';

const migrate = (env: Record<string, string>, cwd: string) => {
  const io = captureIo(env, cwd);
  return runCli(['node', 'compliance-relay', 'migrate'], io).then((code) => ({ code, out: io.out(), err: io.err() }));
};

describe('compliance-relay migrate', () => {
  let dir: string;
  beforeEach(() => (dir = makeTempDir('migrate-')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('applies the PostgreSQL migrations once, then says the schema is up to date, never showing the password', async () => {
    const schema = await createTestSchema('migrate_cmd');
    try {
      const url = new URL(schema.url);
      url.password = 'not-needed-with-trust';
      const env = { DATABASE_URL: url.toString(), DATA_DIR: dir };
      const first = await migrate(env, dir);
      expect(first.code).toBe(0);
      expect(first.out).toContain(`Applied ${PG_MIGRATIONS.length} migration(s) to PostgreSQL`);
      expect(first.out).toContain('001-deliveries');
      const again = await migrate(env, dir);
      expect(again).toMatchObject({ code: 0, err: '' });
      expect(again.out).toContain(`is up to date (schema version ${PG_MIGRATIONS.at(-1)!.version})`);
      expect(first.out + again.out).not.toContain('not-needed-with-trust');
      const { rows } = await schema.query('SELECT version FROM schema_migrations');
      expect(rows).toHaveLength(PG_MIGRATIONS.length);
    } finally {
      await schema.drop();
    }
  });

  test('works for SQLite too', async () => {
    const first = await migrate({ DATA_DIR: dir }, dir);
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/Applied \d+ migration\(s\) to SQLite/);
    expect((await migrate({ DATA_DIR: dir }, dir)).out).toContain('is up to date');
  });

  test('an unreachable database exits 69 (EX_UNAVAILABLE) with the reason, not a stack', async () => {
    const result = await migrate({ DATABASE_URL: 'postgres://relay:hunter2@127.0.0.1:1/relay', DATA_DIR: dir }, dir);
    expect(result.code).toBe(EXIT_UNAVAILABLE);
    expect(result.err).toContain('cannot migrate PostgreSQL 127.0.0.1:1/relay');
    expect(result.err).toContain('ECONNREFUSED');
    expect(result.err).not.toContain('hunter2');
    expect(result.err).not.toMatch(/\n\s+at /);
  });
});
