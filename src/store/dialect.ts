/**
 * What the statements spell differently on SQLite and PostgreSQL. The rest is the subset both run unchanged:
 * `ON CONFLICT … excluded.x`, `RETURNING`, `UPDATE … FROM` a `WITH` query, epoch-millisecond integers for times.
 */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** The placeholder of parameter `name`, recording in `names` which parameter each value bound in order is. */
  placeholder(name: string, names: string[]): string;
  /** `<column> <inList(p)>`: the column is one of the array bound to `p`. */
  inList(parameter: string): string;
  /** A parameter value as the driver binds it (booleans and lists have no SQLite type of their own). */
  encode(value: unknown): unknown;
}

/** better-sqlite3 on one file, one writer at a time. */
export const SQLITE_DIALECT: Dialect = {
  name: 'sqlite',
  // better-sqlite3 binds `?` by position and does not bind SQLite's numbered `?NNN`: every occurrence is a
  // placeholder of its own, its value passed again.
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

/** node-postgres on a database shared by replicas. */
export const POSTGRES_DIALECT: Dialect = {
  name: 'postgres',
  // One `$n` per name, however often it appears.
  placeholder: (name, names) => `$${names.indexOf(name) + 1 || names.push(name)}`,
  // pg sends a JS array as an array literal; its element type is inferred from the column.
  inList: (parameter) => `= ANY(${parameter})`,
  encode: (value) => value,
};
