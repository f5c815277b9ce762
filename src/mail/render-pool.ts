import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { RenderedMail, Renderer } from './renderer';

/** Renders mails off the event loop; same templates, same result, same errors as the renderer. */
export interface RenderPool {
  /** `options.subject`: a route's inline subject template, as {@link Renderer.render} takes it. */
  render(view: object, templateSet?: string, options?: { subject?: string }): Promise<RenderedMail>;
  readonly threads: number;
  close(): Promise<void>;
}

/** The compiled thread script; absent when running from TypeScript sources (tests under jest). */
const THREAD_SCRIPT = path.join(__dirname, 'render-thread.js');

/** One thread per core beyond the one the event loop needs, at least one, at most four. */
export function defaultRenderThreads(): number {
  return Math.max(1, Math.min(4, os.availableParallelism() - 1));
}

interface Job {
  view: object;
  templateSet?: string;
  options?: { subject?: string };
  resolve: (mail: RenderedMail) => void;
  reject: (error: unknown) => void;
}

/**
 * A pool of worker threads that render with `renderer`'s templates. Why: inlining CSS (juice) costs
 * milliseconds per mail, all of it synchronous; on the event loop it delays every webhook ack behind
 * it (bench/ack-under-outage). Rendering is deterministic, so whenever a thread cannot give a result
 * (a template error, a thread that died) the view is rendered on the calling thread instead: the
 * caller sees exactly what `renderer.render` returns or throws. Returns undefined when the thread
 * script is not built (TypeScript sources), so callers keep rendering in-line.
 */
export function createRenderPool(renderer: Renderer, options: { threads?: number; script?: string } = {}): RenderPool | undefined {
  const script = options.script ?? THREAD_SCRIPT;
  if (!fs.existsSync(script)) return undefined;
  const count = Math.max(1, options.threads ?? defaultRenderThreads());
  const inFlight = new Map<Worker, Map<number, Job>>();
  let nextId = 1;
  let closed = false;

  const renderHere = (job: Job) => {
    try {
      job.resolve(renderer.render(job.view, job.templateSet, job.options));
    } catch (error) {
      job.reject(error);
    }
  };

  const spawn = (): Worker => {
    // Small heaps: a render's garbage is short-lived, and V8's defaults let each thread's heap grow
    // by tens of MB during a burst (bench/burst measures the process's peak RSS). A thread that
    // runs out dies, and its jobs are rendered here.
    const worker = new Worker(script, { workerData: { dir: renderer.dir }, resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 } });
    worker.unref();
    const jobs = new Map<number, Job>();
    inFlight.set(worker, jobs);
    worker.on('message', (message: { id: number; result?: RenderedMail; failed?: boolean }) => {
      const job = jobs.get(message.id);
      if (!job) return;
      jobs.delete(message.id);
      if (message.result) job.resolve(message.result);
      else renderHere(job);
    });
    const retire = () => {
      if (!inFlight.delete(worker)) return;
      for (const job of jobs.values()) renderHere(job);
      jobs.clear();
      if (!closed) spawn();
    };
    worker.on('error', retire);
    worker.on('exit', retire);
    return worker;
  };
  for (let i = 0; i < count; i++) spawn();

  return {
    threads: count,
    render(view, templateSet, renderOptions) {
      return new Promise<RenderedMail>((resolve, reject) => {
        const job: Job = { view, templateSet, options: renderOptions, resolve, reject };
        // The least busy thread; none left (closing) means here.
        let best: [Worker, Map<number, Job>] | undefined;
        for (const entry of inFlight) if (!best || entry[1].size < best[1].size) best = entry;
        if (closed || !best) {
          renderHere(job);
          return;
        }
        const id = nextId++;
        best[1].set(id, job);
        try {
          best[0].postMessage({ id, view, templateSet, options: renderOptions });
        } catch {
          best[1].delete(id);
          renderHere(job);
        }
      });
    },
    async close() {
      closed = true;
      await Promise.all([...inFlight.keys()].map((worker) => worker.terminate()));
    },
  };
}
