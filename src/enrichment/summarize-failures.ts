import { readResultRefs } from '../netbox';
import { SEVERITY_ORDER, type Severity } from '../report';
import type { FailingResult } from '../trend';
import { compareNames } from '../shared';

/** One failing test: its failing results (a dynamic pair counts once), the first few kept in NetBox's order. */
type FailingTest = { testId: number | null; severity: Severity; name: string; failingDevices: number; firstResults: FailingResult[] };

/** What the failing results of one report say, computed in one pass as the pages stream in. */
export type FailureSummary = ReturnType<ReturnType<typeof createFailureSummarizer>['finish']>;

/** Results kept per test for the mail ("the first few device names"). */
const FIRST_RESULTS_PER_TEST = 5;

/** Accumulates failing results page by page; `finish()` sorts. One lean record per failing result, never the explanations. */
export function createFailureSummarizer() {
  const results: FailingResult[] = [];
  const tests = new Map<string, FailingTest>();
  const devices = new Map<string, { deviceId: number | null; name: string; failures: number }>();
  const addResult = (result: FailingResult | null) => {
    if (!result) return;
    results.push(result);
    const testKey = result.ids.test !== null ? `#${result.ids.test}` : `n:${result.test}`;
    let test = tests.get(testKey);
    if (!test) {
      test = { testId: result.ids.test, name: result.test, severity: result.severity, failingDevices: 0, firstResults: [] };
      tests.set(testKey, test);
    }
    test.failingDevices += 1;
    if (test.firstResults.length < FIRST_RESULTS_PER_TEST) test.firstResults.push(result);
    const deviceKey = result.ids.device !== null ? `#${result.ids.device}` : `n:${result.device}`;
    const device = devices.get(deviceKey) ?? { deviceId: result.ids.device, name: result.device, failures: 0 };
    devices.set(deviceKey, device);
    device.failures += 1;
  };
  return {
    add(page: readonly Record<string, unknown>[]) {
      for (const raw of page) addResult(readFailingResult(raw));
    },
    /** Adds failing results already read (kept with a stored report), in NetBox's order. */
    addResults(lean: readonly FailingResult[]) {
      for (const result of lean) addResult(result);
    },
    finish() {
      return {
        // Every failing result (lean: names and ids), in the order NetBox listed them.
        results,
        // Failing tests, HIGH first, then most failing devices, then name; devices with most failures first, then name.
        tests: [...tests.values()].sort(
          (a, b) =>
            SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || b.failingDevices - a.failingDevices || compareNames(a.name, b.name),
        ),
        devices: [...devices.values()].sort((a, b) => b.failures - a.failures || compareNames(a.name, b.name)),
      };
    },
  };
}

/** Reads a validity test result (NETBOX.md shape); null for a passing or unreadable one. */
function readFailingResult(raw: Record<string, unknown>): FailingResult | null {
  if (raw.passed !== false || typeof raw.id !== 'number') return null;
  const { test, device, testId, deviceId, severity } = readResultRefs(raw);
  const deviceName = pickName(device) ?? `device ${deviceId ?? '?'}`;
  // A dynamic pair is a second device the test compared against: name both, as validity's UI does.
  const pair = raw.dynamic_pair && typeof raw.dynamic_pair === 'object' ? pickName(raw.dynamic_pair as Record<string, unknown>) : undefined;
  return {
    device: pair ? `${deviceName} ↔ ${pair}` : deviceName,
    test: pickName(test) ?? `test ${testId ?? '?'}`,
    severity,
    ids: { result: raw.id, device: deviceId, test: testId },
  };
}

function pickName(o: Record<string, unknown>): string | undefined {
  return [o.name, o.display].find((v): v is string => typeof v === 'string' && v !== '')?.slice(0, 300);
}
