// The statement compiler is the store folder's own machinery (not behind src/store/index.ts): the
// contract tests cover every statement on both engines; these pin the placeholder rules they rely on.
import { buildValuesRows, defineRowsStatement, POSTGRES_DIALECT, SQLITE_DIALECT, Statement, toRowsParams } from '../../src/store/statement';

const statement = new Statement<{ id: number; now: number; ids: number[]; flag: boolean }>(
  (d) => `UPDATE t SET at = :now, flag = :flag, n = COUNT(*)::int WHERE id = :id AND updated_at < :now AND id ${d.inList(':ids')}`,
);
const params = { id: 7, now: 1_000, ids: [1, 2], flag: true };

describe('a statement written once', () => {
  test('PostgreSQL numbers each name once, however often it appears; a ::cast is not a parameter', () => {
    expect(statement.compile(POSTGRES_DIALECT).text).toBe(
      'UPDATE t SET at = $1, flag = $2, n = COUNT(*)::int WHERE id = $3 AND updated_at < $1 AND id = ANY($4)',
    );
    expect(statement.bind(POSTGRES_DIALECT, params)).toEqual([1_000, true, 7, [1, 2]]);
  });

  test('SQLite binds by position, a value per occurrence; booleans and lists become what SQLite stores', () => {
    expect(statement.compile(SQLITE_DIALECT).text).toBe(
      'UPDATE t SET at = ?, flag = ?, n = COUNT(*)::int WHERE id = ? AND updated_at < ? AND id IN (SELECT value FROM json_each(?))',
    );
    expect(statement.bind(SQLITE_DIALECT, params)).toEqual([1_000, 1, 7, 1_000, '[1,2]']);
  });

  test('a missing parameter is an error, never a NULL', () => {
    expect(() => statement.bind(SQLITE_DIALECT, { ...params, id: undefined as unknown as number })).toThrow(':id');
  });
});

describe('a statement over a list of rows', () => {
  const settle = defineRowsStatement(
    (count) => `WITH v (id, state) AS (VALUES ${buildValuesRows([['id', 'BIGINT'], ['state']], count, ':now')}) UPDATE t SET at = :now`,
  );

  test('row i binds its own values as :name<i>, the shared ones once; each row count is a statement of its own', () => {
    const params = toRowsParams(
      [
        { id: 4, state: 'sent' },
        { id: 9, state: 'dead' },
      ],
      { now: 1_000 },
    );
    expect(settle(2).compile(POSTGRES_DIALECT).text).toBe(
      'WITH v (id, state) AS (VALUES (CAST($1 AS BIGINT), $2, $3), (CAST($4 AS BIGINT), $5, $3)) UPDATE t SET at = $3',
    );
    expect(settle(2).bind(POSTGRES_DIALECT, params)).toEqual([4, 'sent', 1_000, 9, 'dead']);
    expect(settle(1).bind(SQLITE_DIALECT, toRowsParams([{ id: 4, state: 'sent' }], { now: 1_000 }))).toEqual([4, 'sent', 1_000, 1_000]);
    expect(settle(2)).toBe(settle(2));
  });
});
