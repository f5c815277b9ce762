import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import { loadRenderer, type OutgoingMail } from '../mail';
import { parseDigestSchedule, type Route } from '../routing';
import { createSilentLogger, systemClock, type Clock } from '../shared';
import { createRelayDigestComposer, createRelayWaiverBook } from '../relay';
import { buildJobDelivery, openStore, type DeliveryRecord, type DigestJob, type Store } from '../store';
import { UsageError, type CliIo } from './io';

/**
 * The period `--period` names: `last` (default: the period that ended at the schedule's latest tick), `current`
 * (from that tick to now: the next digest so far), or `<from>/<to>` (ISO 8601 dates or times).
 */
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

/**
 * `preview --digest ROUTE`: renders a digest route's digest for a period from the stored history,
 * as the worker composes it (same reports, same template), and writes subject.txt, mail.html,
 * mail.txt and mail.eml. Sends nothing and writes nothing to the store. `last` is the digest the relay
 * recorded for the latest tick when there is one (its start, its lateness), else the schedule's period.
 */
export async function previewDigest(
  routeName: string,
  options: { period?: string; out: string },
  config: Config,
  io: CliIo,
): Promise<number> {
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
    if (options.period === undefined || options.period === 'last') Object.assign(job, await findRecordedPeriod(store, job));
    const waivers = createRelayWaiverBook(config, { clock, logger: createSilentLogger() }, store);
    const composeDigest = createRelayDigestComposer(config, { clock }, { store, renderer, waivers, routes: [route] });
    const { message: mail } = await composeDigest({ ...buildJobDelivery({ kind: 'digest', job }), id: 0 } as DeliveryRecord);
    const period = `${new Date(job.periodStart).toISOString()} to ${new Date(job.periodEnd).toISOString()}`;
    writePreviewFiles(io, options.out, mail, `Digest ${route.name}, ${period}`);
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * The period as the relay recorded it when a digest ended at the same tick: after a missed tick (or at a
 * route's first digest) it started elsewhere than the schedule's previous tick, and may have been late.
 */
async function findRecordedPeriod(store: Store, job: DigestJob): Promise<Partial<DigestJob>> {
  const recorded = (await store.listDigestPeriods({ route: job.route, limit: 1000 })).find(
    (p) => p.periodEnd === job.periodEnd && p.deliveryId !== null,
  );
  return recorded ? { periodStart: recorded.periodStart, late: recorded.late, queuedAt: recorded.queuedAt } : {};
}

/**
 * Writes a previewed mail as `subject.txt`, `mail.html`, `mail.txt` and `mail.eml` into `out` (made if
 * missing) and prints `headline`, the subject, the envelope and `details`.
 */
export function writePreviewFiles(io: CliIo, out: string, mail: OutgoingMail, headline: string, details = ''): void {
  const dir = path.resolve(io.cwd, out);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'subject.txt'), `${mail.subject}\n`);
  fs.writeFileSync(path.join(dir, 'mail.html'), mail.html);
  fs.writeFileSync(path.join(dir, 'mail.txt'), mail.text);
  fs.writeFileSync(path.join(dir, 'mail.eml'), mail.raw);
  io.stdout.write(
    `${headline}: ${mail.subject}\n` +
      `Envelope: from ${mail.envelope.from} to ${mail.envelope.to.join(', ')}\n` +
      details +
      `Wrote subject.txt, mail.html, mail.txt and mail.eml to ${dir}\n`,
  );
}
