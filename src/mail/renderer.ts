import fs from 'node:fs';
import path from 'node:path';
import Handlebars from 'handlebars';
import juice from 'juice';
import { neutralizeText } from '../shared';

/** The three parts of one mail, rendered. */
export interface RenderedMail {
  subject: string;
  html: string;
  text: string;
}

/** Renders a template set (`<dir>/<set>/{subject,html,text}.hbs`) with a view. */
export interface Renderer {
  /** `options.subject`: a Handlebars template (a route's `subject`) used instead of the set's subject.hbs. */
  render(view: object, templateSet?: string, options?: { subject?: string }): RenderedMail;
  /** Template sets found in the directory (`report` is always there). */
  readonly sets: readonly string[];
  readonly dir: string;
}

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

export const DEFAULT_TEMPLATE_SET = 'report';
const PARTS = ['subject', 'html', 'text'] as const;

/**
 * Loads and compiles every template once, at boot, in strict mode (a missing variable throws
 * instead of printing nothing). HTML is escaped; text and subject are not (they are not HTML).
 * Compilation is forced here, so a syntax error fails the start, not the first delivery.
 */
export function loadRenderer(dir: string): Renderer {
  const hbs = Handlebars.create();
  registerHelpers(hbs);
  const partialsDir = path.join(dir, 'partials');
  if (fs.existsSync(partialsDir)) {
    for (const file of fs.readdirSync(partialsDir).filter((f) => f.endsWith('.hbs')).sort()) {
      const full = path.join(partialsDir, file);
      const source = fs.readFileSync(full, 'utf8');
      try {
        hbs.precompile(source, { strict: true });
      } catch (error) {
        throw new TemplateError(full, error);
      }
      hbs.registerPartial(path.basename(file, '.hbs'), source);
    }
  }
  const sets = fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== 'partials' && fs.existsSync(path.join(dir, e.name, 'html.hbs')))
    .map((e) => e.name)
    .sort();
  if (!sets.includes(DEFAULT_TEMPLATE_SET)) {
    throw new TemplateError(path.join(dir, DEFAULT_TEMPLATE_SET), new Error('the default template set "report" (subject.hbs, html.hbs, text.hbs) is missing'));
  }
  const compiled = new Map<string, Record<(typeof PARTS)[number], { file: string; fn: Handlebars.TemplateDelegate }>>();
  for (const set of sets) {
    const parts = {} as Record<(typeof PARTS)[number], { file: string; fn: Handlebars.TemplateDelegate }>;
    for (const part of PARTS) {
      const file = path.join(dir, set, `${part}.hbs`);
      let source: string;
      try {
        source = fs.readFileSync(file, 'utf8');
      } catch (error) {
        throw new TemplateError(file, error);
      }
      try {
        const fn = hbs.compile(source, { strict: true, noEscape: part !== 'html' });
        // compile() is lazy; precompile parses now so syntax errors surface at boot.
        hbs.precompile(source, { strict: true });
        parts[part] = { file, fn };
      } catch (error) {
        throw new TemplateError(file, error);
      }
    }
    compiled.set(set, parts);
  }

  // Inline subjects (from routes) compiled once each; syntax errors surface on first use, which is boot.
  const subjects = new Map<string, Handlebars.TemplateDelegate>();
  const subjectOf = (source: string) => {
    let fn = subjects.get(source);
    if (!fn) {
      try {
        hbs.precompile(source, { strict: true });
        fn = hbs.compile(source, { strict: true, noEscape: true });
      } catch (error) {
        throw new TemplateError(`subject "${source}"`, error);
      }
      subjects.set(source, fn);
    }
    return fn;
  };

  return {
    dir,
    sets,
    render(view, templateSet = DEFAULT_TEMPLATE_SET, options = {}) {
      const parts = compiled.get(templateSet);
      if (!parts) throw new TemplateError(path.join(dir, templateSet), new Error(`no template set "${templateSet}"`));
      const run = (part: (typeof PARTS)[number]) => {
        try {
          return parts[part].fn(view);
        } catch (error) {
          throw new TemplateError(parts[part].file, error);
        }
      };
      const runSubject = () => {
        if (options.subject === undefined) return run('subject');
        try {
          return subjectOf(options.subject)(view);
        } catch (error) {
          throw error instanceof TemplateError ? error : new TemplateError(`subject "${options.subject}"`, error);
        }
      };
      // A subject is one header line: CR/LF would end it (header injection), so fold all white space.
      // Bidi overrides and control characters from NetBox's names are made visible in every part
      // (issue 14): here, on the output, so that no template, shipped or a user's, can let one through.
      const subject = neutralizeText(runSubject().replace(/\s+/g, ' ').trim());
      const html = neutralizeText(juice(run('html'), { preserveMediaQueries: true, removeStyleTags: true, applyWidthAttributes: true, applyHeightAttributes: false }));
      const text = neutralizeText(`${run('text').replace(/\r\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim()}\n`);
      return { subject, html, text };
    },
  };
}

function registerHelpers(hbs: typeof Handlebars): void {
  hbs.registerHelper('eq', (a: unknown, b: unknown) => a === b);
  hbs.registerHelper('gt', (a: number, b: number) => a > b);
  hbs.registerHelper('plural', (n: number, singular: string, plural: string) => (n === 1 ? singular : plural));
  hbs.registerHelper('lower', (s: unknown) => String(s ?? '').toLowerCase());
  /** Pads a string to a width, for aligned columns in the text part. */
  hbs.registerHelper('pad', (value: unknown, width: number) => String(value ?? '').padEnd(typeof width === 'number' ? width : 0));
  hbs.registerHelper('padStart', (value: unknown, width: number) => String(value ?? '').padStart(typeof width === 'number' ? width : 0));
  /** A text bar of `width` characters for a 0–100 value: ████░░░░. */
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
   * `{{#link url class="button"}}text{{/link}}`: a link when `url` is http(s) (NETBOX_URL is set),
   * else the text alone, so a NetBox path without NETBOX_URL is never an `href` and no other scheme
   * (`javascript:`) ever is.
   */
  hbs.registerHelper('link', function (this: unknown, url: unknown, options: Handlebars.HelperOptions) {
    const inner = options.fn(this);
    if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) return new hbs.SafeString(inner);
    const cls = typeof options.hash?.class === 'string' ? ` class="${hbs.escapeExpression(options.hash.class)}"` : '';
    return new hbs.SafeString(`<a${cls} href="${hbs.escapeExpression(url)}">${inner}</a>`);
  });
  /** 100 minus a width, for the empty cell next to a bar. */
  hbs.registerHelper('rest', (width: number) => Math.max(0, 100 - (Number(width) || 0)));
}
