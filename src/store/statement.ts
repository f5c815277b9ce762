/** What the engines spell differently; both run the rest (`ON CONFLICT … excluded.x`, `RETURNING`, `UPDATE … FROM` a `WITH`). */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** The placeholder of parameter `name`, recording in `names` which parameter each value bound in order is. */
  placeholder(name: string, names: string[]): string;
  /** `<column> <inList(p)>`: the column is one of the array bound to `p`. */
  inList(parameter: string): string;
  /** A parameter value as the driver binds it (booleans and lists have no SQLite type of their own). */
  encode(value: unknown): unknown;
}

export const SQLITE_DIALECT: Dialect = {
  name: 'sqlite',
  // better-sqlite3 binds no numbered `?NNN`: each occurrence is a `?` of its own, its value passed again.
  placeholder: (name, names) => {
    names.push(name);
    return '?';
  },
  // A list travels as one JSON text and json_each unpacks it: one statement text for any length.
  inList: (parameter) => `IN (SELECT value FROM json_each(${parameter}))`,
  encode: (value) => {
    if (typeof value === 'boolean') return value ? 1 : 0;
    return Array.isArray(value) ? JSON.stringify(value) : value;
  },
};

export const POSTGRES_DIALECT: Dialect = {
  name: 'postgres',
  placeholder: (name, names) => `$${names.indexOf(name) + 1 || names.push(name)}`,
  // pg sends a JS array as an array literal; its element type is inferred from the column.
  inList: (parameter) => `= ANY(${parameter})`,
  encode: (value) => value,
};

/** `:name` parameters; a `::type` cast (PostgreSQL) is not one. */
const PARAMETER = /(?<![:\w]):([A-Za-z_]\w*)/g;

/** One SQL statement for both engines, binding `P` and returning rows `R`; compiled on first use per dialect. */
export class Statement<P extends object = Record<string, never>, R = never> {
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

/** A query narrowed by whichever `conditions` apply (AND); one prepared statement per combination, built on first use. */
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

/** A statement over a list of rows, each count a prepared statement of its own; row `i` binds `:<name><i>`. */
export function defineRowsStatement<R = never>(build: (count: number) => string): (count: number) => Statement<Record<string, unknown>, R> {
  return memoize((count) => new Statement(() => build(count)));
}

/** A VALUES cell: its parameter, and its cast where needed (outside an INSERT, PostgreSQL types no VALUES parameter). */
export type ValuesCell = readonly [name: string, type?: 'TEXT' | 'BIGINT' | 'INTEGER'];

/** `(:a0, :b0), (:a1, :b1), …`, each row ending with `shared` (SQL the rows have in common, such as `:now`) when given. */
export function buildValuesRows(cells: readonly ValuesCell[], count: number, shared?: string): string {
  return Array.from({ length: count }, (_, i) => {
    const row = cells.map(([name, type]) => (type ? `CAST(:${name}${i} AS ${type})` : `:${name}${i}`));
    return `(${[...row, ...(shared ? [shared] : [])].join(', ')})`;
  }).join(', ');
}

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

/** The cells of `column [TYPE], …`, each bound to the parameter of its field's name (`dedup_key` → `:dedupKey<i>`). */
export function toValuesCells(columns: string): ValuesCell[] {
  return columns.split(/,\s*/).map((cell) => {
    const [column, type] = cell.split(' ') as [string, ValuesCell[1]];
    return type ? [toFieldName(column), type] : [toFieldName(column)];
  });
}

/** `v (a, b, …) AS (VALUES …)`: `count` rows of `column [TYPE], …` for an UPDATE to join on, each bound as in {@link toValuesCells}. */
export function buildValuesTable(columns: string, count: number): string {
  const names = columns.split(/,\s*/).map((cell) => cell.split(' ')[0]);
  return `v (${names.join(', ')}) AS (VALUES ${buildValuesRows(toValuesCells(columns), count)})`;
}

/** Columns selected under their record's field names (`dedup_key AS "dedupKey"`). */
export function selectAs(columns: string): string {
  return columns
    .split(/,\s*/)
    .map((column) => (toFieldName(column) === column ? column : `${column} AS "${toFieldName(column)}"`))
    .join(', ');
}

function memoize<K, V>(build: (key: K) => V): (key: K) => V {
  const built = new Map<K, V>();
  return (key) => {
    if (!built.has(key)) built.set(key, build(key));
    return built.get(key)!;
  };
}
