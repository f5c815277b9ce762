/** The one timer the relay's periodic jobs (catch-up, digests, retention, mail transport check, watchdog) run on. */
export function createRepeatingTask(work: () => void, everyMs: number) {
  let timer: NodeJS.Timeout | undefined;
  return {
    /** Runs the work at once, then every `everyMs`, on a timer that never keeps the process alive; started twice, it runs once. */
    start: (): void => {
      if (timer) return;
      work();
      timer = setInterval(work, everyMs);
      timer.unref();
    },
    stop: (): void => {
      clearInterval(timer);
      timer = undefined;
    },
  };
}

/** `run`, one at a time in this process: a call while a run is in flight joins it. */
export function coalesceRuns<T>(run: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () =>
    (running ??= run().finally(() => {
      running = undefined;
    }));
}
