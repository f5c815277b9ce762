/**
 * `npm run bench:ab -- --old <git rev> [--new <dir or git rev>] [--rounds 3]`: old main against new main and
 * the script that mails inside the request (bench/servers/send-in-request), alternated round by round (order
 * reversed each round) on one machine, every webhook a signed NetBox 4.6 body on a new connection, as NetBox
 * sends. A revision is built in a clone under the temp dir (node_modules hard-linked when the lock file is the
 * same, else `npm ci`), kept there for the next run; `--new` defaults to this checkout. Progress on stderr, one
 * table of medians and ratios on stdout.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findPackageRoot } from '../src/shared';
import { measureRelayMails } from './end-to-end';
import { describeFailures, runLoad } from './lib/load';
import { findFreePort, readCpuMs, readMemoryMb, startBenchServer, startRelayProcess } from './lib/processes';
import { BENCH_SECRET, buildRelayEnv, countStoredRows } from './lib/relay-env';
import { startSmtpSink, type SmtpSink } from './lib/smtp-sink';
import { computePercentile, formatNumber, sleep } from './lib/stats';

const MAILS = 1_000;
const WARMUP_MAILS = 50;
const SENDERS = [16, 64] as const;
const ACK_WARMUP_SECONDS = 2;
const ACK_SECONDS = 6;
const IDLE_MS = 10_000;

type Subject = { label: 'old' | 'new'; root: string; name: string } | { label: 'script'; name: string };
type Figures = Record<string, number>;

const ROWS: { key: string; name: string; relayOnly?: boolean }[] = [
  { key: 'mailsPerSecond', name: `mails/s, ${MAILS.toLocaleString('en-US')} webhooks (8 senders) → SMTP accepted` },
  { key: 'cpuPerMail', name: 'CPU per mail, ms' },
  ...SENDERS.flatMap((n) => [
    { key: `acks${n}`, name: `acknowledgements/s at ${n} senders while mailing` },
    { key: `p99${n}`, name: `ack p99 at ${n} senders, ms` },
    { key: `cpuPerAck${n}`, name: `CPU per ack at ${n} senders, ms` },
  ]),
  { key: 'idleZero', name: `idle RSS ${IDLE_MS / 1000} s after /healthz, zero config, MB`, relayOnly: true },
  { key: 'idleConfigured', name: 'idle RSS, SMTP + NetBox + admin token, MB', relayOnly: true },
  { key: 'peakRss', name: 'end-to-end peak RSS, MB' },
];

let nextId = 1;
const takeIds = () => (nextId += 1_000_000);
const log = (message: string) => process.stderr.write(`${message}\n`);

/** A built checkout: a directory as it is (built if it has no dist), or a revision of this repository built in a kept clone. */
function prepareCheckout(revOrDir: string): { root: string; name: string } {
  const here = findPackageRoot();
  if (fs.existsSync(path.join(revOrDir, 'package.json'))) {
    const root = path.resolve(revOrDir);
    if (!fs.existsSync(path.join(root, 'dist', 'src', 'main.js')))
      execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 2, 2] });
    return { root, name: root };
  }
  const sha = execFileSync('git', ['rev-parse', '--verify', `${revOrDir}^{commit}`], { cwd: here, encoding: 'utf8' }).trim();
  const root = path.join(os.tmpdir(), `compliance-relay-ab-${sha.slice(0, 12)}`);
  const name = `${revOrDir} (${sha.slice(0, 7)})`;
  if (fs.existsSync(path.join(root, '.ab-built'))) return { root, name };
  log(`building ${name} in ${root}`);
  fs.rmSync(root, { recursive: true, force: true });
  const run = (cmd: string, args: string[], cwd = root) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 2, 2] });
  run('git', ['clone', '-q', '--no-checkout', here, root], here);
  run('git', ['checkout', '-q', '--detach', sha]);
  const lock = (dir: string) => fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8');
  if (lock(root) === lock(here)) run('cp', ['-al', path.join(here, 'node_modules'), path.join(root, 'node_modules')]);
  else run('npm', ['ci']);
  run('npm', ['run', 'build']);
  fs.writeFileSync(path.join(root, '.ab-built'), `${sha}\n`);
  return { root, name };
}

/** The relay (`serve` with its own start flags, SMTP to `sink`) or the script, started fresh; stopped after `use`. */
async function withReceiver<T>(
  subject: Subject,
  sink: SmtpSink,
  dataDir: string,
  use: (r: { webhookUrl: string; pid: number }) => Promise<T>,
): Promise<T> {
  const env = buildRelayEnv({ SMTP_URL: sink.url });
  if (subject.label === 'script') {
    const script = await startBenchServer('servers/send-in-request.js', env);
    try {
      return await use({ webhookUrl: script.url, pid: script.pid });
    } finally {
      await script.stop();
    }
  }
  const relay = await startRelayProcess({ dataDir, env, root: subject.root });
  try {
    return await use(relay);
  } finally {
    await relay.stop();
  }
}

/**
 * The relay's first guarantee, read from its SQLite file after it stopped: every 2xx answer is a stored row, and
 * no more rows than requests sent (equal to the 2xx answers unless a request failed after its commit).
 */
function checkStored(subject: Subject, run: string, dataDir: string, answers: { ok: number; sent: number }): void {
  if (subject.label === 'script') return;
  const stored = countStoredRows(dataDir);
  if (stored < answers.ok || stored > answers.sent)
    throw new Error(`${subject.label}, ${run}: ${stored} stored deliveries for ${answers.ok} 2xx answers (${answers.sent} sent)`);
  log(`  ${subject.label} ${run}: ${stored} stored deliveries for ${answers.ok} 2xx answers`);
}

/** Every figure of one subject in one round, each from a fresh process. */
async function measureSubject(subject: Subject, tmpDir: string): Promise<Figures> {
  const f: Figures = {};
  const sink = await startSmtpSink();
  try {
    await withReceiver(subject, sink, path.join(tmpDir, 'e2e'), async (r) => {
      await measureRelayMails(r, sink, WARMUP_MAILS, takeIds(), true);
      const cpuBefore = readCpuMs(r.pid);
      f.mailsPerSecond = (await measureRelayMails(r, sink, MAILS, takeIds(), true)).rate;
      f.cpuPerMail = (readCpuMs(r.pid) - cpuBefore) / MAILS;
      f.peakRss = readMemoryMb(r.pid).peakRssMb;
    });
    // measureRelayMails throws unless every webhook was acknowledged; the sink is this subject's own, so far.
    const webhooks = WARMUP_MAILS + MAILS;
    checkStored(subject, 'end-to-end', path.join(tmpDir, 'e2e'), { ok: webhooks, sent: webhooks });
    const mails = { count: (await sink.stats()).count, reports: new Set((await sink.arrivals()).map(([id]) => id)).size };
    if (mails.count !== webhooks || mails.reports !== webhooks)
      throw new Error(`${subject.label}, end-to-end: ${mails.count} mails of ${mails.reports} reports for ${webhooks} webhooks`);
    log(`  ${subject.label} end-to-end: ${mails.count} mails, one per webhook`);
    for (const senders of SENDERS) {
      const dataDir = path.join(tmpDir, `acks-${senders}`);
      const answers = await withReceiver(subject, sink, dataDir, async (r) => {
        const load = { url: r.webhookUrl, connections: senders, secret: BENCH_SECRET, newConnection: true };
        const warm = await runLoad({ ...load, durationSeconds: ACK_WARMUP_SECONDS, firstId: takeIds() });
        const mailedBefore = (await sink.stats()).count;
        const measured = await runLoad({ ...load, durationSeconds: ACK_SECONDS, firstId: takeIds(), cpuOfPid: r.pid });
        f[`acks${senders}`] = measured.okPerSecond;
        f[`p99${senders}`] = measured.latencyP99Ms;
        f[`cpuPerAck${senders}`] = measured.cpuMs! / measured.ok;
        const mailed = (await sink.stats()).count - mailedBefore;
        log(
          `  ${subject.label} at ${senders} senders: ${measured.ok} acks, ${mailed} mails meanwhile${describeFailures(measured) ? `; ${describeFailures(measured)}` : ''}`,
        );
        return { ok: warm.ok + measured.ok, sent: warm.sent + measured.sent };
      });
      checkStored(subject, `acknowledgements at ${senders} senders`, dataDir, answers);
    }
    if (subject.label !== 'script') {
      const configured = buildRelayEnv({
        SMTP_URL: sink.url,
        NETBOX_URL: `http://127.0.0.1:${await findFreePort()}`,
        NETBOX_TOKEN: 'bench-netbox-token-0123456789',
        ADMIN_TOKEN: 'bench-admin-token-0123456789',
      });
      for (const [key, env] of [
        ['idleZero', undefined],
        ['idleConfigured', configured],
      ] as const) {
        const relay = await startRelayProcess({ dataDir: path.join(tmpDir, key), env: env ?? {}, zeroConfig: !env, root: subject.root });
        try {
          await sleep(IDLE_MS);
          f[key] = readMemoryMb(relay.pid).rssMb;
        } finally {
          await relay.stop();
        }
      }
    }
  } finally {
    await sink.stop();
  }
  return f;
}

function parseArgs(argv: string[]): { old: string; new: string; rounds: number } {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const old = value('--old');
  const rounds = Number(value('--rounds') ?? 3);
  if (!old || !Number.isInteger(rounds) || rounds < 1)
    throw new Error('usage: npm run bench:ab -- --old <git rev> [--new <dir or git rev>] [--rounds 3]');
  return { old, new: value('--new') ?? findPackageRoot(), rounds };
}

async function main(argv: string[]): Promise<void> {
  const args = parseArgs(argv);
  const old = prepareCheckout(args.old);
  const current = prepareCheckout(args.new);
  const subjects: Subject[] = [
    { label: 'old', ...old },
    { label: 'new', ...current },
    { label: 'script', name: 'send-in-request' },
  ];
  const runs: Record<Subject['label'], Figures[]> = { old: [], new: [], script: [] };
  const loadAtStart = os.loadavg()[0];
  const roundSeconds: number[] = [];
  for (let round = 0; round < args.rounds; round++) {
    const started = Date.now();
    for (const subject of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), `bench-ab-${subject.label}-`));
      try {
        const f = await measureSubject(subject, tmpDir);
        runs[subject.label].push(f);
        log(
          `round ${round + 1} ${subject.label}: ${ROWS.filter((r) => f[r.key] !== undefined)
            .map((r) => `${r.key} ${formatNumber(f[r.key])}`)
            .join(', ')}`,
        );
      } finally {
        fs.rmSync(tmpDir, { recursive: true, force: true });
      }
    }
    roundSeconds.push((Date.now() - started) / 1000);
  }
  const median = (values: number[]) => computePercentile(values, 50);
  const cell = (values: number[]) => (values.length && values.every(Number.isFinite) ? formatNumber(median(values)) : '—');
  // Ratios are the medians of the per-round ratios: each round's subjects ran under the same neighbours.
  const ratio = (a: Figures[], b: Figures[], key: string) => {
    const values = a.map((f, i) => f[key] / b[i][key]);
    return values.length && values.every(Number.isFinite) ? `${median(values).toFixed(2)}×` : '—';
  };
  const lines = [
    `old: ${old.name}; new: ${current.name}; script: bench/servers/send-in-request. ${args.rounds} round(s), order reversed each round, medians; ratios are medians of per-round ratios. Load average ${loadAtStart.toFixed(1)} → ${os.loadavg()[0].toFixed(1)}; ${roundSeconds.map((s) => s.toFixed(0)).join(', ')} s per round.`,
    '',
    '| figure | old | new | script | new ÷ old | new ÷ script |',
    '|---|---|---|---|---|---|',
    ...ROWS.map((row) => {
      const values = (label: Subject['label']) => runs[label].map((f) => f[row.key]).filter((v) => v !== undefined);
      return `| ${row.name} | ${cell(values('old'))} | ${cell(values('new'))} | ${row.relayOnly ? '—' : cell(values('script'))} | ${ratio(runs.new, runs.old, row.key)} | ${row.relayOnly ? '—' : ratio(runs.new, runs.script, row.key)} |`;
    }),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (error: unknown) => {
      log(`bench:ab: ${(error as Error)?.stack ?? String(error)}`);
      process.exit(1);
    },
  );
}
