import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The file, in the package's own templates folder, that holds the shipped templates compiled ahead by Handlebars,
 * so that loading them need not load nor run its compiler. Only the package's copy is read, never one in
 * TEMPLATES_DIR: it holds JavaScript that the relay evaluates, and a templates folder may be less trusted than the
 * code. Lookups are by source, so a user's unchanged templates still use it.
 */
export const COMPILED_TEMPLATES_FILE = 'compiled-templates.json';

/** Bumped when what a key covers or how a spec is used changes: old files then miss. */
const COMPILED_TEMPLATES_FORMAT = 1;

/** The key of one template: Handlebars' version, the compile options and the source. */
export function hashTemplateInput(handlebarsVersion: string, source: string, options: Record<string, unknown>): string {
  const sortedOptions = Object.fromEntries(sortByKey(Object.entries(options)));
  return hashJson({ format: COMPILED_TEMPLATES_FORMAT, handlebars: handlebarsVersion, options: sortedOptions, source });
}

/** Handlebars' precompiled specs (JavaScript source) in `dir`'s {@link COMPILED_TEMPLATES_FILE}, by key; empty when absent or of another format. */
export function readCompiledTemplatesFile(dir: string): Map<string, string> {
  const specs = readAheadFile(dir, COMPILED_TEMPLATES_FILE, COMPILED_TEMPLATES_FORMAT)?.specs;
  if (typeof specs !== 'object' || specs === null) return new Map();
  return new Map(Object.entries(specs).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** The file's text for `specs`, as {@link readCompiledTemplatesFile} reads it; sorted by key, for stable diffs. */
export function formatCompiledTemplatesFile(specs: ReadonlyMap<string, string>): string {
  return formatAheadFile(COMPILED_TEMPLATES_FORMAT, { specs: Object.fromEntries(sortByKey(specs)) });
}

/**
 * The SHA-256 of `input` as JSON: the key under which a file computed ahead keeps what was computed from
 * it. Any change to the input gives another key, so a stale entry is never used: it is computed at load.
 */
export function hashJson(input: unknown): string {
  return createHash('sha256').update(JSON.stringify(input)).digest('hex');
}

/** `entries` sorted by key, so that keys and files computed ahead do not depend on reading order. */
export function sortByKey<T>(entries: Iterable<[string, T]>): [string, T][] {
  return [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A file computed ahead in `dir`, parsed; undefined when absent, unreadable or of another `format` (a start-up cost only). */
export function readAheadFile(dir: string, name: string, format: number): Record<string, unknown> | undefined {
  try {
    const content = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as Record<string, unknown> | null;
    return content?.format === format ? content : undefined;
  } catch {
    return undefined;
  }
}

/** The text of a file computed ahead: its `format`, then `content`, indented for stable diffs. */
export function formatAheadFile(format: number, content: object): string {
  return `${JSON.stringify({ format, ...content }, null, 2)}\n`;
}
