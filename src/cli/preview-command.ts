import path from 'node:path';
import type { Config } from '../config';
import { createReportComposer, readSampleDelivery } from '../compose';
import { describeMailFailure } from './check-config-command';
import { loadRenderer, TemplateError, type Renderer } from '../mail';
import { createNotifier } from '../notify';
import { buildDefaultRoute, type Route } from '../routing';
import { RelayError, systemClock } from '../shared';
import { openStore, StorageUnavailableError, type DeliveryRecord, type Store } from '../store';
import { parseDelivery, type ReportDelivery } from '../webhook';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, UsageError, type CliIo } from './io';
import { previewDigest, writePreviewFiles } from './preview-digest';
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

/**
 * `preview`: renders a delivery (a JSON file as NetBox sends it, or one from the store) with the
 * relay's own composer and one route's template set, subject and recipients, and writes subject.txt,
 * mail.html, mail.txt and mail.eml to a directory. Sends nothing and writes nothing to the store.
 * A stored delivery (`--id`, `--last`) is rendered as the worker renders it: the trend against the
 * stored history and the failing tests kept with the report (NetBox is asked only when the store has
 * none, as the worker would), so the preview is the mail that was, or will be, sent (its Date aside).
 */
export async function previewCommand(file: string | undefined, options: PreviewOptions, config: Config, io: CliIo): Promise<number> {
  let store: Store | undefined;
  try {
    const named = checkOptions(file, options, config);
    if (options.digest !== undefined) return await previewDigest(options.digest, { period: options.period, out: options.out }, config, io);
    if (file === undefined) store = openStore(config.store);
    const loaded = store ? await readStoredDelivery(store, options) : readDeliveryFile(path.resolve(io.cwd, file!), io);
    const route = await chooseRoute(config.routing.routes, named, store, loaded.id);
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

/** The route `--route` names (undefined when not given); a UsageError when the options do not go together. */
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

/** The route asked for; else the first the delivery was mailed on; else the first configured. */
async function chooseRoute(
  routes: readonly Route[],
  named: Route | undefined,
  store: Store | undefined,
  deliveryId: number,
): Promise<Route> {
  if (named) return named;
  const mailed = store ? (await store.listRouteMails([deliveryId])).find((m) => m.outcome === 'send') : undefined;
  // A digest route mails no report: the first per-report route stands in (else the first route).
  return routes.find((r) => r.name === (mailed?.ownerGroup?.route ?? mailed?.route)) ?? routes.find((r) => !r.digest) ?? routes[0];
}

/** Composes the route's mail as the worker does (history read, never written) and writes its four files. */
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

/**
 * `send-test`: sends the sample report (validity's documented delivery) through the configured
 * notifier to `--to` (default: the first route's recipients) and prints the server's answer.
 */
export async function sendTestCommand(options: { to?: string }, config: Config, io: CliIo): Promise<number> {
  const to = options.to
    ? options.to
        .split(',')
        .map((s) => s.trim())
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

/**
 * The composer the relay uses, for one route and the default source (always the first), without NetBox enrichment (nothing is
 * fetched or stored), and with `[test] ` before the subject.
 */
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

/** A parsed delivery as the worker claims it (the composer takes its typed report as it is). */
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
  // The typed report (record.report) is what the worker composes from; a row stored before
  // migration 6 has none and the composer parses the body instead, as the worker would.
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
