import type HandlebarsNamespace from 'handlebars';

/** One template set's HTML after its CSS was inlined: the template and the HTML partials it calls. */
export interface InlinedHtmlTemplates {
  /** `html.hbs` with style attributes; `<style>` keeps the media queries and the rules that matched nothing. */
  html: string;
  /**
   * The partials the HTML calls by name, with style attributes. A partial the CSS styles differently in different
   * places (`.a td` and `.b td`) gets one copy per style, named `<name>--inline-<n>`, and the call is renamed to match.
   */
  partials: Map<string, string>;
}

type HandlebarsParser = Pick<typeof HandlebarsNamespace, 'parse'>;

/**
 * `@media` rules (dark mode, small screens) and rules that matched no element stay in `<style>`: at load an element whose
 * class comes from data (`class="band-{{band}}"`) cannot be matched.
 */
export const JUICE_OPTIONS = {
  preserveMediaQueries: true,
  removeStyleTags: false,
  removeInlinedSelectors: true,
  applyWidthAttributes: true,
  applyHeightAttributes: false,
} as const;

/** `call` as written, e.g. `{{> ratio-row overall}}`. */
type PartialCall = { name: string; call: string };

/**
 * Inlines the CSS of a set's `html.hbs` into its markup and the partials it calls, once, at load (juice leaves `{{…}}`
 * alone). The partials are spliced in where they are called before juice sees the page, so `.ratios td` reaches the cells
 * of a partial called inside `.ratios`, and cut out afterwards. Block and sub-expression calls get only `<style>`'s rules.
 */
export function inlineTemplateCss(hbs: HandlebarsParser, html: string, partials: ReadonlyMap<string, string>): InlinedHtmlTemplates {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only templates not inlined ahead need juice
  const juice = require('juice') as (html: string, options: object) => string;
  const calls: PartialCall[] = [];
  const spliced = splicePartials(hbs, html, partials, calls, []);
  return cutPartials(juice(spliced, JUICE_OPTIONS), calls);
}

/** Replaces each `{{> name …}}` of `source` by the partial's own source (recursively), between two marking comments. */
function splicePartials(
  hbs: HandlebarsParser,
  source: string,
  partials: ReadonlyMap<string, string>,
  calls: PartialCall[],
  stack: readonly string[],
): string {
  // Where each line starts: Handlebars locations are line and column.
  const offsets = [0];
  for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) offsets.push(i + 1);
  const found = findPartialCalls(hbs.parse(source)).flatMap(({ name, loc }) =>
    loc && partials.has(name) && !stack.includes(name)
      ? [{ name, start: offsets[loc.start.line - 1] + loc.start.column, end: offsets[loc.end.line - 1] + loc.end.column }]
      : [],
  );
  found.sort((a, b) => a.start - b.start);
  let out = '';
  let at = 0;
  for (const { start, end, name } of found) {
    const id = calls.push({ name, call: source.slice(start, end) }) - 1;
    const inner = splicePartials(hbs, partials.get(name)!, partials, calls, [...stack, name]);
    out += source.slice(at, start) + `{{!relay-inline-partial ${id}}}${inner}{{!/relay-inline-partial ${id}}}`;
    at = end;
  }
  return out + source.slice(at);
}

type Location = { line: number; column: number };

/** The partials a Handlebars AST calls by name as `{{> name}}` (one named by an expression is not known ahead). */
function findPartialCalls(ast: unknown): { name: string; loc?: { start: Location; end: Location } }[] {
  const found: ReturnType<typeof findPartialCalls> = [];
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    const n = node as { type?: string; name?: { type?: string; original?: unknown }; loc?: { start: Location; end: Location } };
    const name = n.name?.type === 'PathExpression' ? n.name.original : undefined;
    if (n.type === 'PartialStatement' && typeof name === 'string') found.push({ name, loc: n.loc });
    for (const value of Object.values(n)) (Array.isArray(value) ? value : [value]).forEach(visit);
  };
  visit(ast);
  return found;
}

/** Undoes {@link splicePartials} on juice's output; identical copies of a partial share its name. */
function cutPartials(inlined: string, calls: readonly PartialCall[]): InlinedHtmlTemplates {
  const partials = new Map<string, string>();
  let html = inlined;
  // Innermost first: a segment whose content holds no other segment.
  const innermost = /\{\{!relay-inline-partial (\d+)\}\}((?:(?!\{\{!relay-inline-partial )[\s\S])*?)\{\{!\/relay-inline-partial \1\}\}/;
  for (let match = innermost.exec(html); match; match = innermost.exec(html)) {
    const call = calls[Number(match[1])];
    // The partial's own name, or a numbered copy when the CSS styled this call of it differently.
    let name = call.name;
    for (let n = 2; partials.has(name) && partials.get(name) !== match[2]; n++) name = `${call.name}--inline-${n}`;
    partials.set(name, match[2]);
    const renamed = name === call.name ? call.call : call.call.replace(/^(\{\{~?>\s*)\S+?(?=[\s~}])/, `$1${name}`);
    html = html.slice(0, match.index) + renamed + html.slice(match.index + match[0].length);
  }
  if (html.includes('{{!relay-inline-partial ') || html.includes('{{!/relay-inline-partial ')) {
    throw new Error('inlining CSS split a partial (a partial that opens an element another one closes?)');
  }
  return { html, partials };
}
