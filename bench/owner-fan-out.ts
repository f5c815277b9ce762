/**
 * Owner fan-out end to end: the built relay (`serve`, worker on, NETBOX_URL and token, a route mailing each site's
 * primary owner contact) mails one report of N sites (5 devices × 5 tests each, one failing HIGH result per site,
 * one owner per site: N owner mails) from the NetBox double in its own process (bench/servers/owners-netbox), which
 * answers every request after 30 ms, to a real smtp-server in its own process. Measured: webhook POST → the Nth mail
 * accepted, the relay's peak RSS (VmHWM) and its RSS once the mails are sent, and NetBox's requests. The baseline,
 * same run: a small script (bench/servers/page-download) GETting in sequence every request the relay made.
 * Run: `npm run bench -- --only owner-fan-out`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { buildBody, buildReportData } from '../test/helpers/netbox-json';
import { OWNER_ROUTES } from '../test/helpers/owner-network';
import { askChild, forkBenchScript, readMemoryMb, startRelayProcess, stopChild, waitForMessage } from './lib/processes';
import { buildRelayEnv } from './lib/relay-env';
import { postSigned } from './lib/smtp-floor';
import { startSmtpSink } from './lib/smtp-sink';
import type { Benchmark, BenchContext, Figure } from './lib/types';
import { OWNERS_CREATED, OWNERS_REPORT, OWNERS_TOKEN } from './servers/owners-netbox';

/** The bounds, for 3,000 owners: all mailed within 60 s of the webhook, peak RSS ≤ 200 MB. */
const MAILED_WITHIN_S = 60;
const PEAK_RSS_MB = 200;
const LATENCY_MS = 30;
/** How long after the last mail the relay's memory is read (its sends recorded, its owner groups no longer referenced). */
const SETTLE_MS = 5_000;

async function downloadPages(url: string, paths: string[]) {
  const child = forkBenchScript('servers/page-download.js');
  try {
    await waitForMessage(child, 'ready');
    return await askChild<{ ms: number; bytes: number; pages: number; peakRssMb: number }>(
      child,
      { type: 'download', url, token: OWNERS_TOKEN, paths },
      'done',
      600_000,
    );
  } finally {
    await stopChild(child);
  }
}

/** One relay process mailing the report of `owners` sites; then the plain download of the same requests. */
async function measureOwners(ctx: BenchContext, owners: number): Promise<Figure[]> {
  const netbox = forkBenchScript('servers/owners-netbox.js', { env: { SITES: String(owners), LATENCY_MS: String(LATENCY_MS) } });
  const sink = await startSmtpSink();
  try {
    const ready = await waitForMessage<{ url: string; counts: Record<string, number> }>(netbox, 'ready', 120_000);
    const dir = path.join(ctx.tmpDir, `owners-${owners}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'routes.yaml'), OWNER_ROUTES);
    const env = buildRelayEnv({
      SMTP_URL: sink.url,
      NETBOX_URL: ready.url,
      NETBOX_TOKEN: OWNERS_TOKEN,
      ROUTES_FILE: path.join(dir, 'routes.yaml'),
    });
    delete env.MAIL_TO;
    const relay = await startRelayProcess({ dataDir: path.join(dir, 'data'), env });
    let mailed: { seconds: number; peakMb: number; afterMb: number; atRestMb: number };
    try {
      const atRestMb = readMemoryMb(relay.pid).rssMb;
      const body = buildBody({ version: '4.6', data: buildReportData({ id: OWNERS_REPORT, created: OWNERS_CREATED, ...ready.counts }) });
      const sentAt = Date.now();
      const status = await postSigned(relay.webhookUrl, body);
      if (status !== 202) throw new Error(`the webhook answered ${status}`);
      const stats = await sink.waitForCount(owners, 600_000);
      // Read once the sends are recorded too (their kept copies written): the peak of the whole delivery.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const { peakRssMb: peakMb, rssMb: afterMb } = readMemoryMb(relay.pid);
      mailed = { seconds: (stats.lastAt - sentAt) / 1000, peakMb, afterMb, atRestMb };
      const extra = (await sink.stats()).count - owners;
      if (extra !== 0) throw new Error(`${extra} mails more than owners`);
      const said = relay.output().trim();
      if (said) ctx.log(`relay said: ${said.slice(0, 2000)}`);
    } finally {
      await relay.stop();
    }
    const paths = (await askChild<{ paths: string[] }>(netbox, { type: 'requests' }, 'requests')).paths;
    const download = await downloadPages(ready.url, paths);
    ctx.log(
      `${owners} owners mailed in ${mailed.seconds.toFixed(2)} s, peak RSS ${mailed.peakMb.toFixed(0)} MB (${mailed.afterMb.toFixed(0)} MB ${SETTLE_MS / 1000} s after), ${paths.length} NetBox requests; plain download ${(download.ms / 1000).toFixed(2)} s`,
    );
    const setting = `${owners} sites × 5 devices × 5 tests (${ready.counts.total_count} results), one failing HIGH result and one primary owner per site, NetBox answering each request after ${LATENCY_MS} ms`;
    const bounded = owners >= 3000;
    return [
      {
        name: `owner fan-out, ${owners} owners: webhook → last mail accepted`,
        value: mailed.seconds,
        unit: 's',
        baseline: { name: `plain download of the relay's ${paths.length} NetBox requests, in sequence`, value: download.ms / 1000 },
        ...(bounded ? { target: { kind: 'at-most' as const, value: MAILED_WITHIN_S } } : {}),
        note: `${setting}: POST sent → smtp-server accepted the ${owners}th mail; the relay made ${paths.length} NetBox requests (${(download.bytes / 1e6).toFixed(1)} MB)`,
      },
      {
        name: `owner fan-out, ${owners} owners: relay peak RSS`,
        value: mailed.peakMb,
        unit: 'MB',
        baseline: { name: 'the download script’s peak RSS', value: download.peakRssMb },
        ...(bounded ? { target: { kind: 'at-most' as const, value: PEAK_RSS_MB } } : {}),
        note: `VmHWM of the relay process, read ${SETTLE_MS / 1000} s after the last mail, its sends recorded (${mailed.atRestMb.toFixed(0)} MB at rest before the webhook, ${mailed.afterMb.toFixed(0)} MB ${SETTLE_MS / 1000} s after the last mail)`,
      },
    ];
  } finally {
    await sink.stop();
    await stopChild(netbox);
  }
}

export const ownerFanOutBenchmark: Benchmark = {
  id: 'owner-fan-out',
  title: 'Owner fan-out: one report mailed to 100 / 1,000 / 3,000 site owners, NetBox answering after 30 ms',
  async run(ctx: BenchContext): Promise<Figure[]> {
    const figures: Figure[] = [];
    for (const owners of ctx.quick ? [10] : [100, 1000, 3000]) figures.push(...(await measureOwners(ctx, owners)));
    return figures;
  },
};
