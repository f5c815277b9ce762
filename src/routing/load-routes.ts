import type { Document, LineCounter } from 'yaml';
import type * as Yaml from 'yaml';
import type { z } from 'zod';
import { RoutesFileSchema, type Route } from './routes-schema';
import { describeZodIssue } from '../shared';

/** The YAML parser, loaded only when a ROUTES_FILE is read (the CLI loads what it uses). */
function loadYaml(): typeof Yaml {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- lazy on purpose: only with ROUTES_FILE
  return require('yaml') as typeof Yaml;
}

/** The largest routes file accepted: it is configuration, read once at boot. */
const MAX_ROUTES_FILE_BYTES = 256 * 1024;

/** The name of the route used when no ROUTES_FILE is given: MAIL_TO/CC/BCC get every report. */
export const DEFAULT_ROUTE_NAME = 'default';

/** `where`: "route 2 (on-call) notify"; `line`: 1-based, when the YAML parser knows it. */
type RoutesFileIssue = { line?: number; where: string; message: string };

export class RoutesFileError extends Error {
  readonly issues: RoutesFileIssue[];
  constructor(file: string, issues: RoutesFileIssue[]) {
    super(`${file}: ${issues.map(formatRoutesIssue).join('; ')}`);
    this.name = 'RoutesFileError';
    this.issues = issues;
  }
}

/** "line 14: route 2 (on-call) notify: must be one of ..." */
function formatRoutesIssue(issue: RoutesFileIssue): string {
  return `${issue.line ? `line ${issue.line}: ` : ''}${issue.where}: ${issue.message}`;
}

export function parseRoutesFile(text: string, file: string): Route[] {
  return parseYamlListFile(text, file, RoutesFileSchema, { listKey: 'routes', noun: 'route' }).routes;
}

/**
 * Parses a YAML file holding one named list (`routes:`, `sources:`) against `schema`; throws {@link RoutesFileError} with
 * every problem, naming item, field and line. Names must differ, ignoring case.
 */
export function parseYamlListFile<T>(text: string, file: string, schema: z.ZodType<T>, list: { listKey: string; noun: string }): T {
  if (Buffer.byteLength(text) > MAX_ROUTES_FILE_BYTES) {
    throw new RoutesFileError(file, [{ where: 'file', message: `is larger than ${MAX_ROUTES_FILE_BYTES} bytes` }]);
  }
  const { LineCounter, parseDocument } = loadYaml();
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (doc.errors.length > 0) {
    throw new RoutesFileError(
      file,
      doc.errors.map((e) => ({ line: lineCounter.linePos(e.pos[0]).line, where: 'YAML', message: e.message.split('\n')[0] })),
    );
  }
  const value: unknown = doc.toJS({ maxAliasCount: 100 });
  const parsed = schema.safeParse(value ?? {});
  // Checked apart from the schema, so a duplicate is reported even when other fields are wrong too.
  const issues = [...(parsed.success ? [] : parsed.error.issues), ...findDuplicateNames(value, list)];
  if (issues.length > 0) {
    throw new RoutesFileError(
      file,
      issues.map((issue) => ({
        line: lineOf(doc, lineCounter, issue.path),
        where: describePath(issue.path, value, list),
        message: describeZodIssue(issue),
      })),
    );
  }
  return parsed.data!;
}

/** Reads and parses a configuration file; reports each problem instead of throwing, and returns undefined. */
export function readYamlListFile<T>(
  file: string,
  readFile: (file: string) => string,
  parse: (text: string, file: string) => T,
  report: (message: string) => void,
): T | undefined {
  try {
    return parse(readFile(file), file);
  } catch (error) {
    if (error instanceof RoutesFileError) error.issues.forEach((issue) => report(`${file} ${formatRoutesIssue(issue)}`));
    else report(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    return undefined;
  }
}

/** The implicit route without a routes file: every report to MAIL_TO/CC/BCC, as before routes existed. */
export function buildDefaultRoute(recipients: { to: string[]; cc: string[]; bcc: string[] }): Route {
  return { name: DEFAULT_ROUTE_NAME, ...recipients, notify: 'always', continue: false };
}

/** Route (and source) names identify a route's mails (Message-ID, thread, records): they must differ, ignoring case. */
function findDuplicateNames(value: unknown, list: { listKey: string; noun: string }): { path: PropertyKey[]; message: string }[] {
  const routes = (value as Record<string, unknown> | null)?.[list.listKey];
  if (!Array.isArray(routes)) return [];
  const seen = new Map<string, number>();
  const issues: { path: PropertyKey[]; message: string }[] = [];
  routes.forEach((route, i) => {
    const name = (route as { name?: unknown } | null)?.name;
    if (typeof name !== 'string') return;
    const first = seen.get(name.toLowerCase());
    if (first === undefined) seen.set(name.toLowerCase(), i);
    else issues.push({ path: [list.listKey, i, 'name'], message: `"${name}" is already the name of ${list.noun} ${first + 1}` });
  });
  return issues;
}

/** The line of the deepest node the YAML has along the issue's path (a missing key points at its parent). */
function lineOf(doc: Document, lineCounter: LineCounter, path: PropertyKey[]): number | undefined {
  const keys = path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  for (let n = keys.length; n >= 0; n -= 1) {
    const node = n === 0 ? doc.contents : doc.getIn(keys.slice(0, n), true);
    if (loadYaml().isNode(node) && node.range) return lineCounter.linePos(node.range[0]).line;
  }
  return undefined;
}

/** "route 2 (on-call) match.any[0].failed.above", readable by someone editing the file. */
function describePath(path: PropertyKey[], value: unknown, list: { listKey: string; noun: string }): string {
  if (path[0] !== list.listKey || typeof path[1] !== 'number') return path.length ? path.map(String).join('.') : 'file';
  const index = path[1];
  const routes = (value as Record<string, unknown[] | undefined> | null)?.[list.listKey];
  const name = (routes?.[index] as { name?: unknown } | undefined)?.name;
  const label = `${list.noun} ${index + 1}${typeof name === 'string' && name ? ` (${name})` : ''}`;
  const rest = path
    .slice(2)
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
    .join('');
  return rest ? `${label} ${rest}` : label;
}

/** Who hears relay notices (the watchdog's): everyone the routes mail, each once, in its strongest field. */
export function buildNoticeRecipients(routes: readonly Route[]): { to: string[]; cc: string[]; bcc: string[] } {
  const key = (address: string) => (/<([^>]+)>/.exec(address)?.[1] ?? address).trim().toLowerCase();
  const seen = new Set<string>();
  const take = (addresses: string[]) =>
    addresses.filter((a) => {
      const k = key(a);
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
  // A route by owner's contacts are known per report only: its fallback hears the relay's notices.
  const to = take(routes.flatMap((r) => [...r.to, ...(r.owners?.fallback ?? [])]));
  const cc = take(routes.flatMap((r) => r.cc));
  const bcc = take(routes.flatMap((r) => r.bcc));
  // A message needs a visible recipient; a routes file with only bcc still gets its notices.
  return to.length > 0 || cc.length > 0 ? { to, cc, bcc } : { to: bcc, cc: [], bcc: [] };
}
