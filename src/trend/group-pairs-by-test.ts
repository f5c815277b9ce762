import { SEVERITY_ORDER, type Severity } from '../report';
import type { FailingPair } from './types';

/** Devices named per test in a grouped list; the rest is a count ("the first few devices"). */
const GROUP_DEVICES_SHOWN = 3;

/** The pairs of one test, as a mail lists them: one line per test, not one per result. */
export interface TestPairsGroup {
  test: string;
  severity: Severity;
  /** Devices (pairs) of this test in the list: exact, whatever the caps. */
  devices: number;
  /** The first {@link GROUP_DEVICES_SHOWN} device names, in name order. */
  firstDevices: string[];
  /** For still-failing pairs: the longest streak among this test's pairs (reports in a row), else 0. */
  longestReports: number;
  /** The report where that longest streak began; null for pairs without a streak. */
  longestSinceReportId: number | null;
}

/**
 * Groups (device, test) pairs per test: HIGH first, then most devices, then by name. Takes every
 * pair, not a capped list, so a group's device count is exact. Pure.
 */
export function groupPairsByTest(pairs: readonly (FailingPair & { reports?: number; sinceReportId?: number })[]): TestPairsGroup[] {
  const byTest = new Map<string, { severity: Severity; devices: string[]; longestReports: number; longestSinceReportId: number | null }>();
  for (const pair of pairs) {
    const group = byTest.get(pair.test) ?? { severity: pair.severity, devices: [], longestReports: 0, longestSinceReportId: null };
    group.devices.push(pair.device);
    // A test's severity is one value in validity; the highest seen wins should two reports disagree.
    if (SEVERITY_ORDER[pair.severity] < SEVERITY_ORDER[group.severity]) group.severity = pair.severity;
    if ((pair.reports ?? 0) > group.longestReports) {
      group.longestReports = pair.reports ?? 0;
      group.longestSinceReportId = pair.sinceReportId ?? null;
    }
    byTest.set(pair.test, group);
  }
  return [...byTest.entries()]
    .map(([test, g]) => ({
      test,
      severity: g.severity,
      devices: g.devices.length,
      firstDevices: [...g.devices].sort((a, b) => a.localeCompare(b)).slice(0, GROUP_DEVICES_SHOWN),
      longestReports: g.longestReports,
      longestSinceReportId: g.longestSinceReportId,
    }))
    .sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || b.devices - a.devices || a.test.localeCompare(b.test));
}
