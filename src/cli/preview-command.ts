import path from 'node:path';
import { DEFAULT_SOURCE_NAME, type Config } from '../config';
import { createReportComposer, SAMPLE_ENVELOPE } from '../compose';
import { describeMailFailure } from './describe-mail-failure';
import { describeOwnerGroups, findOwnerGroups } from './owner-groups';
import { defaultTemplatesDir, loadRenderer, TemplateError, type Renderer } from '../mail';
import { createNotifier } from '../notify';
import { buildDefaultRoute, type Route } from '../routing';
import { createRelayNetboxClients } from '../relay';
import { RelayError, systemClock } from '../shared';
import { openStore, StorageUnavailableError, type ClaimedDelivery, type Store } from '../store';
import { parseDelivery } from '../webhook';
import { EXIT_CONFIG, EXIT_UNAVAILABLE, EXIT_USAGE, type CliIo } from './io';
import { previewDigest } from './preview-digest';
import { createReadOnlyComposer } from './read-only-composer';
import { writePreviewFiles } from './write-preview-files';

export interface PreviewOptions {
  id?: string;
  last?: boolean;
  route?: string;
  /** A digest route: render its digest for `period` from the stored history instead of a delivery. */
  digest?: string;
  period?: string;
  /** A route by owner: the owner group whose mail to write (default: the first). */
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
 * Without `--route`, the first route the delivery was mailed on (else the first configured route).
 */
export async function previewCommand(file: string | undefined, options: PreviewOptions, config: Config, io: CliIo): Promise<number> {
  const sources = [file !== undefined, options.id !== undefined, options.last === true, options.digest !== undefined].filter(
    Boolean,
  ).length;
  if (sources !== 1) {
    io.stderr.write('compliance-relay: preview needs exactly one of <delivery.json>, --id N, --last, --digest ROUTE\n');
    return EXIT_USAGE;
  }
  if (options.period !== undefined && options.digest === undefined) {
    io.stderr.write('compliance-relay: --period goes with --digest ROUTE\n');
    return EXIT_USAGE;
  }
  if (options.digest !== undefined) return previewDigestOrReport(options.digest, options, config, io);
  if (options.route !== undefined && config.routing.routes.some((r) => r.name === options.route && r.digest)) {
    io.stderr.write(`compliance-relay: route "${options.route}" is a digest route: preview its digest with --digest ${options.route}\n`);
    return EXIT_USAGE;
  }
  if (options.route !== undefined && !config.routing.routes.some((r) => r.name === options.route)) {
    io.stderr.write(`compliance-relay: no route "${options.route}" (routes: ${config.routing.routes.map((r) => r.name).join(', ')})\n`);
    return EXIT_USAGE;
  }
  let store: Store | undefined;
  try {
    if (file === undefined) store = openStore(config.store);
    const loaded = store ? await readStoredDelivery(store, options) : readDeliveryFile(path.resolve(io.cwd, file!), io);
    if (typeof loaded === 'string') {
      io.stderr.write(`compliance-relay: ${loaded}\n`);
      return EXIT_USAGE;
    }
    const route = await chooseRoute(config.routing.routes, options.route, store, loaded.id);
    return await writePreview(loaded, route, { config, io, store, out: options.out, group: options.group });
  } catch (error) {
    io.stderr.write(`compliance-relay: ${describe(error)}\n`);
    if (error instanceof TemplateError) return EXIT_CONFIG;
    if (error instanceof RelayError) return EXIT_USAGE;
    // The store or the file could not be read: the environment, not the delivery.
    return error instanceof StorageUnavailableError || typeof (error as NodeJS.ErrnoException)?.errno === 'number' ? EXIT_UNAVAILABLE : 1;
  } finally {
    await store?.close();
  }
}

/** `--digest`: the digest of a period, with the same error handling as a delivery's preview. */
async function previewDigestOrReport(route: string, options: PreviewOptions, config: Config, io: CliIo): Promise<number> {
  try {
    return await previewDigest(route, { period: options.period, out: options.out }, config, io);
  } catch (error) {
    io.stderr.write(`compliance-relay: ${describe(error)}\n`);
    if (error instanceof TemplateError) return EXIT_CONFIG;
    return error instanceof StorageUnavailableError || typeof (error as NodeJS.ErrnoException)?.errno === 'number' ? EXIT_UNAVAILABLE : 1;
  }
}

/** The route asked for; else the first the delivery was mailed on; else the first configured. */
async function chooseRoute(
  routes: readonly Route[],
  name: string | undefined,
  store: Store | undefined,
  deliveryId: number,
): Promise<Route> {
  if (name !== undefined) return routes.find((r) => r.name === name)!;
  const mailed = store ? (await store.listRouteMails([deliveryId])).find((m) => m.outcome === 'send') : undefined;
  // A digest route mails no report: the first per-report route stands in (else the first route, as before).
  return routes.find((r) => r.name === (mailed?.ownerGroup?.route ?? mailed?.route)) ?? routes.find((r) => !r.digest) ?? routes[0];
}

/** Composes the route's mail as the worker does (history read, never written) and writes its four files. */
async function writePreview(
  delivery: ClaimedDelivery,
  route: Route,
  context: { config: Config; io: CliIo; store?: Store; out: string; group?: string },
): Promise<number> {
  const { config, io, store } = context;
  const netbox = createRelayNetboxClients(config, { clock: systemClock, readFile: io.readFile });
  try {
    const composer = createReadOnlyComposer(config, {
      renderer: loadRenderer(config.mail.templatesDir ?? defaultTemplatesDir()),
      store,
      netbox: netbox.get(delivery.netboxSource),
      sourceName: delivery.netboxSource,
      routes: [route],
    });
    const composed = await composer(delivery);
    const owners = await findOwnerGroups([route], route.name, delivery, composed, store);
    const group = owners.groups.find((g) => g.key === context.group) ?? owners.groups[0] ?? null;
    if (context.group !== undefined && group?.key !== context.group) {
      io.stderr.write(`compliance-relay: route ${route.name} has no owner group "${context.group}" for this report\n`);
      return EXIT_USAGE;
    }
    const mail = (await composed.messageFor({ name: route.name, reminder: false, reason: 'preview', group }))!;
    const out = path.resolve(io.cwd, context.out);
    writePreviewFiles(out, mail);
    const others = config.routing.routes.filter((r) => r.name !== route.name).map((r) => r.name);
    io.stdout.write(
      `Route ${route.name}${others.length ? ` (other routes: ${others.join(', ')}; choose with --route)` : ''}: ${mail.subject}\n` +
        `Envelope: from ${mail.envelope.from} to ${mail.envelope.to.join(', ')}\n` +
        describeOwnerGroups(owners, group) +
        `Wrote subject.txt, mail.html, mail.txt and mail.eml to ${out}\n`,
    );
    return 0;
  } finally {
    for (const client of netbox.values()) client.close();
  }
}

/**
 * `send-test`: sends the sample report (validity's documented delivery) through the configured
 * notifier to `--to` (default: the first route's recipients) and prints the server's answer.
 */
export async function sendTestCommand(options: { to?: string }, config: Config, io: CliIo): Promise<number> {
  const first = config.routing.routes[0];
  const to = options.to
    ? options.to
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;
  const route: Route = to ? buildDefaultRoute({ to, cc: [], bcc: [] }) : { ...first, subject: first.subject };
  const body = Buffer.from(JSON.stringify(SAMPLE_ENVELOPE));
  const parsed = parseDelivery(body);
  if (parsed.kind !== 'report') throw new Error('the built-in sample is not a report');
  const delivery = {
    id: 0,
    reportId: parsed.report.id,
    dedupKey: `send-test@${new Date(systemClock.now()).toISOString()}`,
    body,
    attempts: 1,
    report: parsed,
  } as ClaimedDelivery;
  const mail = (await (
    await createRouteComposer(config, route, { implicitRoute: false, subjectPrefix: '[test] ' })(delivery)
  ).messageFor({ name: route.name, reminder: false, reason: 'send-test' }))!;
  const notifier = createNotifier(config.transport, { readFile: io.readFile }, io.transports);
  try {
    const result = await notifier.send(mail);
    if (result.status !== 'sent') {
      io.stderr.write(`compliance-relay: the test mail was not sent ${describeMailFailure(result.failure, config)}\n`);
      return EXIT_UNAVAILABLE;
    }
    io.stdout.write(`Sent the sample report to ${mail.envelope.to.join(', ')}.\nServer answer: ${result.response}\n`);
    return 0;
  } finally {
    await notifier.close();
  }
}

/** The composer the relay uses, for one route, the default source and without NetBox enrichment (nothing is fetched or stored). */
function createRouteComposer(config: Config, route: Route, options: { implicitRoute?: boolean; subjectPrefix?: string } = {}) {
  const source = config.sources.find((s) => s.name === DEFAULT_SOURCE_NAME);
  const loaded = loadRenderer(config.mail.templatesDir ?? defaultTemplatesDir());
  const { subjectPrefix } = options;
  // The prefix goes into the subject before the mail is built: its bytes are final once built.
  const renderer: Renderer = subjectPrefix
    ? {
        ...loaded,
        render: (...args) => {
          const rendered = loaded.render(...args);
          return { ...rendered, subject: `${subjectPrefix}${rendered.subject}` };
        },
      }
    : loaded;
  return createReportComposer({
    renderer,
    clock: systemClock,
    from: config.mail.from,
    routes: [route],
    implicitRoute: options.implicitRoute ?? config.routing.file === undefined,
    timezone: config.mail.timezone,
    netboxUrl: source?.netbox.url,
    source: config.sources.length > 1 && source ? { name: source.name, isDefault: source.name === DEFAULT_SOURCE_NAME } : undefined,
  });
}

function readDeliveryFile(file: string, io: CliIo): ClaimedDelivery | string {
  const body = io.readFile(file);
  const parsed = parseDelivery(body);
  if (parsed.kind !== 'report') return `${file} is not a compliance report delivery: ${parsed.reason}`;
  // Parsed here already (to refuse a file that is not a report): the composer takes it as it is.
  return {
    id: 0,
    reportId: parsed.report.id,
    dedupKey: parsed.dedupKey,
    body,
    attempts: 1,
    report: parsed,
    netboxSource: DEFAULT_SOURCE_NAME,
  } as ClaimedDelivery;
}

async function readStoredDelivery(store: Store, options: PreviewOptions): Promise<ClaimedDelivery | string> {
  let id = options.id === undefined ? undefined : Number(options.id);
  if (options.id !== undefined && !Number.isSafeInteger(id)) return `--id must be a delivery id (a number), got "${options.id}"`;
  if (options.last) id = (await store.listDeliveries({ limit: 1 }))[0]?.id;
  if (id === undefined) return 'the store has no delivery yet';
  // The typed report (record.report) is what the worker composes from; a row stored before
  // migration 6 has none and the composer parses the body instead, as the worker would.
  const record = await store.getDelivery(id);
  const body = record ? await store.getDeliveryBody(id) : undefined;
  if (!record || !body) return `no delivery ${id} in the store (or its body was pruned)`;
  return { ...record, body };
}

function describe(error: unknown): string {
  if (error instanceof RelayError)
    return `${error.code}: ${error.message}${error.issues ? ` (${error.issues.map((i) => `${i.path}: ${i.message}`).join('; ')})` : ''}`;
  const err = error as NodeJS.ErrnoException;
  return err?.code ? `${err.code}: ${err.message}` : String((error as Error)?.message ?? error);
}
