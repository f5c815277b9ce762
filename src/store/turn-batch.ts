/** Collects what is asked for during one event-loop turn and hands it over as one batch on the next (group commit). */
export class TurnBatch<T> {
  private items: T[] = [];
  private scheduled = false;

  constructor(private readonly onBatch: (items: T[]) => void) {}

  add(item: T): void {
    this.items.push(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Hands over what has been collected now (a store closing). */
  flush(): void {
    this.scheduled = false;
    const items = this.items;
    this.items = [];
    if (items.length > 0) this.onBatch(items);
  }
}
