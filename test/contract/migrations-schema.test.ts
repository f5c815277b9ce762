/**
 * Each migration, applied in order, leaves the schema it left when it shipped, on both engines: tables,
 * columns (name, type, nullability, default, order), indexes and constraints after each version, against the
 * fingerprints taken from the migrations as first written (test/fixtures/schema-by-version.json). SQLite's
 * CREATE text is compared with its whitespace folded.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { PG_MIGRATIONS } from '../../src/store';
import { SQLITE_MIGRATIONS } from '../../src/store/migrations';
import { createTestSchema } from '../helpers/pg-schema';

const SHIPPED = JSON.parse(fs.readFileSync(path.join(__dirname, '../fixtures/schema-by-version.json'), 'utf8')) as Record<
  'sqlite' | 'pg',
  Record<string, string>
>;

const fingerprint = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');
const fold = (sql: string | null) => (sql ?? '').replace(/\s+/g, ' ').replace(/\( /g, '(').replace(/ \)/g, ')').trim();

test('SQLite: every migration leaves the schema it shipped with', () => {
  const db = new Database(':memory:');
  const found: Record<string, string> = {};
  for (const m of SQLITE_MIGRATIONS) {
    db.exec(m.sql);
    const objs = db
      .prepare<[], { type: string; name: string; sql: string | null }>(
        "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .all();
    const tables = objs
      .filter((o) => o.type === 'table')
      .map((t) => ({
        t: t.name,
        cols: db.prepare(`PRAGMA table_xinfo(${t.name})`).all(),
        idx: db
          .prepare<[], { name: string }>(`PRAGMA index_list(${t.name})`)
          .all()
          .map((i) => ({ ...i, cols: db.prepare(`PRAGMA index_xinfo(${i.name})`).all() })),
      }));
    found[m.version] = fingerprint({ v: m.version, name: m.name, objs: objs.map((o) => ({ ...o, sql: fold(o.sql) })), tables });
  }
  db.close();
  expect(found).toEqual(SHIPPED.sqlite);
});

test('PostgreSQL: every migration leaves the schema it shipped with', async () => {
  const schema = await createTestSchema('store_schema');
  const found: Record<string, string> = {};
  try {
    for (const m of PG_MIGRATIONS) {
      await schema.query(`BEGIN; ${m.sql}; COMMIT`);
      const cols = await schema.query(
        `SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default, is_identity, identity_generation,
           identity_start, identity_increment FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
        [schema.name],
      );
      const idx = await schema.query<{ indexdef: string }>(
        'SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname',
        [schema.name],
      );
      const cons = await schema.query(
        `SELECT c.conname, t.relname, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
           JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = $1 ORDER BY c.conname`,
        [schema.name],
      );
      const indexes = idx.rows.map((r) => ({ ...r, indexdef: r.indexdef.replaceAll(schema.name, 'S') }));
      found[m.version] = fingerprint({ v: m.version, name: m.name, cols: cols.rows, idx: indexes, cons: cons.rows });
    }
  } finally {
    await schema.drop();
  }
  expect(found).toEqual(SHIPPED.pg);
});
