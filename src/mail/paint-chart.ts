import { Worker } from 'node:worker_threads';
import { PNG_DEFLATE_LEVEL, wrapPng } from './encode-png';

/** Rasterises one chart's SVG to a PNG (resvg, at the chart's zoom) without holding the event loop. */
export type PaintChart = (svg: string, options: object) => Promise<Buffer>;

/**
 * The painter thread stopped (crashed, ran out of memory, was ended) with this chart unpainted. Not the
 * chart's fault: the delivery is retried (`CHART_PAINTER`, retryable), and the next chart starts a thread
 * afresh. A chart resvg cannot draw fails with a plain Error instead (its mail goes without the chart).
 */
export class ChartPainterError extends Error {
  readonly code = 'CHART_PAINTER';
}

/**
 * A young-generation collection in the painter thread after this many charts (~0.1 ms each on its tiny
 * heap). resvg-js frees a chart's native memory (the parsed tree, the 960×264 RGBA pixmap: ~1 MB, the
 * PNG's buffer) only in the finalizers of the small JS objects that wrap it, and napi-rs does not tell
 * V8 about the memory behind them: the event loop allocates enough JS to collect often, the painter
 * thread almost none, so without this its collections came hundreds of charts apart.
 */
export const PAINTER_COLLECT_EVERY_CHARTS = 8;

/*
 * The painter thread: resvg's render and resvg's PNG encoding together cost ~3 ms per chart, 40 % of the
 * whole relay's main thread when every report mail carries one (end-to-end bench). On a
 * second thread they run beside the webhook acks and the SMTP dialogue. resvg's own renderAsync
 * leaves the PNG encoding (two thirds of it) on the caller's thread, hence a thread of our own. The
 * thread now takes resvg's pixels and deflates them itself (encode-png.ts, ~3× cheaper than asPng());
 * the main thread only wraps the deflated data in PNG chunks (~18 kB, a CRC each).
 *
 * One chart per turn of the thread's event loop (setImmediate), not one per 'message' event: Node runs
 * N-API finalizers from a setImmediate after the collection that found their objects dead, and a
 * MessagePort delivers up to 1,000 queued messages in one go. With the worker's 20 deliveries keeping
 * the queue full, the loop did not turn for up to 1,000 charts, so their pixmaps (~1 MB each) waited,
 * collected or not: a 20,000-mail drain peaked at 1.3 GB RSS (232 MB with the chart on the event loop).
 *
 * `gc` is not a Worker execArgv (V8 flags are per process): the flag is set just long enough for one new
 * context to carry the function, then cleared, so no other context (the relay's, a test runner's) gets it.
 */
const PAINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const v8 = require('node:v8');
const zlib = require('node:zlib');
const { Resvg } = require(workerData.resvg);
v8.setFlagsFromString('--expose-gc');
const collect = require('node:vm').runInNewContext('gc');
v8.setFlagsFromString('--no-expose-gc');
const queue = [];
let painted = 0;
// The rows of the last chart, reused: ~1 MB each, a fresh buffer per chart was garbage for the collector.
let rows = Buffer.alloc(0);
const paintNext = () => {
  const { id, svg, options } = queue.shift();
  try {
    const image = new Resvg(svg, options).render();
    const { width, height } = image;
    const rgba = image.pixels;
    // encode-png.ts's toScanlines and deflateRgba (see there): each row behind filter byte 0, the
    // premultiplied pixels that are neither opaque nor clear demultiplied, deflated at its level.
    const stride = width * 4;
    if (rows.length !== (stride + 1) * height) rows = Buffer.allocUnsafe((stride + 1) * height);
    for (let y = 0; y < height; y += 1) {
      const start = y * (stride + 1) + 1;
      rows[start - 1] = 0;
      rgba.copy(rows, start, y * stride, (y + 1) * stride);
      for (let i = start + 3; i < start + stride; i += 4) {
        const alpha = rows[i];
        if (alpha === 255 || alpha === 0) continue;
        const a = alpha / 255;
        rows[i - 3] = Math.min(255, Math.trunc(rows[i - 3] / a + 0.5));
        rows[i - 2] = Math.min(255, Math.trunc(rows[i - 2] / a + 0.5));
        rows[i - 1] = Math.min(255, Math.trunc(rows[i - 1] / a + 0.5));
      }
    }
    const idat = zlib.deflateSync(rows, { level: workerData.deflateLevel });
    parentPort.postMessage({ id, width, height, idat });
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
  painted += 1;
  if (painted % workerData.collectEvery === 0) collect({ type: 'minor' });
  if (queue.length > 0) setImmediate(paintNext);
};
parentPort.on('message', (chart) => {
  if (queue.push(chart) === 1) setImmediate(paintNext);
});
`;

interface Painter {
  worker: Worker;
  pending: Map<number, { resolve(png: Buffer): void; reject(error: Error): void }>;
  next: number;
}

let painter: Painter | undefined;

/**
 * The relay's chart painter: one worker thread, started at the first chart (never for `check-config`
 * or a relay whose mails carry none). It keeps the process alive only while a chart is being painted,
 * like a socket with a request out: an idle thread never holds a CLI or a stopping relay, and a
 * preview awaiting its chart is not cut short. At most the worker's deliveries in flight wait for it
 * (one chart each), so its queue is bounded. A thread that dies fails the charts it held with
 * {@link ChartPainterError} and is started afresh at the next.
 */
export const paintChartInThread: PaintChart = (svg, options) => {
  const p = (painter ??= startPainter());
  const id = (p.next += 1);
  if (p.pending.size === 0) p.worker.ref();
  return new Promise<Buffer>((resolve, reject) => {
    p.pending.set(id, { resolve, reject });
    p.worker.postMessage({ id, svg, options });
  });
};

/**
 * Ends the painter thread, if one runs; the charts it held fail with {@link ChartPainterError} (their
 * deliveries are retried) and the next chart starts a new thread. For a shutdown, and for tests.
 */
export async function stopChartPainter(): Promise<void> {
  const p = painter;
  if (!p) return;
  painter = undefined;
  await p.worker.terminate();
}

function startPainter(): Painter {
  const worker = new Worker(PAINTER_SOURCE, {
    eval: true,
    workerData: { resvg: require.resolve('@resvg/resvg-js'), collectEvery: PAINTER_COLLECT_EVERY_CHARTS, deflateLevel: PNG_DEFLATE_LEVEL },
  });
  const p: Painter = { worker, pending: new Map(), next: 0 };
  worker.on('message', (m: { id: number; width?: number; height?: number; idat?: Uint8Array; error?: string }) => {
    const waiting = p.pending.get(m.id);
    p.pending.delete(m.id);
    if (p.pending.size === 0) worker.unref();
    if (m.idat) waiting?.resolve(wrapPng(m.width!, m.height!, m.idat));
    else waiting?.reject(new Error(`the chart could not be drawn: ${m.error}`));
  });
  const fail = (error: Error) => {
    if (painter === p) painter = undefined;
    for (const waiting of p.pending.values()) waiting.reject(error);
    p.pending.clear();
  };
  worker.on('error', (error) => fail(new ChartPainterError(`the chart painter thread failed: ${error.message}`)));
  worker.on('exit', (code) => fail(new ChartPainterError(`the chart painter thread ended (exit code ${code})`)));
  // After the listeners: adding a 'message' listener refs the worker's port again, and an idle thread
  // would then hold the process forever (a CLI's preview never exiting).
  worker.unref();
  return p;
}
