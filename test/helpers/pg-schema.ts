import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The machine's PostgreSQL (trust auth) unless TEST_DATABASE_URL points elsewhere. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestSchema {
  name: string;
  /** TEST_DATABASE_URL with `options=-c search_path=<schema>`: every connection works in the schema. */
  url: string;
  /** Runs one statement in the schema (for assertions that look at the database directly). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>;
  /** Drops the schema and everything in it. */
  drop(): Promise<void>;
}

/**
 * A fresh schema for one test file, so runs (and parallel jest workers) never see each other's rows.
 * The caller drops it in afterAll.
 */
export async function createTestSchema(prefix = 'relay_test'): Promise<TestSchema> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 });
  admin.on('error', () => undefined);
  await admin.query(`CREATE SCHEMA ${name}`);
  const url = withSearchPath(TEST_DATABASE_URL, name);
  const inSchema = new pg.Pool({ connectionString: url, max: 2 });
  inSchema.on('error', () => undefined);
  return {
    name,
    url,
    query: (sql, params) => inSchema.query(sql, params),
    async drop() {
      await inSchema.end();
      try {
        await admin.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** Adds `options=-c search_path=<schema>` to a connection string. */
function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}
