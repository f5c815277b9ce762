import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The file, in a templates directory, that holds the CSS-inlined HTML of its template sets, computed
 * ahead: loading juice (cheerio, parse5, undici: ~250 modules) and running it was most of
 * `check-config`'s time and ~10 MB of `serve` at rest. The shipped templates carry one; a user's copy
 * of them carries it too, and is used only for the sets whose sources it was computed from.
 */
export const INLINED_CSS_FILE = 'inlined-css.json';

/** One template set's HTML after its CSS was inlined: the template and the HTML partials it calls. */
export interface InlinedHtmlTemplates {
  /** `html.hbs` with style attributes; `<style>` keeps the media queries and the rules that matched nothing. */
  html: string;
  /**
   * The partials the HTML calls by name, with style attributes, keyed by the name the template calls.
   * A partial called from places where the CSS gives it different styles (`.a td` and `.b td`) gets one
   * copy per style, named `<name>--inline-<n>`, and the call is renamed to match.
   */
  partials: Map<string, string>;
}

/** Bumped when the way a set is inlined changes (juice's options, the splicing of partials): old files then miss. */
const INLINED_CSS_FORMAT = 1;

interface InlinedCssEntry {
  html: string;
  partials: [string, string][];
}

/** The file's content: the inlined HTML of each set, keyed by the hash of what it was computed from. */
interface InlinedCssFileContent {
  format: number;
  sets: Record<string, InlinedCssEntry>;
}

/**
 * The key of one set's inlining: a SHA-256 over the HTML template, every partial of the directory
 * (name and source) and the format. Any change to a source the inlining read gives another key, so a
 * stale file is never used: the set is inlined with juice at load as if the file were absent.
 */
export function hashInlineInput(html: string, partials: ReadonlyMap<string, string>, juiceOptions: object): string {
  const input = JSON.stringify({
    format: INLINED_CSS_FORMAT,
    juiceOptions,
    html,
    partials: [...partials].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  });
  return createHash('sha256').update(input).digest('hex');
}

/**
 * The inlined sets stored in `dir`'s {@link INLINED_CSS_FILE}, by key; empty when there is none or it
 * is not this format (then every set is inlined at load, as before).
 */
export function readInlinedCssFile(dir: string): Map<string, InlinedHtmlTemplates> {
  const file = path.join(dir, INLINED_CSS_FILE);
  let content: InlinedCssFileContent;
  try {
    content = JSON.parse(fs.readFileSync(file, 'utf8')) as InlinedCssFileContent;
  } catch {
    // Absent or unreadable: only a start-up cost, never a different mail.
    return new Map();
  }
  if (content?.format !== INLINED_CSS_FORMAT || typeof content.sets !== 'object' || content.sets === null) return new Map();
  const found = new Map<string, InlinedHtmlTemplates>();
  for (const [key, entry] of Object.entries(content.sets)) {
    if (typeof entry?.html !== 'string' || !Array.isArray(entry.partials)) continue;
    found.set(key, { html: entry.html, partials: new Map(entry.partials) });
  }
  return found;
}

/** The file's text for `sets` (key → inlined set), as {@link readInlinedCssFile} reads it; stable, for diffs. */
export function formatInlinedCssFile(sets: ReadonlyMap<string, InlinedHtmlTemplates>): string {
  const content: InlinedCssFileContent = {
    format: INLINED_CSS_FORMAT,
    sets: Object.fromEntries([...sets].map(([key, set]) => [key, { html: set.html, partials: [...set.partials] }])),
  };
  return `${JSON.stringify(content, null, 2)}\n`;
}
