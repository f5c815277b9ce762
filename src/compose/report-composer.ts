import type { Clock, Logger } from '../shared';
import {
  buildMessageId,
  buildOutgoingMail,
  buildThreadId,
  type MailInput,
  type OutgoingMail,
  type RenderedMail,
  type Recipients,
  type Renderer,
} from '../mail';
import { buildMailView, buildOwnerGroupView, type MailView, type MailViewOptions, type ReportView } from './build-report-view';
import type { PlannedReport, Route } from '../routing';
import { readReport, type DeliveryRecord, type NewRouteMail, type OwnerGroupPlan } from '../store';
import type { OwnerDirectory } from '../enrichment';
import type { EnrichmentView } from './build-enrichment-view';
import type { ReportInsights } from './create-report-insights';
import { CSV_ATTACHMENT_MAX_BYTES, MAX_FAILING_TESTS_LISTED } from './build-enrichment-view';
import { parseDelivery, type ReportDelivery } from '../webhook';

/**
 * One mail of a delivery's plan, as its renderer reads it: `route` names the mail (`<route>~<group>` for an owner
 * group: its Message-ID and thread go by it), `ownerGroup` the owner group it is for.
 */
export type RouteMailPlan = Pick<NewRouteMail, 'route' | 'reminder' | 'reason' | 'ownerGroup'>;

/** One report, composed once: the data each route's mail is rendered from (see {@link ReportComposer.render}). */
export interface ComposedReport extends PlannedReport {
  kind: 'report';
  /** The whole report's view and CSV, built once for every route. */
  whole: MailView;
  /** What the insight stage found (enrichment, waivers, trend); absent without it. */
  insights?: ReportInsights;
}

/**
 * A relay notice that is not a report (the watchdog's "no report since …"): one ready message on one
 * pseudo-route, recorded and sent once like a route mail, never routed.
 */
export interface ComposedNotice {
  kind: 'notice';
  /** The name it is recorded under (e.g. `watchdog`). */
  route: string;
  message: OutgoingMail;
  /** As the deliveries listing shows it (default: a relay notice, not routed). */
  reason?: string;
}

export type ComposedMail = ComposedReport | ComposedNotice;

/** A report's two steps: composed once per delivery (its insights and view), then rendered to each route's finished mail. */
export type ReportComposer = ReturnType<typeof createReportComposer>;

export interface ReportComposerOptions
  extends Pick<MailViewOptions, 'mail' | 'netboxUrl' | 'relayUrl'>, Partial<Pick<MailViewOptions, 'maxFailures' | 'attachMaxBytes'>> {
  renderer: Renderer;
  clock: Clock;
  routes: readonly Route[];
  /**
   * True for the implicit `default` route (no ROUTES_FILE): its Message-IDs keep the form they had
   * before routes existed, so mails of deliveries queued across an upgrade keep their ids.
   */
  implicitRoute?: boolean;
  /** Given when the relay serves several NetBox sources: the mail names it and a named source's reports thread apart. */
  source?: { name: string; isDefault: boolean };
  /** Never throws, bounded by its own budget. */
  insights?: (delivery: ReportDelivery, log?: Logger) => Promise<ReportInsights>;
  /** NetBox's owners of a report's devices (enrichment's resolver for this source); absent without NetBox and token. */
  owners?: (reportKey: string, resultsUrl: string) => OwnerDirectory;
}

/** A delivery whose stored bytes no longer parse (they did at ingest): permanent. */
export class UnreadableDeliveryError extends Error {
  readonly code = 'EUNREADABLE';
}

/**
 * Reads the report the webhook parsed (stored with the delivery), builds the view once, and renders
 * each route's mail with its template set, subject and recipients. Message-ID comes from the delivery
 * and the route, Date from the injected clock.
 */
export function createReportComposer(options: ReportComposerOptions) {
  const routes = new Map(options.routes.map((r) => [r.name, r]));
  const viewOptions: MailViewOptions = {
    netboxUrl: options.netboxUrl,
    mail: options.mail,
    sourceName: options.source?.name,
    maxFailures: options.maxFailures ?? MAX_FAILING_TESTS_LISTED,
    attachCsv: options.routes.some((r) => r.attach_csv === true),
    attachMaxBytes: options.attachMaxBytes ?? CSV_ATTACHMENT_MAX_BYTES,
    relayUrl: options.relayUrl,
  };
  return {
    compose: async (delivery: DeliveryRecord, log?: Logger): Promise<ComposedReport> => {
      const parsed = readReport(delivery) ?? parseStoredBody(delivery);
      // Enrichment and trend once per delivery, shared by every route's mail.
      const insights = options.insights ? await options.insights(parsed, log) : undefined;
      const kept = insights?.kept;
      return {
        kind: 'report',
        delivery: parsed,
        whole: buildMailView(parsed, insights, viewOptions),
        insights,
        trend: insights?.recorded?.trend ?? null,
        failures: kept?.status === 'ok' ? kept.summary.results : null,
        failuresMissing: kept?.status === 'missing' ? { code: kept.code, reason: kept.reason } : null,
        owners: options.owners ? options.owners(delivery.dedupKey, parsed.report.results_url) : null,
      };
    },
    /** The finished mail for one route (the worker sends and keeps exactly these bytes); undefined when the route is gone. */
    // An async function: a throw (a template error, say) arrives as its rejection.
    render: async (composed: ComposedReport, mail: RouteMailPlan) => {
      const route = routes.get(mail.ownerGroup?.route ?? mail.route);
      return route && buildOutgoingMail(buildRouteMail(options, viewOptions, composed, route, mail));
    },
  };
}

/** One route's mail of a composed report, before it is built to bytes: its view rendered, its recipients and headers. */
function buildRouteMail(
  options: ReportComposerOptions,
  viewOptions: MailViewOptions,
  composed: ComposedReport,
  route: Route,
  mail: RouteMailPlan,
): MailInput {
  const group = mail.ownerGroup ?? null;
  const scoped = group ? buildOwnerGroupView(composed.whole, composed.delivery, composed.insights, group, viewOptions) : composed.whole;
  // The CSV is built once for every route that attaches it; a route without attach_csv goes without it and its note.
  const attachCsv = route.attach_csv === true;
  const routeView = {
    ...scoped.view,
    enrichment: attachCsv || !scoped.view.enrichment ? scoped.view.enrichment : { ...scoped.view.enrichment, attachment: null },
    route: { name: route.name, reminder: mail.reminder, reason: mail.reason },
    chart: route.chart === false ? null : scoped.view.chart,
  };
  const renderOptions = route.subject === undefined ? {} : { subject: route.subject };
  // In-line, not on a render thread: with the CSS inlined at load a render is one Handlebars call.
  const rendered = renderWithinBudget(routeView, (v) => options.renderer.render(v, route.template, renderOptions));
  // Each owner group is a conversation of its own: the same owners' mails stack report after report (a
  // preview's group, planned under the route's name, is named as the planner names it).
  const mailRoute = mail.route === route.name && group && !group.whole && route.owners ? `${route.name}~${group.key}` : mail.route;
  const { from } = options.mail;
  const { id, dedupKey, report } = composed.delivery;
  return {
    ...rendered,
    ...buildRouteRecipients(route, group),
    from,
    messageId: buildMessageId({
      deliveryId: id,
      reportId: report.id,
      dedupKey,
      from,
      route: options.implicitRoute ? undefined : mailRoute,
    }),
    threadId: buildThreadId({ from, route: mailRoute, source: options.source?.isDefault ? undefined : options.source?.name }),
    date: new Date(options.clock.now()),
    headers: { ...buildFilterHeaders(scoped.view, route.name), ...(group ? { 'X-Compliance-Owner-Group': group.key } : {}) },
    attachments: attachCsv && scoped.attachments.length ? scoped.attachments : undefined,
  };
}

/** A route's recipients; a route by owner without a group (a preview, a send-test) goes to its fallback. */
export function buildRouteRecipients(route: Route, group: OwnerGroupPlan | null): Recipients {
  return { to: route.owners ? (group?.to ?? route.owners.fallback) : route.to, cc: route.cc, bcc: route.bcc, replyTo: route.reply_to };
}

/** The record with its report from the stored bytes, for a delivery without typed fields (stored before migration 6, or a preview of a file). */
function parseStoredBody(delivery: DeliveryRecord): DeliveryRecord & ReportDelivery {
  const parsed = parseDelivery(delivery.body!);
  if (parsed.kind !== 'report') throw new UnreadableDeliveryError(`delivery ${delivery.id} is not a report: ${parsed.reason}`);
  // Its key and source as stored (a named source's key carries the source): the Message-ID and the trend go by them.
  return { ...delivery, ...parsed, dedupKey: delivery.dedupKey, source: delivery.source };
}

/** Headers for client-side filters (Sieve, Outlook rules): stable names, plain values. */
export function buildFilterHeaders(view: ReportView, route: string): Record<string, string> {
  return {
    'X-Compliance-Report-Id': String(view.report.id),
    // An owner group NetBox could not count has no percentage of its own: the report's is not its.
    'X-Compliance-Pass-Percent': view.owners?.countsMissing
      ? 'unknown'
      : view.overall.percent === null
        ? 'none'
        : view.overall.percent.toFixed(1),
    'X-Compliance-High-Failed': String(view.highFailed),
    // The trend's verdict (first, better, worse, mixed, same), for mail rules; `none` without a trend.
    'X-Compliance-Verdict': view.verdict?.direction ?? 'none',
    // A report received after a newer one of its series (its verdict is against the report created before it).
    ...(view.trend?.arrivedLate ? { 'X-Compliance-Arrived': 'late' } : {}),
    'X-Compliance-Route': route,
    ...(view.source ? { 'X-Compliance-Source': view.source.name } : {}),
    // Only for a report fetched from NetBox because its webhook never arrived.
    ...(view.receivedVia === 'catch-up' ? { 'X-Compliance-Received': 'catch-up' } : {}),
  };
}

/**
 * The most HTML a mail carries. Gmail clips a message whose HTML exceeds about 102 KB ("[Message clipped]
 * View entire message"), hiding whatever comes after the cut, and the links to NetBox come last. The failing
 * results left out are in the CSV attachment and behind the "and N more failing tests" link.
 */
export const MAIL_HTML_MAX_BYTES = 100_000;

/**
 * Renders the view; while its HTML is over {@link MAIL_HTML_MAX_BYTES}, renders it again with half the
 * failing tests listed (the others counted in `moreTests`), down to none.
 */
export function renderWithinBudget<V extends ReportView>(view: V, render: (view: V) => RenderedMail): RenderedMail {
  let rendered = render(view);
  let current = view;
  while (Buffer.byteLength(rendered.html) > MAIL_HTML_MAX_BYTES) {
    const enrichment = current.enrichment;
    const listed = enrichment ? enrichment.groups.reduce((n, g) => n + g.tests.length, 0) : 0;
    if (!enrichment || (listed === 0 && enrichment.topDevices.length === 0)) break;
    current = { ...current, enrichment: keepTests(enrichment, Math.floor(listed / 2)) };
    rendered = render(current);
  }
  return rendered;
}

/** The enrichment with only its first `keep` tests listed; with none, without the top devices either. */
function keepTests(enrichment: EnrichmentView, keep: number): EnrichmentView {
  let left = keep;
  const groups = enrichment.groups
    .map((group) => {
      const tests = group.tests.slice(0, Math.max(0, left));
      left -= tests.length;
      return { ...group, tests };
    })
    .filter((group) => group.tests.length > 0);
  return {
    ...enrichment,
    groups,
    moreTests: enrichment.failingTests - keep,
    topDevices: keep === 0 ? [] : enrichment.topDevices,
  };
}
