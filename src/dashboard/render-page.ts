import fs from 'node:fs';
import path from 'node:path';
import type { Response } from 'express';
import type HandlebarsNamespace from 'handlebars';
import { findPackageRoot, neutralizeView } from '../shared';

/**
 * Nothing may load from elsewhere and no script runs; inline styles are allowed (the page's and the mail's).
 * The sandboxed srcdoc iframe that shows a mail inherits it, so a mail's remote image or script cannot load or run.
 */
export const DASHBOARD_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The banners above every page after login, and the session's CSRF token for the header's forms. */
export interface PageContext {
  csrf?: string;
  /** The queue's pause (the mail transport failed for every message), times already formatted; `state` as /readyz names it. */
  queuePause?: {
    state: 'paused' | 'probing' | 'held';
    held: boolean;
    probing: boolean;
    since: string;
    nextTry: string;
    lastError: string;
    code?: string;
  };
  unrecorded?: number;
  notices?: string[];
  /** Why mail cannot leave (the last send or check failed); absent while it can. */
  mail?: { code?: string; message: string };
}

/** A page after login: its banners, the session's CSRF token for its forms, and times shown in MAIL_TIMEZONE. */
export type Page = PageContext & { csrf: string; formatTime: (ms: number) => string };

type Template = HandlebarsNamespace.TemplateDelegate;
let templates: Map<string, Template> | undefined;

/**
 * The dashboard's templates (templates/dashboard of the package, never a user's TEMPLATES_DIR copy), each a partial
 * by its file name, compiled with Handlebars' compiler on the first page: a relay at rest loads neither.
 */
function loadTemplates(): Map<string, Template> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose (an import would load the compiler with the module)
  const hbs = (require('handlebars') as typeof HandlebarsNamespace).create();
  const dir = path.join(findPackageRoot(), 'templates', 'dashboard');
  const names = fs.readdirSync(dir).flatMap((file) => (file.endsWith('.hbs') ? [file.slice(0, -'.hbs'.length)] : []));
  // The files' last line break is not part of the markup.
  for (const name of names) hbs.registerPartial(name, fs.readFileSync(path.join(dir, `${name}.hbs`), 'utf8').replace(/\n$/, ''));
  return new Map(names.map((name) => [name, hbs.compile(`{{> ${name}}}`)]));
}

/**
 * Renders templates/dashboard/`name`.hbs with `view`; Handlebars escapes every value, and bidi overrides and control
 * characters (from NetBox's names, error texts) are made visible in the view first, as in the mails.
 */
export function renderDashboardTemplate(name: string, view: unknown): string {
  templates ??= loadTemplates();
  const template = templates.get(name);
  if (!template) throw new Error(`no dashboard template "${name}"`);
  return template(neutralizeView(view));
}

/** Sends the page `page` (a template of templates/dashboard, rendered with `body`) inside the document around every page. */
export function sendPage(res: Response, status: number, title: string, page: string, body: object = {}, ctx: PageContext = {}): void {
  res.status(status).type('html');
  res.send(renderDashboardTemplate('layout', { ...ctx, title, page, body }));
}
