import { RelayError, type Clock, type Logger, compareNames } from '../shared';
import { classifyWaiver, parseNewWaiver, WAIVER_NAME_MAX, type NewWaiver, type Waiver, type WaiverStatus } from './waiver';

/** Which waivers to list at `at` (`active` includes expiring ones); names match exactly, absent: any. */
export interface WaiverFilter {
  at: number;
  status?: WaiverStatus;
  source?: string;
  test?: string;
  device?: string;
  /** Only waivers still in force or ended after this time (epoch ms): those a report made now can be told about. */
  endedSince?: number;
  limit?: number;
}

/** The store's part: waivers are added and expired, never deleted. Both stores implement it. */
export interface WaiverStorage {
  addWaiver(waiver: NewWaiver): Promise<Waiver>;
  getWaiver(id: string): Promise<Waiver | undefined>;
  listWaivers(filter: WaiverFilter): Promise<Waiver[]>;
  /** Ends a waiver in force at `now`; undefined when there is none by that id in force. */
  expireWaiver(id: string, change: { now: number; by: string }): Promise<Waiver | undefined>;
  countWaiversInForce(at: number): Promise<number>;
}

/** Stored and WAIVERS_FILE waivers as one list; adding and expiring with their rules and audit line. */
export type WaiverBook = ReturnType<typeof createWaiverBook>;

/** Binds the waiver rules to the store, WAIVERS_FILE, the clock and the log (dashboard, admin API and CLI share it). */
export function createWaiverBook(options: {
  storage: WaiverStorage;
  /** WAIVERS_FILE's entries (origin `file`): listed with the stored ones, never changed here. */
  fileWaivers: readonly Waiver[];
  sources: readonly string[];
  clock: Clock;
  logger: Logger;
}) {
  const { storage, fileWaivers, clock, logger } = options;
  return {
    sources: options.sources,
    async list(filter: Omit<WaiverFilter, 'at'> = {}): Promise<Waiver[]> {
      const at = clock.now();
      const stored = await storage.listWaivers({ ...filter, at });
      const merged = [...fileWaivers.filter((w) => matchesFilter(w, { ...filter, at })), ...stored];
      merged.sort((a, b) => b.createdAt - a.createdAt || compareNames(b.id, a.id));
      return filter.limit === undefined ? merged : merged.slice(0, filter.limit);
    },
    async get(id: string): Promise<Waiver | undefined> {
      return fileWaivers.find((w) => w.id === id) ?? (await storage.getWaiver(id));
    },
    /** Checks the request (RelayError INVALID_REQUEST with every issue) and stores the waiver. */
    async add(request: unknown): Promise<Waiver> {
      const parsed = parseNewWaiver(request, { now: clock.now(), sources: options.sources });
      if (!parsed.ok) throw new RelayError('INVALID_REQUEST', { message: 'The waiver is invalid.', issues: parsed.issues });
      const waiver = await storage.addWaiver(parsed.waiver);
      logger.info({ audit: 'waiver.add', waiver: describeWaiver(waiver) }, `waiver ${waiver.id} added by ${waiver.author}`);
      return waiver;
    },
    /** Ends a stored waiver now (NOT_FOUND; CONFLICT for a file's or an ended one). */
    async expire(id: string, by: string): Promise<Waiver> {
      const author = by.trim();
      if (author === '' || author.length > WAIVER_NAME_MAX)
        throw new RelayError('INVALID_REQUEST', { issues: [{ path: 'author', message: 'is required (who ends the exception)' }] });
      const waiver = await this.get(id);
      if (!waiver) throw new RelayError('NOT_FOUND', { message: `No waiver ${id}.` });
      if (waiver.origin === 'file')
        throw new RelayError('CONFLICT', { message: `Waiver ${id} comes from WAIVERS_FILE: edit the file to end it.` });
      const expired = await storage.expireWaiver(id, { now: clock.now(), by: author });
      if (!expired) throw new RelayError('CONFLICT', { message: `Waiver ${id} has already ended.` });
      logger.info({ audit: 'waiver.expire', waiver: describeWaiver(expired) }, `waiver ${id} expired by ${author}`);
      return expired;
    },
    /** What a report made now needs: the waivers of its source in force, or ended since the previous report. */
    async forReport({ source, previousReportAt }: { source: string; previousReportAt: number | null }): Promise<Waiver[]> {
      return this.list({ source, endedSince: previousReportAt ?? clock.now() });
    },
    async countActive(): Promise<number> {
      const at = clock.now();
      return fileWaivers.filter((w) => matchesFilter(w, { at, status: 'active' })).length + (await storage.countWaiversInForce(at));
    },
  };
}

/** The same filter the stores apply in SQL, for WAIVERS_FILE's entries. */
function matchesFilter(waiver: Waiver, filter: WaiverFilter): boolean {
  const status = classifyWaiver(waiver, filter.at);
  if (filter.status === 'active' && status === 'expired') return false;
  if (filter.status !== undefined && filter.status !== 'active' && filter.status !== status) return false;
  if (filter.endedSince !== undefined && waiver.endsAt <= filter.endedSince) return false;
  const same = (wanted: string | undefined, value: string | null) => wanted === undefined || wanted === value;
  return same(filter.source, waiver.source) && same(filter.test, waiver.test) && same(filter.device, waiver.device);
}

/** The audit line's fields: who, what, until when, why. */
function describeWaiver(waiver: Waiver): Record<string, unknown> {
  const { id, source, test, device, until, reason, author, expiredBy } = waiver;
  return { id, source, test, device: device ?? '(all devices)', until, reason, author, ...(expiredBy ? { expiredBy } : {}) };
}
