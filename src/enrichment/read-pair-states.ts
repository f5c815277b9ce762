import { NetboxError, type NetboxClient, type RequestBudget } from '../netbox';
import { failingKeys, pairKey, type FailingPair, type PairStates } from '../trend';
import { buildResultsUrlOf, readPassedPairs, type PairToAsk } from './read-passed-pairs';

export interface ReadPairStatesOptions {
  /** Absent without NETBOX_URL: nothing can be asked. */
  client?: NetboxClient;
  /** This report's `results_url`. */
  resultsUrl: string;
  /** This report's failing pairs and the previous report's (each with its NetBox ids). */
  current: readonly FailingPair[];
  previous: { reportId: number; failing: readonly FailingPair[] };
  budget: RequestBudget;
  /** The enrichment budget, for the mail's words. */
  budgetMs: number;
}

/**
 * Asks NetBox, within the enrichment's budget, about the pairs whose failing changed: those that failed
 * in the previous report and not in this one (passed in this one, or not evaluated?), and those failing
 * in this one that did not fail in the previous one (passed there, or not evaluated there?). Only those
 * pairs are asked for (see readPassedPairs); an unchanged failing set costs no request. Never throws:
 * a side NetBox cannot answer stays unknown, with one line saying why.
 */
export async function readPairStates(options: ReadPairStatesOptions): Promise<PairStates> {
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
    { pairs: appeared, url: buildResultsUrlOf(options.resultsUrl, options.previous.reportId), map: before },
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
