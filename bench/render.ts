import fs from 'node:fs';
import path from 'node:path';
import Handlebars from 'handlebars';
import juice from 'juice';
import { buildReportView, createReportComposer, type ChartView } from '../src/compose';
import { buildTrendChart, defaultTemplatesDir, loadRenderer, registerTemplateHelpers, type Renderer } from '../src/mail';
import { buildDefaultRoute, DEFAULT_ROUTE_NAME } from '../src/routing';
import { neutralizeText, systemClock } from '../src/shared';
import type { DeliveryRecord } from '../src/store';
import { parseDelivery } from '../src/webhook';
import { computeInclusiveShare, profileCpu, summarizeSelfTime } from './lib/cpu-profile';
import type { Benchmark, BenchContext, Figure } from './lib/types';
import { createBodyFactory } from './lib/webhook-bodies';

/** Issue 16: one default report mail (HTML with inlined CSS, text, subject) in at most this. */
const RENDER_TARGET_MS = 0.25;

/**
 * The trend chart's CPU per report, at most (the delivery core's budget): its view built and its table
 * rendered in the mail. It was 3.8 ms as a PNG rasterised by resvg.
 */
const CHART_TARGET_MS = 1;

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
 * The render as it was before issue 16, for the baseline: the same templates and helpers compiled as
 * written, and juice run on every mail's HTML with the options the renderer gave it then.
 */
function createPerMailJuiceRender(dir: string): (view: object) => void {
  const hbs = Handlebars.create();
  registerTemplateHelpers(hbs);
  const partialsDir = path.join(dir, 'partials');
  for (const file of fs.readdirSync(partialsDir).filter((f) => f.endsWith('.hbs'))) {
    hbs.registerPartial(path.basename(file, '.hbs'), fs.readFileSync(path.join(partialsDir, file), 'utf8'));
  }
  const compile = (part: string, noEscape: boolean) =>
    hbs.compile(fs.readFileSync(path.join(dir, 'report', `${part}.hbs`), 'utf8'), { strict: true, noEscape });
  const [subject, html, text] = [compile('subject', true), compile('html', false), compile('text', true)];
  const options = { preserveMediaQueries: true, removeStyleTags: true, applyWidthAttributes: true, applyHeightAttributes: false };
  return (view) => {
    neutralizeText(subject(view));
    neutralizeText(juice(html(view), options));
    neutralizeText(text(view));
  };
}

/**
 * What the trend chart (12 reports, rising and falling) costs a report: its view built, plus what it adds
 * to the render of the mail that shows it (the same mail rendered without it subtracted, the two
 * alternating so a noisy neighbour hits both alike); best of two runs after a warm-up.
 */
function measureChart(renderer: Renderer, view: object, ms: number): number {
  const points = Array.from({ length: 12 }, (_, i) => ({
    reportId: 1000 + i,
    at: new Date(Date.UTC(2026, 2, 1 + i)),
    ratios: { overall: 0.5 + i * 0.03, HIGH: 1 - i * 0.05, MIDDLE: 0.8 + 0.15 * Math.sin(i), LOW: i === 4 ? null : 0.95 },
  }));
  const withChart = () => {
    const chart: ChartView = {
      ...buildTrendChart(points),
      currentText: '95.0%',
      currentLabel: 'this report',
    };
    renderer.render({ ...view, chart });
  };
  const without = () => renderer.render({ ...view, chart: null });
  measureRate(withChart, ms / 3);
  measureRate(without, ms / 3);
  const rounds = [0, 1].map(() => measureMs(withChart, ms / 2) - measureMs(without, ms / 2));
  return Math.max(0, Math.min(...rounds));
}

/** Milliseconds that `fn` takes once, from a rate measured over `ms`. */
function measureMs(fn: () => void, ms: number): number {
  return 1000 / measureRate(fn, ms);
}

/**
 * Render: the time one default report mail takes through the shipped templates (HTML with its CSS
 * inlined at template load, text, subject), next to the same templates with juice run per mail, as
 * the relay did before issue 16, measured in the same run; then the whole composition the worker
 * does per delivery (re-parse the stored bytes, build the view, render, build the message), and the
 * one-time template load (the shipped templates' CSS inlined and their compiled form made ahead, read
 * from templates/). In this process: it is pure CPU with no I/O, so a
 * second process would measure only IPC. A CPU profile says where a render's time goes.
 */
export const renderBenchmark: Benchmark = {
  id: 'render',
  title: 'Render (templates compiled and CSS inlined once; a mail is HTML + text + subject)',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const ms = ctx.quick ? 100 : 3_000;
    const loadStarted = process.hrtime.bigint();
    const renderer = loadRenderer(defaultTemplatesDir());
    const loadMs = Number(process.hrtime.bigint() - loadStarted) / 1e6;
    const perMailJuice = createPerMailJuiceRender(defaultTemplatesDir());
    const { body, id } = createBodyFactory({ firstId: 1000 }).next();
    const parsed = parseDelivery(body);
    if (parsed.kind !== 'report') throw new Error('the bench body is not a report');
    const view = buildReportView(parsed, {
      netboxUrl: 'https://netbox.example.com',
      mail: { from: 'relay@example.com', timezone: 'Europe/Berlin' },
    });
    const composer = createReportComposer({
      renderer,
      clock: systemClock,
      mail: { from: 'Compliance Relay <relay@example.com>', timezone: 'Europe/Berlin' },
      routes: [buildDefaultRoute({ to: ['ops@example.com'], cc: [], bcc: [] })],
      implicitRoute: true,
      netboxUrl: 'https://netbox.example.com',
    });
    const delivery = { id: 1, reportId: id, dedupKey: parsed.dedupKey, body, attempts: 1 } as DeliveryRecord;

    // Warm-up (let V8 optimise both), then the two alternately, so a noisy neighbour hits both alike.
    measureRate(() => renderer.render(view), ms / 3);
    measureRate(() => perMailJuice(view), ms / 3);
    const renderMs = Math.min(
      measureMs(() => renderer.render(view), ms / 2),
      measureMs(() => renderer.render(view), ms / 2),
    );
    const baselineMs = Math.min(
      measureMs(() => perMailJuice(view), ms / 2),
      measureMs(() => perMailJuice(view), ms / 2),
    );
    let composed = 0;
    const composeStarted = process.hrtime.bigint();
    const composeEnd = composeStarted + BigInt(ms * 1e6);
    while (process.hrtime.bigint() < composeEnd) {
      await composer.render(await composer.compose(delivery), { route: DEFAULT_ROUTE_NAME, reminder: false, reason: 'bench' });
      composed += 1;
    }
    const composeRate = composed / (Number(process.hrtime.bigint() - composeStarted) / 1e9);

    // The worker's whole per-mail work before SMTP: compose, which ends in the MIME bytes it sends and keeps.
    let built = 0;
    const buildStarted = process.hrtime.bigint();
    const buildEnd = buildStarted + BigInt(ms * 1e6);
    while (process.hrtime.bigint() < buildEnd) {
      await composer.render(await composer.compose(delivery), { route: DEFAULT_ROUTE_NAME, reminder: false, reason: 'bench' });
      built += 1;
    }
    const mailBytesMs = Number(process.hrtime.bigint() - buildStarted) / 1e6 / built;
    const chartMs = measureChart(renderer, view, ms);

    const { profile } = await profileCpu(() => measureRate(() => renderer.render(view), ms));
    const juiceShare = computeInclusiveShare(profile, (url) => url.includes('/node_modules/juice/'));
    const handlebarsShare = computeInclusiveShare(profile, (url) => url.includes('/node_modules/handlebars/'));
    const top = summarizeSelfTime(profile, 6)
      .map(([name, share]) => `${name} ${(share * 100).toFixed(0)}%`)
      .join(', ');
    ctx.log(`render self time by package: ${top}`);
    return [
      {
        name: 'render one default report mail (HTML with inlined CSS + text + subject)',
        value: renderMs,
        unit: 'ms',
        baseline: { name: 'juice run on every mail, as before issue 16', value: baselineMs },
        target: { kind: 'at-most', value: RENDER_TARGET_MS },
        note: `one CPU core; templates/report, no enrichment or trend (${(1000 / renderMs).toFixed(0)} mails/s); inclusive: Handlebars ${(handlebarsShare * 100).toFixed(0)}%, juice ${(juiceShare * 100).toFixed(0)}%; self time: ${top}`,
      },
      {
        name: 'mails composed/s (parse + view + render + message)',
        value: composeRate,
        unit: 'mails/s',
        note: 'what the worker does per delivery before SMTP',
      },
      {
        name: 'the trend chart per report (12 reports: view built + its HTML table rendered)',
        value: chartMs,
        unit: 'ms',
        baseline: { name: 'one mail composed and built to MIME bytes, as the worker sends it', value: mailBytesMs },
        target: { kind: 'at-most', value: CHART_TARGET_MS },
        note: 'buildTrendChart and the render with the chart, less the same render without it; no image, nothing attached (it was 3.8 ms as a PNG drawn by resvg)',
      },
      {
        name: 'template load (compiled and CSS inlined ahead, once at start)',
        value: loadMs,
        unit: 'ms',
        note: 'loadRenderer on the shipped templates, the first in this process (cold code; the modules already loaded), as at start: templates/compiled-templates.json read, no juice or Handlebars compiler run',
      },
    ];
  },
};
