/**
 * The validity results double (test/helpers/validity-results-double) in its own process, serving one
 * report of RESULTS results, one in FAILING_EVERY failing, each with EXPLANATION_BYTES of explanation,
 * and ignoring ?omit=explanation (as NetBox < 4.5.2 does). IPC: `ready {url}`.
 */
import { buildResults, startNetboxDouble } from '../../test/helpers/validity-results-double';

export const BENCH_TOKEN = '0123456789abcdef0123456789abcdef01234567';
export const BENCH_REPORT_ID = 500;
export const BENCH_CREATED = '2026-03-06T15:11:18.123456Z';

async function main(): Promise<void> {
  const results = Number(process.env.RESULTS ?? 50_000);
  const failingEvery = Number(process.env.FAILING_EVERY ?? 5);
  const double = await startNetboxDouble({ authorization: `Token ${BENCH_TOKEN}`, honoursOmit: false });
  double.reports.set(BENCH_REPORT_ID, {
    id: BENCH_REPORT_ID,
    created: BENCH_CREATED,
    results: buildResults(results, {
      fails: (i) => i % failingEvery === 0,
      explanationBytes: Number(process.env.EXPLANATION_BYTES ?? 4_000),
      tests: [
        { id: 1, name: 'ntp-servers', severity: 'HIGH' },
        { id: 2, name: 'snmp-community', severity: 'MIDDLE' },
        { id: 3, name: 'mtu-9000', severity: 'LOW' },
        { id: 4, name: 'banner', severity: 'LOW' },
        { id: 5, name: 'aaa-servers', severity: 'HIGH' },
        { id: 6, name: 'syslog', severity: 'MIDDLE' },
        { id: 7, name: 'ssh-v2', severity: 'HIGH' },
      ],
    }),
  });
  process.send!({ type: 'ready', url: double.url });
}

if (require.main === module) void main();
