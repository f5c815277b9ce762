/**
 * What the statements spell differently on SQLite and PostgreSQL. The rest is the subset both run unchanged:
 * `ON CONFLICT … excluded.x`, `RETURNING`, `UPDATE … FROM` a `WITH` query, epoch-millisecond integers for times.
 */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /**
   * True when one placeholder stands for a name however often it appears (PostgreSQL's `$1`).
   * better-sqlite3 binds `?` by position and does not bind SQLite's numbered `?NNN`, so on SQLite
   * every occurrence is a placeholder of its own and the value is passed again.
   */
  readonly reusesPlaceholders: boolean;
  /** The placeholder of the parameter in `slot` (1-based). */
  placeholder(slot: number): string;
  /** Appended to a SELECT that must hold its rows until commit (PostgreSQL); SQLite's write transaction is exclusive. */
  readonly forUpdate: string;
  /** `<column> <inList(p)>`: the column is one of the array bound to `p`. */
  inList(parameter: string): string;
  /** A parameter value as the driver binds it (booleans and lists have no SQLite type of their own). */
  encode(value: unknown): unknown;
}

/** better-sqlite3 on one file, one writer at a time. */
export const SQLITE_DIALECT: Dialect = {
  name: 'sqlite',
  reusesPlaceholders: false,
  placeholder: () => '?',
  forUpdate: '',
  // A list travels as one JSON text and json_each unpacks it: one statement text for any length.
  inList: (parameter) => `IN (SELECT value FROM json_each(${parameter}))`,
  encode: (value) => {
    if (typeof value === 'boolean') return value ? 1 : 0;
    return Array.isArray(value) ? JSON.stringify(value) : value;
  },
};

/** node-postgres on a database shared by replicas. */
export const POSTGRES_DIALECT: Dialect = {
  name: 'postgres',
  reusesPlaceholders: true,
  placeholder: (slot) => `$${slot}`,
  forUpdate: ' FOR UPDATE',
  // pg sends a JS array as an array literal; its element type is inferred from the column.
  inList: (parameter) => `= ANY(${parameter})`,
  encode: (value) => value,
};
