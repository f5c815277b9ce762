import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { JUICE_OPTIONS, type InlinedHtmlTemplates } from './inline-template-css';

/**
 * The templates computed ahead (`npm run build` writes the package's): each set's HTML with its CSS inlined (no juice to
 * load, ~250 modules) and each template compiled (no Handlebars compiler), looked up by source. Compiled templates are
 * read from the package's copy only, never from TEMPLATES_DIR: they are JavaScript, and that folder may be less trusted.
 */
export const COMPILED_TEMPLATES_FILE = 'compiled-templates.json';

/** Bumped when what a key covers or how an entry is used changes (juice's options, the splicing of partials): old files then miss. */
const COMPILED_TEMPLATES_FORMAT = 2;

/** By key: Handlebars' precompiled specs (JavaScript source) and the CSS-inlined sets. */
export type CompiledTemplates = { specs: Map<string, string>; inlined: Map<string, InlinedHtmlTemplates> };

export function hashTemplateInput(handlebarsVersion: string, source: string, options: Record<string, unknown>): string {
  const sortedOptions = Object.fromEntries(sortByKey(Object.entries(options)));
  return hashJson({ format: COMPILED_TEMPLATES_FORMAT, handlebars: handlebarsVersion, options: sortedOptions, source });
}

export const hashInlineInput = (html: string, partials: ReadonlyMap<string, string>): string =>
  hashJson({ format: COMPILED_TEMPLATES_FORMAT, juiceOptions: JUICE_OPTIONS, html, partials: sortByKey(partials) });

/** What `dir`'s {@link COMPILED_TEMPLATES_FILE} holds; empty when absent, unreadable or of another format (a start-up cost only). */
export function readCompiledTemplatesFile(dir: string): CompiledTemplates {
  const found: CompiledTemplates = { specs: new Map(), inlined: new Map() };
  let content: { format?: unknown; specs?: unknown; inlined?: unknown } | null;
  try {
    content = JSON.parse(fs.readFileSync(path.join(dir, COMPILED_TEMPLATES_FILE), 'utf8')) as typeof content;
  } catch {
    return found;
  }
  if (content?.format !== COMPILED_TEMPLATES_FORMAT) return found;
  for (const [key, spec] of Object.entries(content.specs ?? {})) if (typeof spec === 'string') found.specs.set(key, spec);
  for (const [key, set] of Object.entries((content.inlined ?? {}) as Record<string, { html?: unknown; partials?: unknown } | null>))
    if (typeof set?.html === 'string' && Array.isArray(set.partials))
      found.inlined.set(key, { html: set.html, partials: new Map(set.partials as [string, string][]) });
  return found;
}

/** The file's text: sorted by key and indented, for stable diffs. */
export function formatCompiledTemplatesFile({ specs, inlined }: CompiledTemplates): string {
  const sets = [...inlined].map(([key, set]): [string, object] => [key, { html: set.html, partials: [...set.partials] }]);
  const content = {
    format: COMPILED_TEMPLATES_FORMAT,
    inlined: Object.fromEntries(sortByKey(sets)),
    specs: Object.fromEntries(sortByKey(specs)),
  };
  return `${JSON.stringify(content, null, 2)}\n`;
}

/** Any change to the input gives another key, so a stale entry is never used: it is computed at load. */
const hashJson = (input: unknown): string => createHash('sha256').update(JSON.stringify(input)).digest('hex');

const sortByKey = <T>(entries: Iterable<[string, T]>): [string, T][] => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
