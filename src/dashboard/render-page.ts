import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Request, Response } from 'express';
import type HandlebarsNamespace from 'handlebars';
import type { Worker } from '../delivery';
import type { TransportHealth } from '../health';
import { isSameSecret } from '../http';
import { formatDateTime } from '../report';
import { findPackageRoot, neutralizeView, type AuthThrottle, type Clock, type FailureCatalogue, type Logger } from '../shared';
import type { DeliveryState, DigestPeriod, Store } from '../store';
import type { WaiverBook } from '../waivers';

export interface DashboardOptions {
  /** ADMIN_TOKEN; without it the dashboard answers 404 and says how to turn it on. */
  adminToken?: string;
  store: Pick<
    Store,
    | 'listDeliveries'
    | 'readQueue'
    | 'getDelivery'
    | 'getDeliveryBody'
    | 'getSentMessage'
    | 'listSentMessages'
    | 'requeue'
    | 'retryNow'
    | 'listRouteMails'
  >;
  clock: Clock;
  logger: Logger;
  timezone: string;
  failures: FailureCatalogue;
  /** The NetBox sources: with more than one, the list names and filters by source; reports link into their own NetBox. */
  sources?: readonly { name: string; netbox: { url?: string } }[];
  /** Its pause and unrecorded outcomes are banners on every page; kicked after a requeue. */
  worker?: Pick<Worker, 'breaker' | 'unrecorded' | 'kick' | 'tryNow'>;
  /** ROUTES_FILE's route names, suggested in the list's route filter. */
  routeNames?: readonly string[];
  /** Slows down failed logins per address; shared with the admin API, which takes the same token. */
  throttle?: AuthThrottle;
  sleep?: (ms: number) => Promise<void>;
  /** Warnings about the relay's own configuration (an unsigned webhook open to the network). */
  notices?: string[];
  /** The mail server's state as /readyz's smtp check reports it: a banner while it fails. */
  transportHealth?: Pick<TransportHealth, 'status'>;
  waivers?: WaiverBook;
  digests?: {
    schedules: () => DigestsInput['schedules'];
    periods: (options: { limit: number }) => Promise<DigestPeriod[]>;
  };
}

export interface DigestsInput {
  schedules: readonly { route: string; schedule: string; timezone: string; nextRunAt: number | null }[];
  /** The latest digests, newest first, each with its delivery's state. */
  periods: readonly (DigestPeriod & { state?: DeliveryState })[];
}

/** Nothing loads from elsewhere and no script runs; the srcdoc iframe that shows a mail inherits it. */
export const DASHBOARD_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'";

/** A page after login: its banners, the session's CSRF token for its forms, and times shown in MAIL_TIMEZONE. */
export type Page = ReturnType<typeof buildPageContext>;

type Template = HandlebarsNamespace.TemplateDelegate;
let templates: Map<string, Template> | undefined;

/** The package's templates/dashboard (never TEMPLATES_DIR), compiled on the first page: a relay at rest loads no compiler. */
function loadTemplates(): Map<string, Template> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose (an import would load the compiler with the module)
  const hbs = (require('handlebars') as typeof HandlebarsNamespace).create();
  const dir = path.join(findPackageRoot(), 'templates', 'dashboard');
  const names = fs.readdirSync(dir).flatMap((file) => (file.endsWith('.hbs') ? [file.slice(0, -'.hbs'.length)] : []));
  // The files' last line break is not part of the markup.
  for (const name of names) hbs.registerPartial(name, fs.readFileSync(path.join(dir, `${name}.hbs`), 'utf8').replace(/\n$/, ''));
  return new Map(names.map((name) => [name, hbs.compile(`{{> ${name}}}`)]));
}

/** Renders templates/dashboard/`name`.hbs; values are escaped, bidi overrides and control characters made visible first. */
export function renderDashboardTemplate(name: string, view: unknown): string {
  templates ??= loadTemplates();
  const template = templates.get(name);
  if (!template) throw new Error(`no dashboard template "${name}"`);
  return template(neutralizeView(view));
}

/** Sends the page `page` (a template of templates/dashboard, rendered with `body`) inside the document around every page. */
export function sendPage(res: Response, status: number, title: string, page: string, body: object = {}, ctx: Partial<Page> = {}): void {
  res.status(status).type('html');
  res.send(renderDashboardTemplate('layout', { ...ctx, title, page, body }));
}

export type Authed = Request & { session?: Session };

export interface DashboardDeps {
  options: DashboardOptions;
  keys: SessionKeys;
}

export function buildPageContext(deps: DashboardDeps, req: Authed) {
  const { options } = deps;
  const formatTime = (ms: number) => formatDateTime(new Date(ms).toISOString(), options.timezone);
  const pause = options.worker?.breaker;
  const mail = options.transportHealth?.status();
  return {
    csrf: deps.keys.csrfToken(req.session!),
    formatTime,
    notices: options.notices,
    unrecorded: options.worker?.unrecorded.count,
    // The queue's pause (the transport failed for every message); `state` as /readyz names it.
    queuePause:
      pause && pause.state !== 'closed'
        ? {
            state: pause.held ? 'held' : pause.state === 'open' ? 'paused' : 'probing',
            held: pause.held,
            probing: pause.state === 'probing',
            since: formatTime(pause.pausedSince ?? options.clock.now()),
            nextTry: formatTime(pause.openUntil),
            lastError: pause.lastError ? `${pause.lastError.code}: ${pause.lastError.message}` : 'unknown',
            code: pause.lastError?.code,
          }
        : undefined,
    // Why mail cannot leave (the last send or check failed); absent while it can.
    mail: mail && !mail.ok ? { code: mail.code, message: mail.message ?? 'the last check failed' } : undefined,
  };
}

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
export const SESSION_COOKIE = 'cr_ui_session';

export type Session = { id: string; expiresAt: number };

export type SessionKeys = ReturnType<typeof createSessionKeys>;

const mac = (key: Buffer, data: string) => createHmac('sha256', key).update(data).digest('base64url');

/**
 * Stateless signed sessions, keyed from ADMIN_TOKEN: every replica accepts the cookie, restarts keep logins, a new
 * token logs everyone out. The CSRF token is an HMAC of the session id, so nothing is stored server-side.
 */
export function createSessionKeys(adminToken: string) {
  const key = createHmac('sha256', adminToken).update('compliance-relay/dashboard-session/v1').digest();
  const csrfKey = createHmac('sha256', key).update('csrf').digest();
  return {
    issue(now: number): { cookie: string; session: Session } {
      const session = { id: randomBytes(18).toString('base64url'), expiresAt: now + SESSION_TTL_MS };
      const payload = `v1.${session.id}.${session.expiresAt}`;
      return { cookie: `${payload}.${mac(key, payload)}`, session };
    },
    verify(cookie: string | undefined, now: number): Session | undefined {
      const m = /^(v1\.([A-Za-z0-9_-]{24})\.(\d{1,16}))\.([A-Za-z0-9_-]{43})$/.exec(cookie ?? '');
      if (!m || !isSameSecret(mac(key, m[1]), m[4])) return undefined;
      const expiresAt = Number(m[3]);
      return expiresAt > now ? { id: m[2], expiresAt } : undefined;
    },
    csrfToken(session: Session): string {
      return mac(csrfKey, session.id);
    },
    verifyCsrf(session: Session, token: unknown): boolean {
      return typeof token === 'string' && isSameSecret(mac(csrfKey, session.id), token);
    },
    verifyAdminToken(candidate: unknown): boolean {
      return typeof candidate === 'string' && candidate.length > 0 && candidate.length <= 1024 && isSameSecret(candidate, adminToken);
    },
  };
}

export function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
