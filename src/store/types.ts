/** States of a delivery: queued → sending → sent, or → retrying → sending …, or → dead. */
export const DELIVERY_STATES = ['queued', 'sending', 'retrying', 'sent', 'dead'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** What the webhook stores, before the 2xx. */
export interface NewDelivery {
  dedupKey: string;
  reportId: number;
  reportCreated: string;
  completedAt: string;
  /** Who sent it (the client address), shown as "NetBox" in listings. */
  source: string;
  /** The exact bytes NetBox sent; the worker re-parses them, so nothing is lost to a schema change. */
  body: Buffer;
  receivedAt: number;
}

export interface DeliveryRecord {
  id: number;
  dedupKey: string;
  reportId: number;
  reportCreated: string;
  completedAt: string;
  source: string;
  state: DeliveryState;
  attempts: number;
  receivedAt: number;
  nextAttemptAt: number | null;
  lastError: string | null;
  lastErrorCode: string | null;
  messageId: string | null;
  sentAt: number | null;
  updatedAt: number;
}

export interface ClaimedDelivery extends DeliveryRecord {
  body: Buffer;
}

export interface InsertResult {
  id: number;
  duplicate: boolean;
}

export interface ListOptions {
  state?: DeliveryState;
  limit?: number;
  /** Only rows with an id below this one (for paging newest first). */
  beforeId?: number;
}

/**
 * The durable outbox. Every method is async so that SQLite and PostgreSQL share one contract.
 * Errors that mean "storage cannot commit now" are thrown as {@link StorageUnavailableError}.
 */
export interface Store {
  /** Commits the delivery (or finds the one with the same key) before resolving. */
  insertDelivery(delivery: NewDelivery): Promise<InsertResult>;
  /**
   * Claims up to `limit` due deliveries, oldest first, for `leaseMs`: state becomes `sending` and
   * attempts grows by one. A claim whose lease expired (its owner died) is claimable again.
   */
  claimDue(options: { now: number; limit: number; owner: string; leaseMs: number }): Promise<ClaimedDelivery[]>;
  markSent(id: number, result: { now: number; messageId: string }): Promise<void>;
  markRetry(id: number, result: { now: number; nextAttemptAt: number; error: string; code: string }): Promise<void>;
  markDead(id: number, result: { now: number; error: string; code: string }): Promise<void>;
  /** Releases every lease (a single-process store at boot: what was in flight when it died). */
  releaseLeases(now: number): Promise<number>;
  getDelivery(id: number): Promise<DeliveryRecord | undefined>;
  listDeliveries(options?: ListOptions): Promise<DeliveryRecord[]>;
  /** Puts a dead (or sent) delivery back in the queue, due now, with its attempts reset. */
  requeue(id: number, now: number): Promise<boolean>;
  requeueAllDead(now: number): Promise<number>;
  countByState(): Promise<Record<DeliveryState, number>>;
  /**
   * Deletes deliveries (row and stored body) in `state` whose last change is older than `before`
   * (epoch ms). Their idempotency keys go with them. Resolves with how many were deleted.
   */
  pruneDeliveries(options: { state: 'sent' | 'dead'; before: number }): Promise<number>;
  /** When the next queued/retrying delivery is due, if any. */
  nextDueAt(): Promise<number | null>;
  /** Proves the store can commit (for readiness checks). */
  checkWritable(now: number): Promise<void>;
  close(): Promise<void>;
}

/** The outbox could not commit (read-only, disk full, locked, connection lost): 503, retry later. */
export class StorageUnavailableError extends Error {
  readonly code: string;
  constructor(message: string, code: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StorageUnavailableError';
    this.code = code;
  }
}
