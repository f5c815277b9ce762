import { buildPeriodTrend, type FailingPair, type ReportSnapshot } from '../trend';
import type { DigestContent } from './build-digest-view';

const HOUR_MS = 3_600_000;
const START_MS = Date.parse('2023-04-10T06:00:00Z');

function sampleReport(reportId: number, hours: number, passed: number, failing: FailingPair[] | null): ReportSnapshot {
  const created = new Date(START_MS + hours * HOUR_MS).toISOString();
  return {
    dedupKey: `${reportId}@${created}`,
    series: 'https://netbox.example.com|',
    reportId,
    created,
    createdMs: Date.parse(created),
    counts: {
      totalPassed: passed,
      totalCount: 40,
      highPassed: Math.min(passed, 10) - (failing?.filter((p) => p.severity === 'HIGH').length ? 1 : 0),
      highCount: 10,
      middlePassed: 15,
      middleCount: 15,
      lowPassed: Math.max(0, passed - 25),
      lowCount: 15,
    },
    failing,
  };
}

/**
 * Sample digests that reach every branch of a digest template (several reports with newly failing,
 * fixed and worst devices; a silent source; a late period with no report at all), rendered at boot
 * so a broken digest template stops the start, as a broken report template does.
 */
export function sampleDigestContents(timezone: string): DigestContent[] {
  const a: FailingPair = { device: 'sw-core-01', test: 'ntp-servers', severity: 'HIGH' };
  const b: FailingPair = { device: 'sw-edge-07', test: 'banner', severity: 'LOW' };
  const c: FailingPair = { device: 'sw-core-01', test: 'snmp-community', severity: 'MIDDLE' };
  const before = sampleReport(40, -24, 37, [a, b]);
  const period = [sampleReport(41, 0, 36, [a, b, c]), sampleReport(42, 24, 38, [a, c]), sampleReport(43, 48, 38, null)];
  const base = {
    route: 'sample',
    periodStart: START_MS - HOUR_MS,
    periodEnd: START_MS + 7 * 24 * HOUR_MS,
    queuedAt: START_MS + 7 * 24 * HOUR_MS,
    timezone,
  };
  return [
    {
      ...base,
      late: false,
      sources: [{ source: 'default', series: [buildPeriodTrend(period.slice(0, 2), before), buildPeriodTrend([period[2]], undefined)] }],
      silentSources: ['lab'],
    },
    { ...base, late: true, sources: [], silentSources: [] },
  ];
}
