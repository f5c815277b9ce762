import type { Clock, Logger } from '../shared';
import { buildMessageId, buildOutgoingMail, buildThreadId } from '../mail';
import type { OutgoingMail, RenderedMail, Recipients, Renderer } from '../mail';
import { buildMailView, buildOwnerGroupView, type MailView, type MailViewOptions, type ReportView } from './build-report-view';
import type { PlannedReport, Route } from '../routing';
import { readReport, type DeliveryRecord, type NewRouteMail, type OwnerGroupPlan } from '../store';
import type { OwnerDirectory } from '../enrichment';
import type { ReportInsights } from './create-report-insights';
import { CSV_ATTACHMENT_MAX_BYTES, MAX_FAILING_TESTS_LISTED } from './build-enrichment-view';
import { parseDelivery, type ReportDelivery } from '../webhook';

/** One report, composed once: the data each route's mail is rendered from. */
export interface ComposedReport extends PlannedReport {
  kind: 'report';
  /** The whole report's view and CSV, built once for every route. */
  whole: MailView;
  /** Absent without the insight stage. */
  insights?: ReportInsights;
}

/** A relay notice (the watchdog's, the catch-up's): one ready message on a pseudo-route (`route`), never routed. */
export interface ComposedNotice {
  kind: 'notice';
  route: string;
  message: OutgoingMail;
  /** As the deliveries listing shows it (default: a relay notice, not routed). */
  reason?: string;
}

export type ComposedMail = ComposedReport | ComposedNotice;

export type ReportComposer = ReturnType<typeof createReportComposer>;

export interface ReportComposerOptions
  extends Pick<MailViewOptions, 'mail' | 'netboxUrl' | 'relayUrl'>, Partial<Pick<MailViewOptions, 'maxFailures' | 'attachMaxBytes'>> {
  renderer: Renderer;
  clock: Clock;
  routes: readonly Route[];
  /** The implicit `default` route (no ROUTES_FILE) keeps the Message-IDs it had before routes existed, across an upgrade. */
  implicitRoute?: boolean;
  /** Given when the relay serves several NetBox sources: the mail names it and a named source's reports thread apart. */
  source?: { name: string; isDefault: boolean };
  /** Never throws, bounded by its own budget. */
  insights?: (delivery: ReportDelivery, log?: Logger) => Promise<ReportInsights>;
  /** Absent without NetBox and token. */
  owners?: (reportKey: string, resultsUrl: string) => OwnerDirectory;
}

/** A delivery whose stored bytes no longer parse (they did at ingest): permanent. */
export class UnreadableDeliveryError extends Error {
  readonly code = 'EUNREADABLE';
}

/** Builds a delivery's view once, then each route's mail with its template set, subject and recipients. */
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
    /** One route's finished mail; undefined when the route is gone. Async: a throw (a template error) is its rejection. */
    render: async (composed: ComposedReport, mail: Pick<NewRouteMail, 'route' | 'reminder' | 'reason' | 'ownerGroup'>) => {
      const route = routes.get(mail.ownerGroup?.route ?? mail.route);
      if (!route) return undefined;
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
      const rendered = renderWithinBudget(routeView, (v) => options.renderer.render(v, route.template, renderOptions));
      // Each owner group is a conversation of its own (a preview's group, planned under the route's name, is named as the
      // planner names it).
      const mailRoute = mail.route === route.name && group && !group.whole && route.owners ? `${route.name}~${group.key}` : mail.route;
      const { from } = options.mail;
      const { id, dedupKey, report } = composed.delivery;
      return buildOutgoingMail({
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
      });
    },
  };
}

/** A route's recipients; a route by owner without a group (a preview, a send-test) goes to its fallback. */
export const buildRouteRecipients = (route: Route, group: OwnerGroupPlan | null): Recipients => ({
  to: route.owners ? (group?.to ?? route.owners.fallback) : route.to,
  cc: route.cc,
  bcc: route.bcc,
  replyTo: route.reply_to,
});

/** For a delivery without typed fields (stored before migration 6, or a preview of a file). */
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
    'X-Compliance-Pass-Percent': view.owners?.countsMissing ? 'unknown' : (view.overall.percent?.toFixed(1) ?? 'none'),
    'X-Compliance-High-Failed': String(view.highFailed),
    'X-Compliance-Verdict': view.verdict?.direction ?? 'none',
    // A report received after a newer one of its series (its verdict is against the report created before it).
    ...(view.trend?.arrivedLate ? { 'X-Compliance-Arrived': 'late' } : {}),
    'X-Compliance-Route': route,
    ...(view.source ? { 'X-Compliance-Source': view.source.name } : {}),
    ...(view.receivedVia === 'catch-up' ? { 'X-Compliance-Received': 'catch-up' } : {}),
  };
}

/** Gmail clips a message whose HTML exceeds about 102 KB, hiding what comes after the cut: the links to NetBox come last. */
export const MAIL_HTML_MAX_BYTES = 100_000;

/** Renders the view again with half the failing tests listed while its HTML is too big, down to none, then no top devices. */
export function renderWithinBudget<V extends ReportView>(view: V, render: (view: V) => RenderedMail): RenderedMail {
  let rendered = render(view);
  let current = view;
  while (Buffer.byteLength(rendered.html) > MAIL_HTML_MAX_BYTES) {
    const enrichment = current.enrichment;
    const listed = enrichment ? enrichment.groups.reduce((n, g) => n + g.tests.length, 0) : 0;
    if (!enrichment || (listed === 0 && enrichment.topDevices.length === 0)) break;
    const keep = Math.floor(listed / 2);
    let left = keep;
    const groups = enrichment.groups
      .map((group) => {
        const tests = group.tests.slice(0, Math.max(0, left));
        left -= tests.length;
        return { ...group, tests };
      })
      .filter((group) => group.tests.length > 0);
    const topDevices = keep === 0 ? [] : enrichment.topDevices;
    current = { ...current, enrichment: { ...enrichment, groups, moreTests: enrichment.failingTests - keep, topDevices } };
    rendered = render(current);
  }
  return rendered;
}
