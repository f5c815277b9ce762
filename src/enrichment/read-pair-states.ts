import { buildListPath, chunkIds, NETBOX_PAGE_SIZE, NetboxError, readResultRefs, type NetboxClient, type RequestBudget } from '../netbox';
import { failingKeys, NO_PAIR_STATES, pairKey, type FailingPair, type PairStates, type ReportSnapshot } from '../trend';

/**
 * Asks NetBox whether the pairs whose failing changed passed or were not evaluated, each on the report where it does not fail.
 * Unchanged sets and `stored` states cost no request. Never throws: a side NetBox cannot answer stays unknown, saying why.
 */
export async function readPairStates(options: {
  /** Absent without NETBOX_URL: nothing can be asked. */
  client?: NetboxClient;
  resultsUrl: string;
  /** This report's failing pairs and the previous report's (each with its NetBox ids; null: unknown, nothing is asked). */
  current: readonly FailingPair[];
  previous: Pick<ReportSnapshot, 'reportId' | 'failing'>;
  /** The states kept with this report when it was compared before, if any. */
  stored?: () => Promise<PairStates | null | undefined> | undefined;
  budget: RequestBudget;
  /** The enrichment budget, for the mail's words. */
  budgetMs: number;
}): Promise<PairStates> {
  if (!options.previous.failing) return NO_PAIR_STATES;
  const stored = await options.stored?.();
  if (stored) return stored;
  // The trend's walk made these sets already (same arrays): failingKeys returns them.
  const nowKeys = failingKeys(options.current);
  const beforeKeys = failingKeys(options.previous.failing);
  const gone = options.previous.failing.filter((p) => !nowKeys.has(pairKey(p)));
  const appeared = options.current.filter((p) => !beforeKeys.has(pairKey(p)));
  const now = new Map<string, boolean>();
  const before = new Map<string, boolean>();
  const deletedTests = new Set<string>();
  const deletedDevices = new Set<string>();
  let unknownReason: string | null = null;
  // Failing in both reports: evaluated in the previous one (a pair back from an ended waiver is newly failing).
  for (const pair of options.current) if (beforeKeys.has(pairKey(pair))) before.set(pairKey(pair), true);
  const sides = [
    { pairs: gone, url: options.resultsUrl, map: now },
    { pairs: appeared, url: buildListPath(options.resultsUrl, { report_id: options.previous.reportId }), map: before },
  ];
  for (const side of sides) {
    if (side.pairs.length === 0) continue;
    const asked = toAsk(side.pairs);
    if (!asked) {
      unknownReason ??= "the relay did not keep these results' NetBox ids";
      continue;
    }
    if (!options.client) {
      unknownReason ??= 'NETBOX_URL is not set';
      continue;
    }
    try {
      const answer = await readPassedPairs(options.client, side.url, asked, options.budget);
      // None passed may mean validity deleted this run's results after its webhook (none listed): then nothing can be told.
      const none = side.map === now && answer.passed.size === 0;
      const page = none ? await options.client.getJson(buildListPath(side.url, { limit: 1, brief: 1 }), options.budget) : null;
      if ((page as { count?: unknown } | null)?.count === 0) {
        unknownReason ??= "validity removed this run's results from NetBox after sending its webhook";
        continue;
      }
      for (const pair of side.pairs) {
        const key = pairKey(pair);
        side.map.set(key, answer.passed.has(key));
        if (pair.ids?.test != null && answer.deletedTests.has(pair.ids.test)) deletedTests.add(pair.test);
        if (pair.ids?.device != null && answer.deletedDevices.has(pair.ids.device)) deletedDevices.add(pair.device);
      }
    } catch (error) {
      unknownReason ??= describeUnknown(error, options.budgetMs, options.previous.reportId, side.map === before);
    }
  }
  return { now, before, deletedTests: [...deletedTests], deletedDevices: [...deletedDevices], unknownReason };
}

/** The pairs as NetBox ids, or null when one of them was kept without its ids. */
function toAsk(pairs: readonly FailingPair[]): PairToAsk[] | null {
  const asked: PairToAsk[] = [];
  for (const pair of pairs) {
    if (pair.ids?.device == null || pair.ids.test == null) return null;
    asked.push({ key: pairKey(pair), deviceId: pair.ids.device, testId: pair.ids.test });
  }
  return asked;
}

function describeUnknown(error: unknown, budgetMs: number, previousReportId: number, askingPrevious: boolean): string {
  if (!(error instanceof NetboxError)) return `reading NetBox's results failed (${(error as Error)?.message ?? String(error)})`;
  if (error.code === 'TIMEOUT') return `NetBox did not answer within the ${Math.round(budgetMs / 100) / 10} s allowed`;
  if (error.code === 'NOT_FOUND' && askingPrevious) return `NetBox no longer has report ${previousReportId}`;
  return `NetBox could not answer (${error.message})`;
}

/** A (device, test) pair to ask NetBox about, by its NetBox ids; `key` is how the caller names it. */
export type PairToAsk = { key: string; deviceId: number; testId: number };

/** Requests in flight at once: the NetBox client's keep-alive agent holds four sockets. */
const CONCURRENT_REQUESTS = 4;

/**
 * The keys of `pairs` with a `passed: true` result at `resultsUrl`. One deleted device or test id makes validity answer 400
 * for the whole block: it is halved on that filter until the id stands alone, then returned as deleted. Throws a NetboxError.
 */
export async function readPassedPairs(client: NetboxClient, resultsUrl: string, pairs: readonly PairToAsk[], budget: RequestBudget) {
  const passed = new Set<string>();
  const deleted = { tests: new Set<number>(), devices: new Set<number>() };
  const byIds = new Map(pairs.map((p) => [`${p.testId}:${p.deviceId}`, p.key]));
  const blocks = buildBlocks(pairs);
  const ask = async (tests: number[], devices: number[]): Promise<void> => {
    try {
      await client.streamList(
        buildListPath(resultsUrl, { passed: 'true', test_id: tests, device_id: devices, limit: NETBOX_PAGE_SIZE, omit: 'explanation' }),
        (page) => {
          for (const raw of page) {
            const { testId, deviceId } = readResultRefs(raw);
            const key = byIds.get(`${testId}:${deviceId}`);
            if (raw.passed === true && key !== undefined) passed.add(key);
          }
        },
        budget,
      );
    } catch (error) {
      const filter = findRefusedFilter(error);
      if (!filter) throw error;
      const ids = filter === 'test_id' ? tests : devices;
      // The one id left is a deleted device or test: none of its pairs has a result.
      if (ids.length === 1) {
        (filter === 'test_id' ? deleted.tests : deleted.devices).add(ids[0]);
        return;
      }
      const half = Math.ceil(ids.length / 2);
      for (const part of [ids.slice(0, half), ids.slice(half)]) await (filter === 'test_id' ? ask(part, devices) : ask(tests, part));
    }
  };
  let next = 0;
  const worker = async () => {
    while (next < blocks.length) {
      const block = blocks[next++];
      await ask(block.tests, block.devices);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENT_REQUESTS, blocks.length) }, worker));
  return { passed, deletedTests: deleted.tests, deletedDevices: deleted.devices };
}

/** Blocks of ids (chunkIds), tests with the very same devices together (a dropped device fails many tests): only `pairs`. */
function buildBlocks(pairs: readonly PairToAsk[]): { tests: number[]; devices: number[] }[] {
  const devicesOfTest = new Map<number, number[]>();
  for (const p of pairs) {
    const devices = devicesOfTest.get(p.testId) ?? [];
    devices.push(p.deviceId);
    devicesOfTest.set(p.testId, devices);
  }
  const testsOfDevices = new Map<string, { tests: number[]; devices: number[] }>();
  for (const [test, devices] of devicesOfTest) {
    const sorted = [...new Set(devices)].sort((a, b) => a - b);
    const key = sorted.join(',');
    const group = testsOfDevices.get(key) ?? { tests: [], devices: sorted };
    group.tests.push(test);
    testsOfDevices.set(key, group);
  }
  const blocks: { tests: number[]; devices: number[] }[] = [];
  for (const group of testsOfDevices.values())
    for (const tests of chunkIds(group.tests)) for (const devices of chunkIds(group.devices)) blocks.push({ tests, devices });
  return blocks;
}

/** The filter a 400 names when one of its ids is not in NetBox (`{"device_id": ["Select a valid choice…"]}`). */
function findRefusedFilter(error: unknown): 'test_id' | 'device_id' | null {
  if (!(error instanceof NetboxError) || error.status !== 400) return null;
  const detail = error.detail ?? '';
  return detail.startsWith('test_id:') ? 'test_id' : detail.startsWith('device_id:') ? 'device_id' : null;
}
