import type { FailingPair } from '../trend';
import { classifyWaiver, type Waiver } from './waiver';
import { compareNames } from '../shared';

/** A failing (device, test) pair of a report, as the trend keeps it (names, not NetBox ids). */
export type WaivablePair = Pick<FailingPair, 'device' | 'test' | 'severity'>;

type WaiverMatch<P extends WaivablePair> = { pair: P; waiver: Waiver };

export interface WaiverOutcome<P extends WaivablePair> {
  /** Pairs left out of the verdict, on-change decisions, reminders and owner mails, with their waiver. */
  waived: WaiverMatch<P>[];
  /** Pairs still counted as failing, in their order. */
  failing: P[];
  /** Waivers that waived a pair here and end within WAIVER_EXPIRING_DAYS days (expiring, see classifyWaiver), soonest first. */
  expiring: Waiver[];
  /** Of `failing`: pairs whose waiver ended since the previous report ("waiver expired"). */
  waiverExpired: WaiverMatch<P>[];
  /** HIGH failures hidden on more than one device by a waiver that names none: never hidden silently. */
  mustName: ReturnType<typeof findHiddenHighFailures>;
}

/**
 * Applies the source's waivers to its failing pairs at `now`: a waiver of the pair's test in force, naming its device or
 * every device (see pickWaiver). Without `previousReportAt` (epoch ms) no "waiver expired" can be told. Pure.
 */
export function applyWaivers<P extends WaivablePair>(
  failingPairs: readonly P[],
  waivers: readonly Waiver[],
  now: number,
  context: { previousReportAt?: number | null } = {},
): WaiverOutcome<P> {
  const inForce = waivers.filter((w) => w.createdAt <= now && now < w.endsAt);
  // Ended after the previous report and by now: the pair it covered comes back as newly failing.
  const previous = context.previousReportAt ?? null;
  const ended = previous === null ? [] : waivers.filter((w) => w.endsAt > previous && w.endsAt <= now && w.createdAt <= previous);
  const waived: WaiverMatch<P>[] = [];
  const failing: P[] = [];
  const waiverExpired: WaiverMatch<P>[] = [];
  for (const pair of failingPairs) {
    const waiver = pickWaiver(pair, inForce);
    if (waiver) {
      waived.push({ pair, waiver });
      continue;
    }
    failing.push(pair);
    const lapsed = pickWaiver(pair, ended);
    if (lapsed) waiverExpired.push({ pair, waiver: lapsed });
  }
  return { waived, failing, expiring: findExpiring(waived, now), waiverExpired, mustName: findHiddenHighFailures(waived) };
}

/** The waiver that decides about a pair: its own device's before every device's, then the latest end. */
function pickWaiver(pair: WaivablePair, waivers: readonly Waiver[]): Waiver | undefined {
  let best: Waiver | undefined;
  for (const w of waivers) {
    if (w.test !== pair.test || (w.device !== null && w.device !== pair.device)) continue;
    if (!best || rank(w) > rank(best)) best = w;
  }
  return best;
}

const rank = (waiver: Waiver) => (waiver.device === null ? 0 : 1e15) + waiver.endsAt;

/** The waivers used here that end within the week, each once, soonest first. */
function findExpiring(waived: readonly WaiverMatch<WaivablePair>[], now: number): Waiver[] {
  const soon = new Map(waived.filter((m) => classifyWaiver(m.waiver, now) !== 'active').map((m) => [m.waiver.id, m.waiver]));
  return [...soon.values()].sort((a, b) => a.endsAt - b.endsAt || compareNames(a.id, b.id));
}

/** Per all-devices waiver, the devices it hides a HIGH failure on (sorted), when there are several. */
function findHiddenHighFailures(waived: readonly WaiverMatch<WaivablePair>[]) {
  const byWaiver = new Map<string, { waiver: Waiver; devices: Set<string> }>();
  for (const { pair, waiver } of waived) {
    if (pair.severity !== 'HIGH' || waiver.device !== null) continue;
    const entry = byWaiver.get(waiver.id) ?? { waiver, devices: new Set<string>() };
    entry.devices.add(pair.device);
    byWaiver.set(waiver.id, entry);
  }
  return [...byWaiver.values()]
    .filter((e) => e.devices.size > 1)
    .map((e) => ({ waiver: e.waiver, test: e.waiver.test, devices: [...e.devices].sort() }));
}
