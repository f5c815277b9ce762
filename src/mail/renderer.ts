import fs from 'node:fs';
import path from 'node:path';
import type HandlebarsNamespace from 'handlebars';
import { findPackageRoot, neutralizeView } from '../shared';
import { formatCompiledTemplatesFile, hashInlineInput, hashTemplateInput, readCompiledTemplatesFile } from './compiled-templates-file';
import { inlineTemplateCss, type InlinedHtmlTemplates } from './inline-template-css';

export type Renderer = ReturnType<typeof loadRenderer>;
export type RenderedMail = ReturnType<Renderer['render']>;

/** A template that fails to load or render; says which file and, when Handlebars knows, which line. */
export class TemplateError extends Error {
  readonly file: string;
  readonly line?: number;
  constructor(file: string, cause: unknown) {
    const message = (cause as Error)?.message ?? String(cause);
    const line = /line (\d+)/i.exec(message)?.[1] ?? (cause as { lineNumber?: number })?.lineNumber;
    super(`template ${file}${line ? ` line ${line}` : ''}: ${message.split('\n')[0]}`, { cause });
    this.name = 'TemplateError';
    this.file = file;
    this.line = line === undefined ? undefined : Number(line);
  }
}

export const defaultTemplatesDir = (): string => path.join(findPackageRoot(), 'templates');

const DEFAULT_TEMPLATE_SET = 'report';
type Part = 'subject' | 'html' | 'text';
type Hbs = typeof HandlebarsNamespace;
type Template = HandlebarsNamespace.TemplateDelegate;

/** How the relay compiles templates: strict (a missing variable throws); the HTML escapes, text and subject do not. */
type CompileOptions = { strict: true; noEscape?: true };
const HTML_OPTIONS: CompileOptions = { strict: true };
const TEXT_OPTIONS: CompileOptions = { strict: true, noEscape: true };

// Handlebars' compiler (parser, code generator, source-map) loads only for a template not compiled ahead.
/* eslint-disable @typescript-eslint/no-require-imports -- lazy on purpose (an import would load them with the module) */
const loadHandlebarsRuntime = () => require('handlebars/runtime') as Hbs;
const loadHandlebarsCompiler = () => require('handlebars') as Hbs;
/* eslint-enable @typescript-eslint/no-require-imports */

/**
 * Loads and compiles every template once, at boot, in strict mode, so a syntax error fails the start. A source unchanged
 * from the shipped templates takes its inlined and compiled forms from the package (unless `compiledAhead` is false).
 */
export function loadRenderer(dir = defaultTemplatesDir(), options: { compiledAhead?: boolean } = {}) {
  const shipped = defaultTemplatesDir();
  const ahead = options.compiledAhead === false ? undefined : readCompiledTemplatesFile(shipped);
  // A folder of the user's may hold its own inlined HTML, never compiled templates (see COMPILED_TEMPLATES_FILE).
  const own = ahead && path.resolve(dir) !== path.resolve(shipped) ? readCompiledTemplatesFile(dir).inlined : [];
  const { sets, compiled, textPartials, compile } = loadTemplates(dir, {
    specs: ahead?.specs ?? new Map<string, string>(),
    inlined: new Map([...(ahead?.inlined ?? []), ...own]),
  });
  // Inline subjects (from routes), compiled once each; syntax errors surface on first use, which is boot.
  const subjects = new Map<string, Template>();

  return {
    dir,
    sets: sets as readonly string[],
    /** `renderOptions.subject`: a Handlebars template (a route's `subject`) used instead of the set's subject.hbs. */
    render(untrusted: object, templateSet = DEFAULT_TEMPLATE_SET, renderOptions: { subject?: string } = {}) {
      const set = compiled.get(templateSet);
      if (!set) throw new TemplateError(path.join(dir, templateSet), new Error(`no template set "${templateSet}"`));
      // Bidi overrides and control characters from NetBox's names are made visible before any template or helper sees them.
      const view = neutralizeView(untrusted);
      const run = (part: Part) => inFile(set[part].file, () => set[part].fn(view, { partials: set[part].partials }));
      const runSubject = () => {
        const source = renderOptions.subject;
        if (source === undefined) return run('subject');
        return inFile(`subject "${source}"`, () => {
          if (!subjects.has(source)) subjects.set(source, compile(source, TEXT_OPTIONS));
          return subjects.get(source)!(view, { partials: textPartials });
        });
      };
      // A subject is one header line: CR/LF would end it (header injection), so fold all white space.
      const subject = runSubject().replace(/\s+/g, ' ').trim();
      const html = run('html');
      const text = `${run('text')
        .replace(/\r\n/g, '\n')
        .replace(/\n{3,}/g, '\n\n')
        .trim()}\n`;
      return { subject, html, text };
    },
  };
}

/** `work`'s result; what it throws becomes a {@link TemplateError} on `file`. */
function inFile<T>(file: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw new TemplateError(file, error);
  }
}

/**
 * A Handlebars instance with the relay's helpers and `dir`'s partials, and each set compiled. Text partials are handed
 * to each render: one compiled for text never lands in the instance's registry, where HTML would find it unescaped.
 */
function loadTemplates(dir: string, ahead = { specs: new Map<string, string>(), inlined: new Map<string, InlinedHtmlTemplates>() }) {
  const hbs = loadHandlebarsRuntime().create();
  registerTemplateHelpers(hbs);
  // Each template from `ahead.specs` when there, else precompiled now and added to it (how the shipped file is made).
  const precompile = (source: string, options: CompileOptions): string => {
    const key = hashTemplateInput(hbs.VERSION, source, options);
    let code = ahead.specs.get(key);
    if (code === undefined) {
      // precompile returns the spec as JavaScript source (its typings say otherwise). It adds Handlebars'
      // defaults to the options it is given: a copy, so the key and compilerOptions stay as written.
      code = loadHandlebarsCompiler().precompile(source, { ...options }) as unknown as string;
      ahead.specs.set(key, code);
    }
    return code;
  };
  const compile = (source: string, options: CompileOptions) => evaluateSpec(hbs, precompile(source, options), options);
  // A partial the HTML calls without its CSS inlined (as a block, or by a computed name) is compiled by Handlebars
  // when first called, with that template's options: through here, so that it too is taken from the file.
  hbs.compile = ((source: string, compileOptions: CompileOptions) => compile(source, compileOptions)) as Hbs['compile'];
  const partialsDir = path.join(dir, 'partials');
  const partialFiles = fs.existsSync(partialsDir) ? fs.readdirSync(partialsDir).filter((f) => f.endsWith('.hbs')) : [];
  const partials = new Map(
    partialFiles.sort().map((file) => [path.basename(file, '.hbs'), fs.readFileSync(path.join(partialsDir, file), 'utf8')]),
  );
  const textPartials: Record<string, Template> = {};
  for (const [name, source] of partials) {
    const code = inFile(path.join(partialsDir, `${name}.hbs`), () => precompile(source, TEXT_OPTIONS));
    // Made a function when first called: most partials are the HTML's, which text never calls.
    let fn: Template | undefined;
    textPartials[name] = ((context, options) => (fn ??= evaluateSpec(hbs, code, TEXT_OPTIONS))(context, options)) as Template;
    hbs.registerPartial(name, source);
  }
  // Each set's HTML renders with its own CSS-inlined copies of the partials (another set's CSS may style them differently).
  const load = (set: string, part: Part) => {
    const file = path.join(dir, set, `${part}.hbs`);
    return inFile(file, () => {
      const source = fs.readFileSync(file, 'utf8');
      if (part !== 'html') return { file, fn: compile(source, TEXT_OPTIONS), partials: textPartials };
      // Handlebars' parser loads only when the CSS is inlined now (the file has no entry for this HTML); it
      // parses the source as written, so a syntax error is reported on it, not on the inlined copy.
      const key = hashInlineInput(source, partials);
      let inlined = ahead.inlined.get(key);
      if (!inlined) ahead.inlined.set(key, (inlined = inlineTemplateCss(loadHandlebarsCompiler(), source, partials)));
      const htmlPartials: Record<string, Template> = {};
      for (const [name, partialSource] of inlined.partials) htmlPartials[name] = compile(partialSource, HTML_OPTIONS);
      return { file, fn: compile(inlined.html, HTML_OPTIONS), partials: htmlPartials };
    });
  };
  const sets = findTemplateSets(dir);
  const compiled = new Map(sets.map((set) => [set, { subject: load(set, 'subject'), html: load(set, 'html'), text: load(set, 'text') }]));
  return { sets, compiled, textPartials, compile, ahead };
}

/** A precompiled spec as a template of `hbs`, as `compile` makes it, but a syntax error thrown at load (`compile` is lazy). */
function evaluateSpec(hbs: Hbs, code: string, options: CompileOptions): Template {
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- Handlebars' own output for our templates, evaluated as compile() does inside
  const evaluate = new Function(`return ${code};`) as () => Parameters<Hbs['template']>[0];
  // compile() also keeps its options on the spec; the source form leaves them out.
  const spec = Object.assign(evaluate(), { compilerOptions: { ...options } });
  return hbs.template(spec) as Template;
}

/** The compiled-templates file for the templates in `dir` (`npm run build` writes the shipped one). */
export const buildCompiledTemplatesFile = (dir: string): string => formatCompiledTemplatesFile(loadTemplates(dir).ahead);

function findTemplateSets(dir: string): string[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch (error) {
    // A folder that is not there is a configuration problem (TEMPLATES_DIR), said as one, not a crash.
    throw new TemplateError(
      dir,
      new Error(
        `cannot read the templates folder (${(error as NodeJS.ErrnoException).code ?? 'error'}): TEMPLATES_DIR accepts a copy of templates/`,
      ),
    );
  }
  const sets = entries
    .filter((e) => e.isDirectory() && e.name !== 'partials' && fs.existsSync(path.join(dir, e.name, 'html.hbs')))
    .map((e) => e.name)
    .sort();
  if (!sets.includes(DEFAULT_TEMPLATE_SET)) {
    throw new TemplateError(
      path.join(dir, DEFAULT_TEMPLATE_SET),
      new Error('the default template set "report" (subject.hbs, html.hbs, text.hbs) is missing'),
    );
  }
  return sets;
}

/** A `{{#link}}` block that is exactly one `<a …>…</a>` (white space around it allowed): lead, attributes, content, trail. */
const WRITTEN_ANCHOR = /^(\s*)<a\b((?:[^>"']|"[^"]*"|'[^']*')*)>((?:(?!<\/a>)[\s\S])*)<\/a>(\s*)$/i;

/** The helpers templates may use (templates/README.md lists them). */
export function registerTemplateHelpers(hbs: Hbs): void {
  // Template values are strings and numbers; anything else shows as nothing rather than "[object Object]".
  const text = (value: unknown): string =>
    typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
  hbs.registerHelper('eq', (a: unknown, b: unknown) => a === b);
  hbs.registerHelper('gt', (a: number, b: number) => a > b);
  hbs.registerHelper('plural', (n: number, singular: string, plural: string) => (n === 1 ? singular : plural));
  hbs.registerHelper('lower', (s: unknown) => text(s).toLowerCase());
  hbs.registerHelper('pad', (value: unknown, width: number) => text(value).padEnd(typeof width === 'number' ? width : 0));
  hbs.registerHelper('padStart', (value: unknown, width: number) => text(value).padStart(typeof width === 'number' ? width : 0));
  /** A text bar of `width` characters for a 0–100 value: ####.... */
  hbs.registerHelper('textBar', (percent: number | null, width: number) => {
    const w = typeof width === 'number' ? width : 20;
    if (percent === null || percent === undefined) return ' '.repeat(w);
    const filled = Math.round((Math.max(0, Math.min(100, percent)) / 100) * w);
    return '#'.repeat(filled) + '.'.repeat(w - filled);
  });
  /** "5/8", or "—" for a ratio with nothing counted. */
  hbs.registerHelper('concatRatio', (ratio: { passed: number; count: number; hasResults: boolean }) =>
    ratio && ratio.hasResults ? `${ratio.passed}/${ratio.count}` : '—',
  );
  /**
   * `{{#link url}}<a class="button">Open</a>{{/link}}`: the `<a>` gets `href="url"` when `url` is http(s); otherwise only
   * its content stays, so no other scheme (`javascript:`) is ever an href. `{{#link url class="…"}}Open{{/link}}` writes it.
   */
  hbs.registerHelper('link', function (this: unknown, url: unknown, options: HandlebarsNamespace.HelperOptions) {
    const inner = options.fn(this);
    const href = typeof url === 'string' && /^https?:\/\//i.test(url) ? hbs.escapeExpression(url) : undefined;
    const anchor = WRITTEN_ANCHOR.exec(inner);
    if (anchor) {
      const [, lead, attributes, content, trail] = anchor as unknown as [string, string, string, string, string];
      if (/\shref\s*=/i.test(attributes)) throw new Error('{{#link url}}<a …>: write the <a> without href; the helper sets it from url');
      if (href === undefined) return new hbs.SafeString(`${lead}${content}${trail}`);
      // After the class, where the helper has always put it: the mails stay byte for byte the same.
      const withHref = attributes.replace(/^(\s+class="[^"]*")?/, (cls: string) => `${cls} href="${href}"`);
      return new hbs.SafeString(`${lead}<a${withHref}>${content}</a>${trail}`);
    }
    if (href === undefined) return new hbs.SafeString(inner);
    const cls = typeof options.hash?.class === 'string' ? ` class="${hbs.escapeExpression(options.hash.class)}"` : '';
    return new hbs.SafeString(`<a${cls} href="${href}">${inner}</a>`);
  });
  /**
   * `{{breakable name}}`: the value escaped, with `<wbr>` after each `./_:@-`, so a long FQDN, URL or test name can
   * break there in clients that strip `overflow-wrap` (the Gmail apps, Outlook), instead of widening the layout.
   */
  hbs.registerHelper(
    'breakable',
    (value: unknown) => new hbs.SafeString(hbs.escapeExpression(text(value)).replace(/([./_:@-])(?=[^<])/g, '$1<wbr>')),
  );
  hbs.registerHelper('rest', (width: number) => Math.max(0, 100 - (Number(width) || 0)));
}
