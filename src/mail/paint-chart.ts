import { Worker } from 'node:worker_threads';

/** Rasterises one chart's SVG to a PNG (resvg, at the chart's zoom) without holding the event loop. */
export type PaintChart = (svg: string, options: object) => Promise<Buffer>;

/*
 * The painter thread: resvg's render and its PNG encoding together cost ~3 ms per chart, 40 % of the
 * whole relay's main thread when every report mail carries one (issue 19 on issue 16's bench). On a
 * second thread they run beside the webhook acks and the SMTP dialogue. resvg's own renderAsync
 * leaves the PNG encoding (two thirds of it) on the caller's thread, hence a thread of our own.
 */
const PAINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { Resvg } = require(workerData.resvg);
parentPort.on('message', ({ id, svg, options }) => {
  try {
    const png = new Resvg(svg, options).render().asPng();
    parentPort.postMessage({ id, png });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message || error) });
  }
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
 * or a relay whose mails carry none) and unref'd, so it never keeps the process alive. A thread that
 * dies fails the charts it held (their mails go without one) and is started afresh at the next.
 */
export const paintChartInThread: PaintChart = (svg, options) => {
  const p = (painter ??= startPainter());
  const id = (p.next += 1);
  return new Promise<Buffer>((resolve, reject) => {
    p.pending.set(id, { resolve, reject });
    p.worker.postMessage({ id, svg, options });
  });
};

function startPainter(): Painter {
  const worker = new Worker(PAINTER_SOURCE, { eval: true, workerData: { resvg: require.resolve('@resvg/resvg-js') } });
  worker.unref();
  const p: Painter = { worker, pending: new Map(), next: 0 };
  worker.on('message', (m: { id: number; png?: Uint8Array; error?: string }) => {
    const waiting = p.pending.get(m.id);
    p.pending.delete(m.id);
    if (m.png) waiting?.resolve(Buffer.from(m.png.buffer, m.png.byteOffset, m.png.byteLength));
    else waiting?.reject(new Error(`the chart could not be drawn: ${m.error}`));
  });
  const fail = (error: Error) => {
    if (painter === p) painter = undefined;
    for (const waiting of p.pending.values()) waiting.reject(error);
    p.pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`the chart painter thread ended (exit code ${code})`)));
  return p;
}
