import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import { createReportComposer, readSampleDelivery } from '../compose';
import { describeMailFailure } from './check-config-command';
import { loadRenderer, TemplateError, type OutgoingMail, type Renderer } from '../mail';
import { createNotifier } from '../notify';
import { createRelayDigestComposer, createRelayWaiverBook } from '../relay';
import { buildDefaultRoute, parseDigestSchedule, type Route } from '../routing';
import { createSilentLogger, RelayError, systemClock, type Clock } from '../shared';
import { buildJobDelivery, openStore, StorageUnavailableError, type DeliveryRecord, type DigestJob, type Store } from '../store';
import { parseDelivery, type ReportDelivery } from '../webhook';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, UsageError, type CliIo } from './io';
import { composeReadOnly, describeOwnerGroups, findOwnerGroups } from './read-only-composer';

export interface PreviewOptions {
  id?: string;
  last?: boolean;
  route?: string;
  digest?: string;
  period?: string;
  group?: string;
  out: string;
}

/** `preview`: renders a delivery (a file or a stored one) as the worker would for one route and writes its four files; sends nothing. */
export async function previewCommand(file: string | undefined, options: PreviewOptions, config: Config, io: CliIo): Promise<number> {
  let store: Store | undefined;
  try {
    const named = checkOptions(file, options, config);
    if (options.digest !== undefined) return await previewDigest(options.digest, options, config, io);
    if (file === undefined) store = openStore(config.store);
    const loaded = store ? await readStoredDelivery(store, options) : readDeliveryFile(path.resolve(io.cwd, file!), io);
    const route = named ?? (await chooseRoute(config, store, loaded.id));
    return await writePreview(loaded, route, { config, io, store, out: options.out, group: options.group });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    io.stderr.write(`compliance-relay: ${describe(error)}\n`);
    if (error instanceof TemplateError) return EXIT_CONFIG;
    // The delivery asked for is not a report (a digest is made of reports the relay accepted).
    if (error instanceof RelayError && options.digest === undefined) return EXIT_USAGE;
    // The store or the file could not be read: the environment, not the delivery.
    return error instanceof StorageUnavailableError || typeof (error as NodeJS.ErrnoException)?.errno === 'number' ? EXIT_UNAVAILABLE : 1;
  } finally {
    await store?.close();
  }
}

function checkOptions(file: string | undefined, options: PreviewOptions, config: Config): Route | undefined {
  const given = [file !== undefined, options.id !== undefined, options.last === true, options.digest !== undefined].filter(Boolean);
  if (given.length !== 1) throw new UsageError('preview needs exactly one of <delivery.json>, --id N, --last, --digest ROUTE');
  if (options.period !== undefined && options.digest === undefined) throw new UsageError('--period goes with --digest ROUTE');
  if (options.digest !== undefined || options.route === undefined) return undefined;
  const route = config.routing.routes.find((r) => r.name === options.route);
  if (!route) throw new UsageError(`no route "${options.route}" (routes: ${config.routing.routes.map((r) => r.name).join(', ')})`);
  if (route.digest) throw new UsageError(`route "${options.route}" is a digest route: preview its digest with --digest ${options.route}`);
  return route;
}

async function chooseRoute(config: Config, store: Store | undefined, deliveryId: number): Promise<Route> {
  const { routes } = config.routing;
  const mailed = store ? (await store.listRouteMails([deliveryId])).find((m) => m.outcome === 'send') : undefined;
  // A digest route mails no report: the first per-report route stands in (else the first route).
  return routes.find((r) => r.name === (mailed?.ownerGroup?.route ?? mailed?.route)) ?? routes.find((r) => !r.digest) ?? routes[0];
}

async function writePreview(
  delivery: DeliveryRecord,
  route: Route,
  context: { config: Config; io: CliIo; store?: Store; out: string; group?: string },
): Promise<number> {
  const { config, io, store } = context;
  const renderer = loadRenderer(config.mail.templatesDir);
  return composeReadOnly(config, delivery, { renderer, store, readFile: io.readFile, routes: [route] }, async (composer, composed) => {
    const owners = await findOwnerGroups(config, [route], route.name, delivery, composed, store);
    const group = owners.groups.find((g) => g.key === context.group) ?? owners.groups[0] ?? null;
    if (context.group !== undefined && group?.key !== context.group) {
      throw new UsageError(`route ${route.name} has no owner group "${context.group}" for this report`);
    }
    const mail = (await composer.render(composed, { route: route.name, reminder: false, reason: 'preview', ownerGroup: group }))!;
    const others = config.routing.routes.filter((r) => r.name !== route.name).map((r) => r.name);
    const headline = `Route ${route.name}${others.length ? ` (other routes: ${others.join(', ')}; choose with --route)` : ''}`;
    writePreviewFiles(io, context.out, mail, headline, describeOwnerGroups(owners, group));
    return 0;
  });
}

/** `send-test`: sends the sample report through the configured notifier to `--to` (default: the first route's) and prints the answer. */
export async function sendTestCommand(options: { to?: string }, config: Config, io: CliIo): Promise<number> {
  const to = options.to
    ? options.to
        .trim()
        .split(/\s*,\s*/)
        .filter(Boolean)
    : undefined;
  const route: Route = to ? buildDefaultRoute({ to, cc: [], bcc: [] }) : config.routing.routes[0];
  const delivery = toClaimedDelivery({ ...readSampleDelivery(), dedupKey: `send-test@${new Date(systemClock.now()).toISOString()}` });
  const composer = createSendTestComposer(config, route);
  const mail = (await composer.render(await composer.compose(delivery), { route: route.name, reminder: false, reason: 'send-test' }))!;
  const notifier = createNotifier(config.transport, { readFile: io.readFile, proxy: config.proxy }, io.transports);
  try {
    const answer = await notifier.send(mail);
    if ('failure' in answer) {
      io.stderr.write(`compliance-relay: the test mail was not sent ${describeMailFailure(answer.failure, config, io.transports)}\n`);
      return EXIT_UNAVAILABLE;
    }
    io.stdout.write(`Sent the sample report to ${mail.envelope.to.join(', ')}.\nServer answer: ${answer.response}\n`);
    return 0;
  } finally {
    await notifier.close();
  }
}

/** The relay's composer for one route and the default source, without NetBox enrichment, with `[test] ` before the subject. */
function createSendTestComposer(config: Config, route: Route) {
  const source = config.sources[0];
  const loaded = loadRenderer(config.mail.templatesDir);
  // The prefix goes into the subject before the mail is built: its bytes are final once built.
  const renderer: Renderer = {
    ...loaded,
    render: (...args) => {
      const rendered = loaded.render(...args);
      return { ...rendered, subject: `[test] ${rendered.subject}` };
    },
  };
  return createReportComposer({
    renderer,
    clock: systemClock,
    mail: config.mail,
    routes: [route],
    implicitRoute: false,
    netboxUrl: source.netbox.url,
    source: config.sources.length > 1 ? { name: source.name, isDefault: true } : undefined,
  });
}

function toClaimedDelivery(parsed: ReportDelivery, body?: Buffer): DeliveryRecord {
  return { ...parsed, id: 0, reportId: parsed.report.id, body, attempts: 1 } as DeliveryRecord;
}

function readDeliveryFile(file: string, io: CliIo): DeliveryRecord {
  const body = io.readFile(file);
  const parsed = parseDelivery(body);
  if (parsed.kind !== 'report') throw new UsageError(`${file} is not a compliance report delivery: ${parsed.reason}`);
  return toClaimedDelivery(parsed, body);
}

async function readStoredDelivery(store: Store, options: PreviewOptions): Promise<DeliveryRecord> {
  let id = options.id === undefined ? undefined : Number(options.id);
  if (options.id !== undefined && !Number.isSafeInteger(id))
    throw new UsageError(`--id must be a delivery id (a number), got "${options.id}"`);
  if (options.last) id = (await store.listDeliveries({ limit: 1 }))[0]?.id;
  if (id === undefined) throw new UsageError('the store has no delivery yet');
  const record = await store.getDelivery(id);
  const body = record ? await store.getDeliveryBody(id) : undefined;
  if (!record || !body) throw new UsageError(`no delivery ${id} in the store (or its body was pruned)`);
  return { ...record, body };
}

function describe(error: unknown): string {
  if (error instanceof RelayError)
    return `${error.code}: ${error.message}${error.issues ? ` (${error.issues.map((i) => `${i.path}: ${i.message}`).join('; ')})` : ''}`;
  const err = error as NodeJS.ErrnoException;
  return err?.code ? `${err.code}: ${err.message}` : String((error as Error)?.message ?? error);
}

/** `--period`: `last` (default: ended at the schedule's latest tick), `current` (that tick to now) or `<from>/<to>` (ISO 8601). */
function parseDigestPeriod(value: string | undefined, route: Route, timezone: string, now: number): DigestJob {
  const job = (periodStart: number, periodEnd: number) => ({ route: route.name, periodStart, periodEnd, late: false, queuedAt: now });
  const schedule = parseDigestSchedule(route.digest!.schedule, timezone);
  const tick = schedule.tickAtOrBefore(now);
  if (value === undefined || value === 'last' || value === 'current') {
    if (tick === null) throw new UsageError(`the schedule of route ${route.name} has no tick before now`);
    if (value === 'current') return job(tick, now);
    return job(schedule.tickAtOrBefore(tick - 1) ?? tick - 1, tick);
  }
  const [from, to, extra] = value.split('/');
  const start = Date.parse(from);
  const end = Date.parse(to ?? '');
  if (extra !== undefined || Number.isNaN(start) || Number.isNaN(end) || end <= start) {
    throw new UsageError(`--period must be last, current or <from>/<to> (ISO 8601, from before to), not "${value}"`);
  }
  return job(start, end);
}

/** `preview --digest ROUTE`: a digest from the stored history; `last` is the recorded one for the latest tick when there is one. */
async function previewDigest(routeName: string, options: { period?: string; out: string }, config: Config, io: CliIo): Promise<number> {
  const clock: Clock = io.clock ?? systemClock;
  const route = config.routing.routes.find((r) => r.name === routeName && r.digest);
  if (!route) {
    const digests = config.routing.routes.filter((r) => r.digest).map((r) => r.name);
    throw new UsageError(`no digest route "${routeName}" (digest routes: ${digests.join(', ') || 'none'})`);
  }
  const timezone = route.digest!.timezone ?? config.mail.timezone;
  const job = parseDigestPeriod(options.period, route, timezone, clock.now());
  const renderer = loadRenderer(config.mail.templatesDir);
  const store: Store = openStore(config.store);
  try {
    if (options.period === undefined || options.period === 'last') {
      // As recorded when a digest ended at this tick: after a missed tick (or a first digest) it started earlier, maybe late.
      const periods = await store.listDigestPeriods({ route: route.name, limit: 1000 });
      const recorded = periods.find((p) => p.periodEnd === job.periodEnd && p.deliveryId !== null);
      if (recorded) Object.assign(job, { periodStart: recorded.periodStart, late: recorded.late, queuedAt: recorded.queuedAt });
    }
    const waivers = createRelayWaiverBook(config, { clock, logger: createSilentLogger() }, store);
    const composeDigest = createRelayDigestComposer(config, { clock }, { store, renderer, waivers });
    const { message: mail } = await composeDigest({ ...buildJobDelivery({ kind: 'digest', job }), id: 0 } as DeliveryRecord);
    const period = `${new Date(job.periodStart).toISOString()} to ${new Date(job.periodEnd).toISOString()}`;
    writePreviewFiles(io, options.out, mail, `Digest ${route.name}, ${period}`);
    return 0;
  } finally {
    await store.close();
  }
}

function writePreviewFiles(io: CliIo, out: string, mail: OutgoingMail, headline: string, details = ''): void {
  const dir = path.resolve(io.cwd, out);
  fs.mkdirSync(dir, { recursive: true });
  const files = { 'subject.txt': `${mail.subject}\n`, 'mail.html': mail.html, 'mail.txt': mail.text, 'mail.eml': mail.raw };
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content);
  io.stdout.write(
    `${headline}: ${mail.subject}\n` +
      `Envelope: from ${mail.envelope.from} to ${mail.envelope.to.join(', ')}\n` +
      details +
      `Wrote subject.txt, mail.html, mail.txt and mail.eml to ${dir}\n`,
  );
}
