/**
 * The body of a render thread (see render-pool.ts): compiles the same templates once, then renders
 * each view it is sent. An error is reported as a bare failure: the pool re-renders that view on
 * the main thread, so the caller gets exactly the error the renderer throws there.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadRenderer } from './renderer';

const renderer = loadRenderer((workerData as { dir: string }).dir);

parentPort!.on('message', (job: { id: number; view: object; templateSet?: string; options?: { subject?: string } }) => {
  try {
    parentPort!.postMessage({ id: job.id, result: renderer.render(job.view, job.templateSet, job.options) });
  } catch {
    parentPort!.postMessage({ id: job.id, failed: true });
  }
});
