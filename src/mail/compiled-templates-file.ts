import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The file, in the package's own templates folder, that holds the shipped templates compiled ahead by
 * Handlebars: compiling them was the largest part of `check-config`'s time, and the compiler
 * with source-map 35 of the 228 modules it loaded. Only the package's own copy is read, never one in TEMPLATES_DIR: it holds
 * JavaScript that the relay evaluates, and a templates folder may be less trusted than the code. A
 * user's templates still use it for every source unchanged from the shipped ones (lookups are by source).
 */
export const COMPILED_TEMPLATES_FILE = 'compiled-templates.json';

/** Bumped when what a key covers or how a spec is used changes: old files then miss. */
const COMPILED_TEMPLATES_FORMAT = 1;

/** Handlebars' precompiled specs (JavaScript source) by key, and the keys of sources only checked (they parse, or compile). */
export interface CompiledTemplates {
  checked: Set<string>;
  specs: Map<string, string>;
}

interface CompiledTemplatesFileContent {
  format: number;
  checked: string[];
  specs: Record<string, string>;
}

/** A store with nothing in it: every template is parsed and compiled by Handlebars. */
export function emptyCompiledTemplates(): CompiledTemplates {
  return { checked: new Set(), specs: new Map() };
}

/**
 * The key of one template: a SHA-256 over Handlebars' version, the compile options (or `parse` for a
 * source only checked to parse) and the source. Any change to these gives another key, so a stale file
 * is never used: the template is compiled at load as if the file were absent.
 */
export function hashTemplateInput(handlebarsVersion: string, source: string, options: Record<string, unknown> | 'parse'): string {
  const sortedOptions =
    options === 'parse' ? options : Object.fromEntries(Object.entries(options).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const input = JSON.stringify({ format: COMPILED_TEMPLATES_FORMAT, handlebars: handlebarsVersion, options: sortedOptions, source });
  return createHash('sha256').update(input).digest('hex');
}

/** The templates compiled ahead in `dir`'s {@link COMPILED_TEMPLATES_FILE}; empty when absent or of another format. */
export function readCompiledTemplatesFile(dir: string): CompiledTemplates {
  let content: CompiledTemplatesFileContent;
  try {
    content = JSON.parse(fs.readFileSync(path.join(dir, COMPILED_TEMPLATES_FILE), 'utf8')) as CompiledTemplatesFileContent;
  } catch {
    // Absent or unreadable: only a start-up cost, never a different mail.
    return emptyCompiledTemplates();
  }
  if (
    content?.format !== COMPILED_TEMPLATES_FORMAT ||
    !Array.isArray(content.checked) ||
    typeof content.specs !== 'object' ||
    !content.specs
  ) {
    return emptyCompiledTemplates();
  }
  const specs = new Map(Object.entries(content.specs).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  return { checked: new Set(content.checked.filter((key) => typeof key === 'string')), specs };
}

/** The file's text for `compiled`, as {@link readCompiledTemplatesFile} reads it; sorted by key, for stable diffs. */
export function formatCompiledTemplatesFile(compiled: CompiledTemplates): string {
  const content: CompiledTemplatesFileContent = {
    format: COMPILED_TEMPLATES_FORMAT,
    checked: [...compiled.checked].sort(),
    specs: Object.fromEntries([...compiled.specs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  };
  return `${JSON.stringify(content, null, 2)}\n`;
}
