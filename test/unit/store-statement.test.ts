// The statement compiler is the store folder's own machinery (not behind src/store/index.ts): the
// contract tests cover every statement on both engines; these pin the placeholder rules they rely on.
import { POSTGRES_DIALECT, SQLITE_DIALECT } from '../../src/store/dialect';
import { defineStatement } from '../../src/store/statement';

const statement = defineStatement<{ id: number; now: number; ids: number[]; flag: boolean }>(
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
