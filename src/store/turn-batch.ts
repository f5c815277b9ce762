/** One request of a batch, settled when its batch is. */
export type Pending<T, R> = { item: T; resolve: (result: R) => void; reject: (error: unknown) => void };

/** Collects what is asked for during one event-loop turn and hands it over as one batch on the next (group commit). */
export class TurnBatch<T, R> {
  private pending: Pending<T, R>[] = [];
  private scheduled = false;

  constructor(private readonly onBatch: (batch: Pending<T, R>[]) => void) {}

  /** Settled by `onBatch`, with the rest of its turn. */
  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Hands over what has been collected now (a store closing). */
  flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) this.onBatch(batch);
  }
}
