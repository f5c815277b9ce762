import type { ReportCursor, ReportPoint, ReportReadOptions, ReportSnapshot } from '../trend';
import { DEFAULT_SOURCE_NAME } from '../webhook';
import type { NewWaiver, Waiver, WaiverFilter, WaiverStorage } from '../waivers';
import { decodeCatchUpRow, decodeRouteMailRow, fromSentMessageRow, queries, selectListWaivers } from './queries';
import { decodeDeliveryRow, selectListDeliveries } from './delivery-rows';
import { escapeLike, type Statement } from './statement';
import { execute, insertDelivery, selectAll, selectOne, settleBatch, type Work } from './store-work';
import { decodeReportPointRow, decodeReportRow, hasArrival } from './report-rows';
import type { MigrationReport } from './migrations';
import {
  DELIVERY_STATES,
  parseStoredId,
  type CatchUpState,
  type DeliveryRecord,
  type DeliveryState,
  type DigestPeriod,
  type InsertResult,
  type ListOptions,
  type NewDelivery,
  type RouteMailRecord,
  type SentMessage,
  type SettledBatch,
  type WatchdogState,
} from './types';

/** The durable outbox on SQLite or PostgreSQL; "cannot commit now" throws {@link StorageUnavailableError}. */
export type Store = Pick<SqlStore, keyof SqlStore>;

/** The store's logic, once; an engine's subclass runs {@link Work}, commits, migrates and maps storage failures. */
export abstract class SqlStore implements WaiverStorage {
  /** SQLite: what is `sending` at boot was interrupted. PostgreSQL (false): a dead replica's leases expire. */
  abstract readonly singleOwner: boolean;

  /** Idempotent; safe from several processes at once. */
  abstract migrate(): Promise<MigrationReport>;

  abstract close(): Promise<void>;

  /** Reads, and writes that need no acknowledgement of durability (an idempotent ensure, a probe). */
  protected abstract read<T>(work: Work<T>): Promise<T>;

  /** A write acknowledged once durable, perhaps in one commit with the others of its turn; `atomic`: its statements in one transaction. */
  protected abstract write<T>(work: Work<T>, options: { atomic: boolean }): Promise<T>;

  private rows<P extends object, R>(statement: Statement<P, R>, params: P): Promise<R[]> {
    return this.read(selectAll(statement, params));
  }

  private row<P extends object, R>(statement: Statement<P, R>, params: P): Promise<R | undefined> {
    return this.read(selectOne(statement, params));
  }

  private change<P extends object>(statement: Statement<P, unknown>, params: P): Promise<number> {
    return this.write(execute(statement, params), { atomic: false });
  }

  /** Commits a delivery (or finds the one with its key), group-committed with its turn; with its report's row, atomically. */
  insertDelivery(delivery: NewDelivery): Promise<InsertResult> {
    return this.write(insertDelivery(delivery), { atomic: hasArrival(delivery) });
  }

  /** Leases up to `limit` due deliveries (expired leases included), oldest first, none of `skipSources`; attempts grows by one. */
  async claimDue(options: {
    now: number;
    limit: number;
    owner: string;
    leaseMs: number;
    skipSources?: readonly string[];
  }): Promise<DeliveryRecord[]> {
    const { now, limit, owner, leaseMs, skipSources = [] } = options;
    if (limit <= 0) return [];
    const params = { now, limit, owner, leaseUntil: now + leaseMs, skipSources: [...skipSources] };
    const rows = await this.write(selectAll(queries.deliveries.claimDue, params), { atomic: false });
    // Oldest first: RETURNING promises no order.
    return rows.sort((a, b) => a.id - b.id).map((row) => ({ ...decodeDeliveryRow(row), body: row.body! }));
  }

  /** Moves the lease of those still `sending` under `owner` (a mail sent but not yet recorded must not be claimed again). */
  async extendLeases({ ids, owner, now, leaseMs }: { ids: number[]; owner: string; now: number; leaseMs: number }): Promise<number> {
    if (ids.length === 0) return 0;
    return this.change(queries.deliveries.extendLeases, { ids, owner, leaseUntil: now + leaseMs });
  }

  /**
   * Writes a batch of attempts whole or not at all (a route plan another replica recorded first is kept). Failing
   * sets older than the newest {@link REPORT_FAILING_SETS_KEPT} of a series become unknown.
   */
  async settleBatch(batch: SettledBatch): Promise<void> {
    await this.write(settleBatch(batch, !this.singleOwner), { atomic: true });
  }

  /** A single-process store at boot: what was in flight when it died. */
  releaseLeases(now: number): Promise<number> {
    return this.change(queries.deliveries.releaseLeases, { now });
  }

  async getDelivery(id: number): Promise<DeliveryRecord | undefined> {
    const row = await this.row(queries.deliveries.get, { id });
    return row && decodeDeliveryRow(row);
  }

  async listDeliveries(options: ListOptions = {}): Promise<DeliveryRecord[]> {
    const { statement, params } = selectListDeliveries(options);
    const rows = await this.rows(statement, params);
    return (options.afterId !== undefined ? rows.reverse() : rows).map(decodeDeliveryRow);
  }

  /** Makes a retrying delivery due now, its attempts and backoff unchanged; false when it is not retrying. */
  async retryNow(id: number, now: number): Promise<boolean> {
    return (await this.change(queries.deliveries.retryNow, { id, now })) === 1;
  }

  /** Puts a dead (or sent) delivery, or without `id` every dead one, back in the queue, due now, attempts reset; how many. */
  requeue(now: number, id?: number): Promise<number> {
    return this.change(queries.deliveries.requeue([id === undefined ? 'dead' : 'id']), { now, id });
  }

  /** An operator's "try now" during a pause of the mail transport: retries due by `until` become due `now`. */
  expediteRetries(options: { now: number; until: number }): Promise<number> {
    return this.change(queries.deliveries.expediteRetries, options);
  }

  /** Retries whose last failure has one of `codes` become due `now` (a relay starting with its templates loaded again); how many. */
  expediteFailedWith(options: { now: number; codes: string[] }): Promise<number> {
    return options.codes.length === 0 ? Promise.resolve(0) : this.change(queries.deliveries.expediteFailedWith, options);
  }

  /** Deliveries per state, when the oldest not yet sent nor dead arrived, when the next is due (a lease's end too). */
  readQueue(): Promise<{ counts: Record<DeliveryState, number>; oldestPendingAt: number | null; nextDueAt: number | null }> {
    return this.read(readQueue());
  }

  /** {@link readQueue}'s times alone (the idle worker's poll). */
  readQueueTimes(): Promise<{ oldestPendingAt: number | null; nextDueAt: number | null }> {
    return this.read(readQueueTimes());
  }

  /** With their bodies, idempotency keys, route mails and kept copies. */
  pruneDeliveries(options: { state: 'sent' | 'dead'; before: number }): Promise<number> {
    return this.write(prune(options), { atomic: true });
  }

  /** From its webhook on (`pending` until its mail is composed), with its failing set once composed. */
  async findReport(dedupKey: string): Promise<ReportSnapshot | undefined> {
    return (await this.findReports([dedupKey]))[0];
  }

  /** A key with no report is left out. */
  async findReports(dedupKeys: readonly string[]): Promise<ReportSnapshot[]> {
    if (dedupKeys.length === 0) return [];
    return (await this.rows(queries.reports.ofKeys, { dedupKeys: [...dedupKeys] })).map(decodeReportRow);
  }

  /** The newest report of `series` strictly before the cursor; `failingIds: false` leaves the pairs' NetBox ids unread. */
  async findReportBefore(series: string, before: ReportCursor, options: ReportReadOptions = {}): Promise<ReportSnapshot | undefined> {
    const statement = options.failingIds === false ? queries.reports.findBeforeWithoutIds : queries.reports.findBefore;
    const row = await this.row(statement, { ...before, series });
    return row && decodeReportRow(row);
  }

  /** The newest `limit` reports of `series` strictly before the cursor, oldest first, without their failing sets. */
  async listReportsBefore(series: string, before: ReportCursor, limit: number): Promise<ReportPoint[]> {
    if (limit <= 0) return [];
    const rows = await this.rows(queries.reports.listBefore, { ...before, series, limit });
    return rows.map(decodeReportPointRow).reverse();
  }

  async getDeliveryBody(id: number): Promise<Buffer | undefined> {
    return (await this.row(queries.deliveries.getBody, { id }))?.body;
  }

  /** Route `''`: a copy kept before routes were recorded with it. */
  async getSentMessage(deliveryId: number, route: string): Promise<SentMessage | undefined> {
    const row = await this.row(queries.sentMessages.get, { deliveryId, route });
    return row && (await fromSentMessageRow(row));
  }

  /** One per route, in the order they were sent. */
  async listSentMessages(deliveryId: number): Promise<SentMessage[]> {
    const rows = await this.rows(queries.sentMessages.ofDelivery, { deliveryId });
    const messages: SentMessage[] = [];
    // One at a time: a delivery to thousands of owners has as many copies.
    for (const row of rows) messages.push(await fromSentMessageRow(row));
    return messages;
  }

  async lastReportReceivedAt(source: string = DEFAULT_SOURCE_NAME): Promise<number | null> {
    return (await this.row(queries.deliveries.lastReportReceivedAt, { source }))?.t ?? null;
  }

  /** Created (`ok`, version 0) on first use; creating it again is harmless, so no durable write. */
  getWatchdogState(now: number, source: string = DEFAULT_SOURCE_NAME): Promise<WatchdogState> {
    return this.read(ensureWatchdog(now, source));
  }

  /** Compare-and-set on the version, queueing `alert` in the same transaction: of several replicas exactly one wins. */
  transitionWatchdog(
    move: Pick<WatchdogState, 'state' | 'since'> & { expectedVersion: number; now: number; alert: NewDelivery; source?: string },
  ): Promise<{ won: boolean; alertId?: number }> {
    return this.write(transitionWatchdog(move), { atomic: true });
  }

  /** Records a period once, queueing `job` (null: no mail) in its transaction: of several replicas, exactly one queues it. */
  queueDigest(
    input: Pick<DigestPeriod, 'route' | 'periodStart' | 'periodEnd' | 'late'> & { now: number; job: NewDelivery | null },
  ): Promise<{ queued: boolean; deliveryId: number | null }> {
    return this.write(queueDigest(input), { atomic: true });
  }

  /** Newest end first (`limit: 1`: a route's last period). */
  async listDigestPeriods(options: { route?: string; limit?: number } = {}): Promise<DigestPeriod[]> {
    const { route, limit = 100 } = options;
    const rows = await this.rows(queries.digests.list(route === undefined ? [] : ['route']), { route, limit });
    return rows.map((row) => ({ ...row, late: row.late === 1 }));
  }

  /** By delivery, then route position. */
  async listRouteMails(deliveryIds: number[]): Promise<RouteMailRecord[]> {
    const ids = [...new Set(deliveryIds.filter((id) => Number.isSafeInteger(id)))];
    if (ids.length === 0) return [];
    return (await this.rows(queries.routeMails.ofDeliveries, { deliveryIds: ids })).map(decodeRouteMailRow);
  }

  /** What `repeat_after` measures from: the newest earlier report the route mailed (or is mailing). */
  async lastRouteMailCompletedAt(route: string, deliveryId: number): Promise<string | null> {
    // Its owner groups' mails (`<route>~<key>`, LIKE with `!` escaping) count as the route's.
    const params = { route, routeGroups: `${escapeLike(route)}~%`, deliveryId };
    return (await this.row(queries.routeMails.lastCompletedAt, params))?.t ?? null;
  }

  async addWaiver(waiver: NewWaiver): Promise<Waiver> {
    return (await this.write(selectOne(queries.waivers.insert, waiver), { atomic: false }))!;
  }

  async getWaiver(id: string): Promise<Waiver | undefined> {
    const n = parseStoredId(id);
    return n === undefined ? undefined : this.row(queries.waivers.get, { id: n });
  }

  async listWaivers(filter: WaiverFilter): Promise<Waiver[]> {
    const { statement, params } = selectListWaivers(filter);
    return this.rows(statement, params);
  }

  async expireWaiver(id: string, change: { now: number; by: string }): Promise<Waiver | undefined> {
    const n = parseStoredId(id);
    if (n === undefined) return undefined;
    return this.write(selectOne(queries.waivers.expire, { ...change, id: n }), { atomic: false });
  }

  async countWaiversInForce(at: number): Promise<number> {
    return (await this.row(queries.waivers.countInForce, { at }))!.n;
  }

  /** Takes a source's catch-up lease unless another owner holds it unexpired (then undefined). */
  async takeCatchUpLease(input: { source: string; owner: string; now: number; leaseMs: number }): Promise<CatchUpState | undefined> {
    const { leaseMs, ...lease } = input;
    const row = await this.write(selectOne(queries.catchUp.takeLease, { ...lease, until: input.now + leaseMs }), { atomic: false });
    return row && decodeCatchUpRow(row);
  }

  /** Releases `owner`'s lease; with `seen`, records the success and the newest report seen. */
  async finishCatchUp(input: { source: string; owner: string; now: number; seen?: ReportCursor }): Promise<void> {
    const { source, owner, now, seen } = input;
    if (seen) await this.change(queries.catchUp.succeed, { source, owner, now, ...seen });
    else await this.change(queries.catchUp.release, { source, owner });
  }

  async getCatchUpState(source: string): Promise<CatchUpState | undefined> {
    const row = await this.row(queries.catchUp.get, { source });
    return row && decodeCatchUpRow(row);
  }

  async newestStoredReport(source: string): Promise<{ reportId: number; created: string } | undefined> {
    return this.row(queries.catchUp.newestStoredReport, { source });
  }

  /** A source's stored report ids with `afterId < id <= uptoId`, in no particular order. */
  async listStoredReportIds(source: string, afterId: number, uptoId: number): Promise<number[]> {
    const rows = await this.rows(queries.catchUp.storedReportIds, { source, afterId, uptoId });
    return rows.map((r) => r.report_id);
  }

  /** Keys of deliveries or of reports in the history (which retention never prunes). */
  async findKnownKeys(keys: readonly string[]): Promise<string[]> {
    if (keys.length === 0) return [];
    return (await this.rows(queries.catchUp.knownKeys, { keys: [...keys] })).map((r) => r.dedup_key);
  }

  async checkWritable(now: number): Promise<void> {
    await this.read(execute(queries.health.probe, { now }));
  }
}

function* prune(options: { state: 'sent' | 'dead'; before: number }): Work<number> {
  yield* execute(queries.deliveries.pruneSentMessages, options);
  yield* execute(queries.deliveries.pruneRouteMails, options);
  return yield* execute(queries.deliveries.prune, options);
}

function* readQueue(): Work<Awaited<ReturnType<Store['readQueue']>>> {
  const counts = Object.fromEntries(DELIVERY_STATES.map((s) => [s, 0])) as Record<DeliveryState, number>;
  for (const row of yield* selectAll(queries.deliveries.countByState, {})) counts[row.state] = row.n;
  return { counts, ...(yield* readQueueTimes()) };
}

function* readQueueTimes(): Work<Awaited<ReturnType<Store['readQueueTimes']>>> {
  const { oldest, due, lease } = (yield* selectOne(queries.deliveries.queueTimes, {}))!;
  return { oldestPendingAt: oldest, nextDueAt: due === null || lease === null ? (due ?? lease) : Math.min(due, lease) };
}

function* ensureWatchdog(now: number, source: string): Work<WatchdogState> {
  yield* execute(queries.watchdog.ensure, { now, source });
  return (yield* selectOne(queries.watchdog.get, { source }))!;
}

function* transitionWatchdog(move: Parameters<Store['transitionWatchdog']>[0]): Work<{ won: boolean; alertId?: number }> {
  const { alert, source = DEFAULT_SOURCE_NAME, ...transition } = move;
  if ((yield* execute(queries.watchdog.transition, { ...transition, source })) !== 1) return { won: false };
  return { won: true, alertId: (yield* insertDelivery(alert)).id };
}

function* queueDigest(input: Parameters<Store['queueDigest']>[0]): Work<Awaited<ReturnType<Store['queueDigest']>>> {
  const { job, late, ...period } = input;
  if ((yield* execute(queries.digests.insert, { ...period, late: late ? 1 : 0 })) !== 1) return { queued: false, deliveryId: null };
  if (!job) return { queued: true, deliveryId: null };
  const deliveryId = (yield* insertDelivery(job)).id;
  yield* execute(queries.digests.attach, { route: period.route, periodStart: period.periodStart, deliveryId });
  return { queued: true, deliveryId };
}
