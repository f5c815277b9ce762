import { buildReportView, createReportComposer } from '../src/compose';
import { loadRenderer } from '../src/mail';
import { defaultTemplatesDir } from '../src/relay';
import { buildDefaultRoute, DEFAULT_ROUTE_NAME } from '../src/routing';
import { systemClock } from '../src/shared';
import type { ClaimedDelivery } from '../src/store';
import { parseDelivery } from '../src/webhook';
import { computeInclusiveShare, profileCpu, summarizeSelfTime } from './lib/cpu-profile';
import type { Benchmark, BenchContext, Figure } from './lib/types';
import { createBodyFactory } from './lib/webhook-bodies';

/** Runs `fn` repeatedly for `ms` and returns how many times per second it ran. */
function measureRate(fn: () => void, ms: number): number {
  const started = process.hrtime.bigint();
  const end = started + BigInt(Math.round(ms * 1e6));
  let n = 0;
  let now = started;
  while (now < end) {
    fn();
    n += 1;
    now = process.hrtime.bigint();
  }
  return n / (Number(now - started) / 1e9);
}

/**
 * Render: mails per second through the shipped templates (HTML with juice-inlined CSS, text,
 * subject), compiled once as at boot; then the whole composition the worker does per delivery
 * (re-parse the stored bytes, build the view, render, build the message). In this process: it is
 * pure CPU with no I/O, so a second process would measure only IPC. A CPU profile says how much
 * of a render is juice.
 */
export const renderBenchmark: Benchmark = {
  id: 'render',
  title: 'Render (templates compiled once; HTML + juice + text)',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const ms = ctx.quick ? 100 : 3_000;
    const renderer = loadRenderer(defaultTemplatesDir());
    const { body, id } = createBodyFactory({ firstId: 1000 }).next();
    const parsed = parseDelivery(body);
    if (parsed.kind !== 'report') throw new Error('the bench body is not a report');
    const view = buildReportView(parsed, { netboxUrl: 'https://netbox.example.com', timezone: 'Europe/Berlin' });
    const compose = createReportComposer({
      renderer,
      clock: systemClock,
      from: 'Compliance Relay <relay@example.com>',
      routes: [buildDefaultRoute({ to: ['ops@example.com'], cc: [], bcc: [] })],
      implicitRoute: true,
      timezone: 'Europe/Berlin',
      netboxUrl: 'https://netbox.example.com',
    });
    const delivery = { id: 1, reportId: id, dedupKey: parsed.dedupKey, body, attempts: 1 } as ClaimedDelivery;

    measureRate(() => renderer.render(view), ms / 3); // warm-up: let V8 optimise first
    const renderRate = measureRate(() => renderer.render(view), ms);
    let composed = 0;
    const composeStarted = process.hrtime.bigint();
    const composeEnd = composeStarted + BigInt(ms * 1e6);
    while (process.hrtime.bigint() < composeEnd) {
      await (await compose(delivery)).messageFor({ name: DEFAULT_ROUTE_NAME, reminder: false, reason: 'bench' });
      composed += 1;
    }
    const composeRate = composed / (Number(process.hrtime.bigint() - composeStarted) / 1e9);

    const { profile } = await profileCpu(() => measureRate(() => renderer.render(view), ms));
    const juiceShare = computeInclusiveShare(profile, (url) => url.includes('/node_modules/juice/'));
    const handlebarsShare = computeInclusiveShare(profile, (url) => url.includes('/node_modules/handlebars/'));
    const top = summarizeSelfTime(profile, 6)
      .map(([name, share]) => `${name} ${(share * 100).toFixed(0)}%`)
      .join(', ');
    ctx.log(`render self time by package: ${top}`);
    return [
      { name: 'mails rendered/s (render only)', value: renderRate, unit: 'mails/s', note: `one CPU core; templates/report; juice ${(juiceShare * 100).toFixed(0)}% of render time (inclusive, CPU profile), Handlebars ${(handlebarsShare * 100).toFixed(0)}%` },
      { name: 'juice share of render', value: juiceShare * 100, unit: '%', note: `self time by package: ${top}` },
      { name: 'mails composed/s (parse + view + render + message)', value: composeRate, unit: 'mails/s', note: 'what the worker does per delivery before SMTP' },
    ];
  },
};
