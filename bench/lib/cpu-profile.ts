import fs from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

/** The part of a V8 .cpuprofile this module reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { url: string; functionName: string; lineNumber?: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Profiles `fn` in this process with V8's sampling profiler (what `node --cpu-prof` writes), so a
 * benchmark can say where its time goes, not only how much there is.
 */
export async function profileCpu<T>(fn: () => Promise<T> | T): Promise<{ result: T; profile: CpuProfile }> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  try {
    const result = await fn();
    const { profile } = (await post('Profiler.stop')) as { profile: CpuProfile };
    return { result, profile };
  } finally {
    session.disconnect();
  }
}

/** The profile `node --cpu-prof --cpu-prof-dir=<dir>` wrote there (the first one found). */
export function readCpuProfileDir(dir: string): CpuProfile {
  const file = fs.readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no CPU profile in ${dir}`);
  return JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as CpuProfile;
}

/**
 * Share (0–1) of the busy samples spent inside frames matching `match`, callees included
 * (inclusive time): "how much of rendering is juice" counts juice's calls into cheerio too.
 */
export function computeInclusiveShare(profile: CpuProfile, match: (url: string, functionName: string) => boolean): number {
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const memo = new Map<number, boolean>();
  const inside = (id: number): boolean => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    const p = parent.get(id);
    const value = match(node.callFrame.url, node.callFrame.functionName) || (p !== undefined && inside(p));
    memo.set(id, value);
    return value;
  };
  let busy = 0;
  let hit = 0;
  profile.samples.forEach((id, i) => {
    const name = byId.get(id)!.callFrame.functionName;
    if (name === '(idle)' || name === '(program)') return;
    const dt = profile.timeDeltas[i] ?? 0;
    busy += dt;
    if (inside(id)) hit += dt;
  });
  return busy > 0 ? hit / busy : 0;
}

/**
 * Self time by where the code lives: an npm package, a folder of src/, node's internals, GC.
 * Returns the top `limit` as [name, share of busy time].
 */
export function summarizeSelfTime(profile: CpuProfile, limit = 12): [string, number][] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const { url, functionName } = byId.get(id)!.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') return;
    const dt = profile.timeDeltas[i] ?? 0;
    busy += dt;
    const key = classifyFrame(url, functionName);
    totals.set(key, (totals.get(key) ?? 0) + dt);
  });
  return [...totals.entries()]
    .map(([k, v]) => [k, busy > 0 ? v / busy : 0] as [string, number])
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit);
}

/**
 * Self time by function (name, file and line), the top `limit` as [frame, share of busy time]:
 * the frames a reader of the profile would open first. GC and native frames count as one each.
 */
export function summarizeTopFrames(profile: CpuProfile, limit = 5): [string, number][] {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const totals = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const { url, functionName, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') return;
    const dt = profile.timeDeltas[i] ?? 0;
    busy += dt;
    const where = url ? ` ${shortenUrl(url)}:${(lineNumber ?? -1) + 1}` : '';
    const key = `${functionName || '(anonymous)'}${where}`;
    totals.set(key, (totals.get(key) ?? 0) + dt);
  });
  return [...totals.entries()]
    .map(([k, v]) => [k, busy > 0 ? v / busy : 0] as [string, number])
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit);
}

/** A frame's file as a reader finds it: `pkg/lib/file.js`, `src/store/x.js`, `node:net`. */
function shortenUrl(url: string): string {
  const pkg = /node_modules\/(.+)$/.exec(url);
  if (pkg) return pkg[1];
  const own = /\/dist\/((?:src|bench)\/.+)$/.exec(url);
  if (own) return own[1];
  return url.replace(/^node:internal\//, 'node:');
}

function classifyFrame(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : `(native) ${functionName}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  const own = /\/dist\/(src|bench)\/([^/]+)/.exec(url);
  if (own) return `${own[1]}/${own[2].replace(/\.js$/, '')}`;
  if (url.startsWith('node:'))
    return url
      .replace(/^node:internal\//, 'node:')
      .split('/')
      .slice(0, 2)
      .join('/');
  return url;
}
