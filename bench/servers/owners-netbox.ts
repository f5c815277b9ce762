/**
 * The NetBox of the owner fan-out benchmark, in its own process: the test double (test/helpers/validity-results-double)
 * stocked with SITES sites of five devices and five tests, one failing HIGH result and one primary owner contact per
 * site (test/helpers/owner-network), answering every request after LATENCY_MS (a real NetBox's pace).
 * IPC: `ready {url, counts}` (the report's webhook counts); `{type:'requests'}` → `requests {paths}`: every request
 * path (with its query) since the previous `requests` message.
 */
import { stockOwnerNetwork } from '../../test/helpers/owner-network';
import { countResults, startNetboxDouble } from '../../test/helpers/validity-results-double';

export const OWNERS_TOKEN = '0123456789abcdef0123456789abcdef01234567';
export const OWNERS_REPORT = 801;
export const OWNERS_CREATED = '2026-03-06T06:00:00.000000Z';

async function main(): Promise<void> {
  const netbox = await startNetboxDouble({ authorization: `Token ${OWNERS_TOKEN}`, latencyMs: Number(process.env.LATENCY_MS ?? 30) });
  const results = stockOwnerNetwork(netbox, Number(process.env.SITES ?? 100));
  netbox.reports.set(OWNERS_REPORT, { id: OWNERS_REPORT, created: OWNERS_CREATED, results });
  let taken = 0;
  process.on('message', (message: { type?: string }) => {
    if (message?.type !== 'requests') return;
    const paths = netbox.requests.slice(taken).map((r) => r.path);
    taken = netbox.requests.length;
    process.send!({ type: 'requests', paths });
  });
  process.on('SIGTERM', () => void netbox.close().then(() => process.exit(0)));
  process.send!({ type: 'ready', url: netbox.url, counts: countResults(results) });
}

if (require.main === module) void main();
