import type { Dialect } from './dialect';

/** `:name` parameters; a `::type` cast (PostgreSQL) is not one. */
const PARAMETER = /(?<![:\w]):([A-Za-z_]\w*)/g;

/**
 * One SQL statement for both engines: `:name` parameters, the engines' differences from the {@link Dialect}.
 * `P` is what it binds, `R` the row it returns; compiled on first use per dialect, not at import.
 */
export class Statement<P extends object = Record<string, never>, R = never> {
  /** Type-level only: ties the parameters and the row to the statement. */
  declare readonly types: { params: P; row: R };
  /** The text for one engine and the parameter name behind each placeholder, in order. */
  readonly compile: (dialect: Dialect) => { text: string; names: readonly string[] };

  constructor(build: (dialect: Dialect) => string) {
    this.compile = memoize((dialect) => {
      const names: string[] = [];
      const text = build(dialect).replace(PARAMETER, (_match, name: string) => dialect.placeholder(name, names));
      return { text, names };
    });
  }

  /** The values for the placeholders of {@link compile}, in order, encoded for the dialect. */
  bind(dialect: Dialect, params: P): unknown[] {
    const values = params as Record<string, unknown>;
    return this.compile(dialect).names.map((name) => {
      const value = values[name];
      // No engine has an undefined: a missing parameter is a mistake here, not a NULL.
      if (value === undefined) throw new Error(`statement parameter :${name} is missing`);
      return dialect.encode(value);
    });
  }
}

/**
 * A query narrowed by whichever of `conditions` apply, joined with AND (`build` places the WHERE clause):
 * one statement per combination, built on first use, so each stays a prepared statement of its own.
 */
export function defineFilteredStatement<C extends string, P extends object, R>(
  conditions: Record<C, string>,
  build: (where: string, present: readonly C[]) => string,
): (present: readonly C[]) => Statement<P, R> {
  const byKey = memoize((key: string) => {
    const present = (key ? key.split(',') : []) as C[];
    const where = present.length > 0 ? `WHERE ${present.map((name) => conditions[name]).join(' AND ')}` : '';
    return new Statement<P, R>(() => build(where, present));
  });
  return (present) => byKey(present.join(','));
}

/** `!` escapes LIKE's wildcards (with `ESCAPE '!'`), so a name with `%` or `_` matches only itself. */
export function escapeLike(text: string): string {
  return text.replace(/[!%_]/g, (c) => `!${c}`);
}

/** A SQL type to cast a VALUES cell to: outside an INSERT, PostgreSQL gives VALUES' parameters no type of their own. */
export type ValuesType = 'TEXT' | 'BIGINT' | 'INTEGER';

/**
 * A statement over a list of rows: its text built for each row count on first use, each count a
 * prepared statement of its own. Row `i` binds its parameters as `:<name><i>` ({@link toRowsParams}).
 */
export function defineRowsStatement<R = never>(build: (count: number) => string): (count: number) => Statement<Record<string, unknown>, R> {
  return memoize((count) => new Statement(() => build(count)));
}

/** A VALUES cell: the parameter it binds, and the type it is cast to where the statement needs one. */
export type ValuesCell = readonly [name: string, type?: ValuesType];

/**
 * `(:a0, :b0), (:a1, :b1), …`: `count` rows of these parameters, each cast where a type is given,
 * each row ending with `shared` (SQL the rows have in common, such as `:now`) when given.
 */
export function buildValuesRows(cells: readonly ValuesCell[], count: number, shared?: string): string {
  return Array.from({ length: count }, (_, i) => {
    const row = cells.map(([name, type]) => (type ? `CAST(:${name}${i} AS ${type})` : `:${name}${i}`));
    return `(${[...row, ...(shared ? [shared] : [])].join(', ')})`;
  }).join(', ');
}

/** The parameters of a rows statement: each row's named `<name><i>`, next to the ones all rows share. */
export function toRowsParams(rows: readonly object[], shared: object = {}): Record<string, unknown> {
  const params: Record<string, unknown> = { ...shared };
  rows.forEach((row, i) => {
    for (const [name, value] of Object.entries(row)) params[`${name}${i}`] = value;
  });
  return params;
}

/** A column's name as its record's field: `dedup_key` → `dedupKey`. */
export function toFieldName(column: string): string {
  return column.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

/**
 * The cells of `column [TYPE], …`, each bound to the parameter of its field's name (`dedup_key` → `:dedupKey<i>`)
 * and cast to its type when one is given.
 */
export function toValuesCells(columns: string): ValuesCell[] {
  return columns.split(/,\s*/).map((cell) => {
    const [column, type] = cell.split(' ') as [string, ValuesType?];
    return type ? [toFieldName(column), type] : [toFieldName(column)];
  });
}

/** Columns selected under their record's field names (`dedup_key AS "dedupKey"`): the rows come back as records. */
export function selectAs(columns: string): string {
  return columns
    .split(/,\s*/)
    .map((column) => (toFieldName(column) === column ? column : `${column} AS "${toFieldName(column)}"`))
    .join(', ');
}

/** `build`'s value for each key, built on first use. */
function memoize<K, V>(build: (key: K) => V): (key: K) => V {
  const built = new Map<K, V>();
  return (key) => {
    if (!built.has(key)) built.set(key, build(key));
    return built.get(key)!;
  };
}
