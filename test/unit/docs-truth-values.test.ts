import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { describeSettings } from '../../src/config';
import { RETIRED_SETTINGS } from '../../src/config/retired-settings';
import {
  HTTP_HEADERS_TIMEOUT_MS,
  HTTP_REQUEST_TIMEOUT_MS,
  NETBOX_ENRICH_BUDGET_MS,
  NETBOX_TIMEOUT_MS,
} from '../../src/config/fixed-limits';
import { LEASE_MS, RETRY_BASE_MS, RETRY_MAX_ATTEMPTS, RETRY_MAX_DELAY_MS, WEBHOOK_MAX_BYTES } from '../../src/config/fixed-limits';
import { buildOutgoingMail } from '../../src/mail';
import { ERROR_CATALOGUE } from '../../src/shared';
import { parseNewWaiver, WAIVER_MAX_DAYS_AHEAD } from '../../src/waivers';
import { CATCH_UP_MAX_MAILED } from '../../src/config/sources-file';
import { EXIT_CODES } from '../../scripts/reference-tables';
import { listFileKeys, ROUTES_FILE, SOURCES_FILE } from '../../scripts/file-key-tables';
import { configMessages, EXAMPLES_ENV, EXAMPLES_SECRET_FILES } from '../helpers/config-files';
import { fencedBlocks, filesUnder, findIn, pages, proseOf, read, root, type Found } from '../helpers/doc-pages';

/*
 * What the pages say about values, checked against the one definition of each: the statuses of the error
 * catalogue, the endpoints the code serves, the headers a mail carries, the exit codes, the settings' and the
 * files' defaults, the fixed limits, the examples (loaded as the relay loads them), the tests the guarantees
 * cite. Each failure names the page and the line that says it.
 */

type Code = keyof typeof ERROR_CATALOGUE;
const isCode = (word: string): word is Code => word in ERROR_CATALOGUE;
const at = (found: Found[]) => found.map((f) => [f.where, f] as const);

describe('a status written beside an error code is the status the catalogue answers it with', () => {
  // `401 UNAUTHORIZED`, 403 `FORBIDDEN_ADDRESS`, `503 {"error":{"code":"STORAGE_UNAVAILABLE"`.
  // `401 UNAUTHORIZED`, 403 `FORBIDDEN_ADDRESS`, `| 415 | `A`, `B` |`, `503 {"error":{"code":"STORAGE_UNAVAILABLE"`.
  const pairs = findIn(
    /(?<![\w.])`?([1-5]\d\d)`?(?:\s+|\s*\|\s*)((?:`[A-Z][A-Z0-9_]*`(?:, | or )?)+|\{"error":\{"code":"[A-Z_]+)/g,
  ).flatMap((f) =>
    [...f.match[2].matchAll(/([A-Z][A-Z0-9_]*[A-Z0-9])/g)]
      .filter((m) => isCode(m[1]))
      .map((m) => ({ ...f, match: Object.assign([f.match[0], f.match[1], m[1]], { index: f.match.index }) as RegExpMatchArray })),
  );

  it('finds the statuses it checks', () => expect(pairs.length).toBeGreaterThan(25));

  it.each(at(pairs))('%s', (where, { match }) => {
    const code = match[2] as Code;
    expect(`${where}: ${match[1]} ${code}`).toBe(`${where}: ${ERROR_CATALOGUE[code].status} ${code}`);
  });
});

/** The endpoints the code serves, as `METHOD /path`: the routers' literal paths, the dashboard's under /ui. */
function servedEndpoints(): string[] {
  const files = [...filesUnder('src/http', ['.ts']), ...filesUnder('src/dashboard', ['.ts'])];
  return files.flatMap((file) =>
    [...read(file).matchAll(/\b(?:router|app)\.(get|post|put|patch|delete)\((?:'([^']+)'|(?:options\.)?path\b)/g)].map((m) => {
      const method = m[1].toUpperCase();
      if (m[2] === undefined) return `${method} <WEBHOOK_PATH>`;
      const prefix = file.startsWith('src/dashboard') ? '/ui' : '';
      return `${method} ${prefix}${m[2] === '/' && prefix ? '' : m[2]}`;
    }),
  );
}

/** The files that answer for an endpoint: where the codes it may answer are thrown. */
function filesOf(endpoint: string): string[] {
  const common = ['src/http/error-handler.ts', 'src/http/create-app.ts'];
  if (endpoint.includes('<WEBHOOK_PATH>')) return [...common, 'src/http/webhook-route.ts', ...filesUnder('src/webhook', ['.ts'])];
  if (endpoint.includes('/api/deliveries')) return [...common, 'src/http/admin-route.ts', 'src/http/admin-guard.ts'];
  if (endpoint.includes('/api/waivers'))
    return [...common, 'src/http/admin-route.ts', 'src/http/admin-guard.ts', ...filesUnder('src/waivers', ['.ts'])];
  if (endpoint.startsWith('GET /ui') || endpoint.startsWith('POST /ui')) return [...common, ...filesUnder('src/dashboard', ['.ts'])];
  return [...common, 'src/http/observe-routes.ts'];
}

describe("a page's table of the webhook's answers names every error the webhook may answer", () => {
  const row = read('docs/reference.md').match(/^\| `POST <WEBHOOK_PATH>` \| (.*) \|$/m)![1];
  const codes = [...row.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]).filter(isCode);
  // A table with a Status column under a heading that names the webhook.
  const tables = findIn(/^#+ [^\n]*[Ww]ebhook[^\n]*\n(?:(?!#)[^\n]*\n)*?(\| Status \|[^\n]*\n(?:\|[^\n]*\n)+)/gm);

  it('finds the codes it checks', () => expect(codes.length).toBeGreaterThan(10));

  // Pages may link to the reference instead of holding such a table: then there is nothing to hold complete.
  it('each such table lists them all', () => {
    const lacking = at(tables).flatMap(([where, { match }]) =>
      codes.filter((code) => !match[1].includes(`\`${code}\``)).map((code) => `${where}: lacks ${code}`),
    );
    expect(lacking).toEqual([]);
  });
});

describe('docs/reference.md lists every endpoint the relay serves, and each answer it says one may give', () => {
  const rows = findIn(/^\| `((?:GET|POST|PUT|PATCH|DELETE) [^`]+)` \| (.*) \|$/gm, ['docs/reference.md']);
  const served = [...new Set(servedEndpoints())];

  it('finds the endpoints it checks', () => {
    expect(rows.length).toBeGreaterThan(20);
    expect(served.length).toBe(rows.length);
  });

  it('each endpoint the code serves is listed', () => {
    const listed = rows.map((r) => r.match[1]);
    expect(served.filter((e) => !listed.includes(e)).map((e) => `docs/reference.md lacks ${e}`)).toEqual([]);
  });

  it.each(at(rows))('%s lists an endpoint the code serves', (where, { match }) => {
    expect(`${where}: ${match[1]}`).toBe(`${where}: ${served.find((e) => e === match[1]) ?? '(not served)'}`);
  });

  it.each(at(rows))('%s: each error code it names is one that endpoint can answer', (where, { match }) => {
    const source = filesOf(match[1]).map(read).join('\n');
    const named = [...match[2].matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]).filter(isCode);
    expect(named.filter((code) => !source.includes(`'${code}'`)).map((code) => `${where}: ${code}`)).toEqual([]);
  });

  it('every error code the code can answer is named on the page', () => {
    const code = filesUnder('src', ['.ts'])
      .filter((f) => !f.endsWith('errors.ts'))
      .map(read)
      .join('\n');
    const page = proseOf('docs/reference.md');
    const answered = Object.keys(ERROR_CATALOGUE).filter((c) => code.includes(`'${c}'`));
    expect(answered.filter((c) => !page.includes(`\`${c}\``))).toEqual([]);
  });
});

/** One `## ` section of a page, the rest blanked (line numbers kept). */
function sectionOf(page: string, heading: string): string {
  const text = read(page);
  const start = text.indexOf(`\n## ${heading}\n`);
  const end = text.indexOf('\n## ', start + 1);
  const blank = (part: string) => part.replace(/[^\n]/g, '');
  return blank(text.slice(0, start)) + text.slice(start, end) + blank(text.slice(end));
}

describe("docs/reference.md's mail headers are the headers a mail carries", () => {
  const table = findIn(/^\| `([A-Z][A-Za-z-]+)`(?:, `([A-Z][A-Za-z-]+)`)? \|/gm, ['docs/reference.md'], (page) =>
    sectionOf(page, 'Mail headers'),
  )
    .flatMap((f) => [f.match[1], f.match[2]].map((name) => ({ where: f.where, name })))
    .filter((t): t is { where: string; name: string } => t.name !== undefined && t.name !== 'Header');
  let carried: string[];
  beforeAll(async () => {
    // Every X-Compliance header the code sets, on one mail with each optional field: the bytes say how each is spelt.
    const names = filesUnder('src', ['.ts']).flatMap((f) => [...read(f).matchAll(/'(X-Compliance-[A-Za-z-]+)'/g)].map((m) => m[1]));
    const mail = await buildOutgoingMail({
      ...{ from: 'a@example.com', to: ['b@example.com'], cc: [], bcc: [], replyTo: 'c@example.com', subject: 's', text: 't', html: 'h' },
      ...{ attachments: [], messageId: '<m@example.com>', threadId: '<t@example.com>', date: new Date(0) },
      headers: { 'Auto-Submitted': 'auto-generated', 'X-Auto-Response-Suppress': 'All', ...Object.fromEntries(names.map((n) => [n, 'x'])) },
    });
    const head = mail.raw.toString('latin1').split('\r\n\r\n')[0];
    const basic = ['From', 'To', 'Cc', 'Subject', 'Date', 'Message-ID', 'MIME-Version', 'Content-Type'];
    carried = [...head.matchAll(/^([A-Za-z-]+):/gm)].map((m) => m[1]).filter((n) => !basic.includes(n));
  });

  it('finds the headers it checks', () => expect(table.length).toBeGreaterThan(15));

  it('each header a mail carries is listed, spelt as in the mail', () => {
    const listed = table.map((t) => t.name);
    expect(carried.filter((n) => !listed.includes(n)).map((n) => `docs/reference.md lacks ${n}`)).toEqual([]);
  });

  it('each header listed is one a mail carries', () => {
    expect(table.filter((t) => !carried.includes(t.name)).map((t) => `${t.where}: ${t.name} is on no mail`)).toEqual([]);
  });

  it('the verdicts listed for X-Compliance-Verdict are the ones the trend decides, and `none`', () => {
    const row = /^\| `X-Compliance-Verdict` \|[^|]*\| (.*) \|$/m.exec(read('docs/reference.md'))![1];
    const decided = /export type Verdict = ([^;]+);/.exec(read('src/trend/decide-verdict.ts'))![1];
    const values = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m[1]).sort();
    expect(values(row, /`([a-z]+)`/g)).toEqual([...values(decided, /'([a-z]+)'/g), 'none'].sort());
  });

  it('the Auto-Submitted and X-Auto-Response-Suppress values listed are the ones every mail is built with', () => {
    const code = read('src/mail/build-outgoing-mail.ts');
    for (const [, name, value] of [...read('docs/reference.md').matchAll(/^\| `((?:Auto|X-Auto)[A-Za-z-]+)` \| every mail \| `([^`]+)`/gm)])
      expect(code).toContain(`'${name}': '${value}'`);
  });
});

describe('every exit code a page names is one the commands exit with', () => {
  const codes = EXIT_CODES.map(([code]) => String(code));
  // "exit 78", "exits 69", "Exit 78 when", "(exit 64)", and a list after "Exit codes": "0 done, 64 bad flags, 69 …".
  const single = findIn(/\b[Ee]xit\w*(?: codes?:?| with)? (\d+)\b/g);
  const lists = findIn(/\bExit codes[^:]*: ([^.]*)/g).flatMap((f) =>
    [...f.match[1].matchAll(/(?<![\w.-])(\d{1,3})(?= [a-z])/g)].map((m) => ({ ...f, match: m })),
  );

  it('finds the exit codes it checks', () => expect(single.length + lists.length).toBeGreaterThan(10));

  it.each(at([...single, ...lists]))('%s names an exit code the commands use', (where, { match }) => {
    expect(`${where}: exit ${match[1]}`).toBe(`${where}: exit ${codes.includes(match[1]) ? match[1] : `(none of ${codes.join(', ')})`}`);
  });
});

describe('a default a page states is the default the definition holds', () => {
  const settings = new Map(describeSettings().map((s) => [s.name, s]));
  const defaultOf = (name: string) => settings.get(name)?.default ?? settings.get(name)?.defaultText;
  // "`RETENTION_DAYS` (default 30)", "`LOG_LEVEL` (default `info`)", "the default `SQLITE_SYNCHRONOUS=FULL`",
  // "(default `CATCH_UP_EVERY`, `5m`": the value is the setting's default.
  const stated = [
    ...findIn(/`([A-Z][A-Z0-9_]+)` \(default:? `?([^`;,)\s]+)`?/g),
    ...findIn(/\bdefault `([A-Z][A-Z0-9_]+)=([^`]+)`/g),
    ...findIn(/\(default `([A-Z][A-Z0-9_]+)`, `([^`]+)`/g),
  ].filter((f) => settings.has(f.match[1]));

  it('finds the settings defaults it checks', () => expect(stated.length).toBeGreaterThanOrEqual(3));

  it.each(at(stated))('%s', (where, { match }) => {
    expect(`${where}: ${match[1]} defaults to ${match[2]}`).toBe(`${where}: ${match[1]} defaults to ${defaultOf(match[1])}`);
  });

  // "`notify`: `always` (default)", "`on` (default all three)" are words; a key given with a value in code is checked.
  const keys = new Map([...listFileKeys(ROUTES_FILE), ...listFileKeys(SOURCES_FILE)].map((k) => [k.key.split('.').pop()!, k]));
  const keyDefaults = findIn(
    /`([a-z_]+)` \(default:? `([^`]+)`/g,
    ['docs/routes.md', 'docs/sources.md', 'docs/waivers.md'],
    proseOf,
  ).filter((f) => keys.has(f.match[1]));

  it.each(at(keyDefaults))('%s', (where, { match }) => {
    const key = keys.get(match[1])!;
    expect(`${where}: ${match[1]} defaults to \`${match[2]}\``).toBe(`${where}: ${match[1]} defaults to ${key.default ?? key.defaultText}`);
  });
});

/** Fixed limits as the pages write them, and the value each must have. */
const LIMITS: [RegExp, (m: RegExpMatchArray) => boolean, string][] = [
  [
    /[Aa]fter (\d+) (?:sends|attempts)\b|at most (\d+) times/g,
    (m) => Number(m[1] ?? m[2]) === RETRY_MAX_ATTEMPTS,
    `${RETRY_MAX_ATTEMPTS} sends (RETRY_MAX_ATTEMPTS)`,
  ],
  [
    /webhook body \| (\d+) MiB|bodies over (\d+) MiB|exceeds the (\d+) MiB/g,
    (m) => Number(m[1] ?? m[2] ?? m[3]) * 1_048_576 === WEBHOOK_MAX_BYTES,
    `${WEBHOOK_MAX_BYTES / 1_048_576} MiB (WEBHOOK_MAX_BYTES)`,
  ],
  [/\b(\d+) s per request/g, (m) => Number(m[1]) * 1000 === NETBOX_TIMEOUT_MS, `${NETBOX_TIMEOUT_MS / 1000} s (NETBOX_TIMEOUT_MS)`],
  [
    /\b(\d+) s without their headers/g,
    (m) => Number(m[1]) * 1000 === HTTP_HEADERS_TIMEOUT_MS,
    `${HTTP_HEADERS_TIMEOUT_MS / 1000} s (HTTP_HEADERS_TIMEOUT_MS)`,
  ],
  [
    /\b(\d+) s per mail|budget \((\d+) s a mail/g,
    (m) => Number(m[1] ?? m[2]) * 1000 === NETBOX_ENRICH_BUDGET_MS,
    `${NETBOX_ENRICH_BUDGET_MS / 1000} s (NETBOX_ENRICH_BUDGET_MS)`,
  ],
  [
    /\b(\d+) s without their whole request|not complete within (\d+) s/g,
    (m) => Number(m[1] ?? m[2]) * 1000 === HTTP_REQUEST_TIMEOUT_MS,
    `${HTTP_REQUEST_TIMEOUT_MS / 1000} s (HTTP_REQUEST_TIMEOUT_MS)`,
  ],
  [
    /(\d+)-minute lease|lease \((\d+) minutes\)|lease expires? \((\d+) minutes/g,
    (m) => Number(m[1] ?? m[2] ?? m[3]) * 60_000 === LEASE_MS,
    `${LEASE_MS / 60_000} minutes (LEASE_MS)`,
  ],
  [/at most (\d+) days after/g, (m) => Number(m[1]) === WAIVER_MAX_DAYS_AHEAD, `${WAIVER_MAX_DAYS_AHEAD} days (WAIVER_MAX_DAYS_AHEAD)`],
  [
    /at most (\d+)\s+one by one|at most (\d+) missed reports/g,
    (m) => Number(m[1] ?? m[2]) === CATCH_UP_MAX_MAILED,
    `${CATCH_UP_MAX_MAILED} (CATCH_UP_MAX_MAILED)`,
  ],
];

/** The longest a delivery can wait before it is dead: each delay's cap summed (full jitter: the delay is at most the cap). */
function longestRetryMinutes(): number {
  let total = 0;
  for (let n = 1; n < RETRY_MAX_ATTEMPTS; n++) total += Math.min(RETRY_MAX_DELAY_MS, RETRY_BASE_MS * 2 ** (n - 1));
  return Math.round(total / 60_000);
}

/** Numeric constants declared in src (`const NAME = 16 * 1024 * 1024;`), by name: what a page's "(`NAME`)" is checked against. */
function numericConstants(): Map<string, number> {
  const found = filesUnder('src', ['.ts']).flatMap((f) => [...read(f).matchAll(/const ([A-Z][A-Z0-9_]+) = ([\d_ *]+);/g)]);
  return new Map(
    found.map((m) => [
      m[1],
      m[2]
        .replace(/_/g, '')
        .split('*')
        .reduce((product, n) => product * Number(n), 1),
    ]),
  );
}

const UNITS: Record<string, number> = { MiB: 1_048_576, KiB: 1024, s: 1000, min: 60_000, h: 3_600_000, days: 86_400_000 };

describe('a fixed limit a page states is the value the code holds', () => {
  const limits = LIMITS.flatMap(([pattern, holds, expected]) =>
    findIn(pattern).map((f) => [f.where, f.match[0], holds(f.match), expected] as const),
  );

  it('finds the limits it checks', () => expect(limits.length).toBeGreaterThan(8));

  it.each(limits)('%s says "%s"', (where, said, holds, expected) => {
    expect(holds ? 'true' : `${where}: "${said}" but the code holds ${expected}`).toBe('true');
  });

  const giveUp = findIn(/at most (\d+) h (\d+) min|\(over at most (\d+) h\)/g);

  it.each(at(giveUp))('%s: the longest a delivery retries', (where, { match }) => {
    const minutes = longestRetryMinutes();
    const said = match[3] !== undefined ? `${match[3]} h` : `${match[1]} h ${match[2]} min`;
    const truth = match[3] !== undefined ? `${Math.floor(minutes / 60)} h` : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
    expect(`${where}: ${said}`).toBe(`${where}: ${truth}`);
  });

  // "`limit` 1–500 (default 100)": the admin API's bounds, as its route parses the parameter.
  const pageSizes = findIn(/`limit` 1–(\d+) \(default (\d+)\)/g, ['docs/admin-api.md']);
  const largest = /limit: optional\(wholeNumber\('a number of deliveries', ([A-Z_]+)\)\)/.exec(read('src/http/parse-list-filters.ts'));
  const fallback = /filters\.options\.limit \?\? (\d+)/.exec(read('src/http/admin-route.ts'));

  it.each(at(pageSizes))("%s: the admin API's page size", (where, { match }) => {
    expect(largest).not.toBeNull();
    expect(fallback).not.toBeNull();
    expect(`${where}: 1–${match[1]}, default ${match[2]}`).toBe(`${where}: 1–${constants.get(largest![1])}, default ${fallback![1]}`);
  });

  // "16 MiB (`MAX_PAGE_KEPT_BYTES`", "20 (`MAX_DIGEST_SERIES`)": the number, in its unit, is the constant's value.
  const constants = numericConstants();
  const named = findIn(/(?<![\w.,])(\d[\d,]*) ?(MiB|KiB|s|min|h|days)? \(`([A-Z][A-Z0-9_]+)`/g).filter((f) => constants.has(f.match[3]));

  it.each(at(named))('%s: a number beside the constant it names', (where, { match }) => {
    const [, number, unit, name] = match;
    const value = constants.get(name)!;
    const scale = unit === undefined ? 1 : name.endsWith('_MS') || name.endsWith('_BYTES') ? UNITS[unit] : 1;
    expect(`${where}: ${name} = ${Number(number.replace(/,/g, '')) * scale}`).toBe(`${where}: ${name} = ${value}`);
  });
});

/** Every key of the routes and sources files, by its last part (`drop_above`), and the keys each file refuses or retires. */
const FILE_KEYS = new Set(
  [...listFileKeys(ROUTES_FILE), ...listFileKeys(SOURCES_FILE)]
    .map((k) => k.key.split('.').pop()!)
    .concat(Object.keys(SOURCES_FILE.outside)),
);

describe('the routes and sources pages name only keys the files have', () => {
  // A snake_case name in a code span, or the key of a `key: value` span; names of tables, metrics and NetBox's
  // fields are written in the code too, a key removed from a schema is not (its name is then nowhere).
  const named = findIn(/`([a-z]+(?:_[a-z]+)+)`|`([a-z][a-z_]*):[ `]/g, ['docs/routes.md', 'docs/sources.md'], proseOf);
  const code = filesUnder('src', ['.ts'])
    .filter((f) => !/routes-schema|sources-file/.test(f))
    .map(read)
    .join('\n');

  it('finds the keys it checks', () => expect(named.length).toBeGreaterThan(20));

  it.each(at(named))('%s names a key of the files (or a name the code defines)', (where, { match }) => {
    const name = match[1] ?? match[2];
    const known = FILE_KEYS.has(name) || name.startsWith('compliance_relay_') || new RegExp(`\\b${name}\\b`).test(code);
    expect(`${where}: ${name}${known ? '' : ' is no key'}`).toBe(`${where}: ${name}`);
  });
});

/** What a YAML or JSON example is, by its shape, and the problems loading it as the relay loads it finds. */
function problemsOf(text: string, lang: string): string[] {
  const env = { ...EXAMPLES_ENV, SOURCES_FILE: '/srv/sources.yaml' };
  const files: Record<string, string> = { '/srv/sources.yaml': read('examples/sources.yaml'), ...EXAMPLES_SECRET_FILES };
  let value: unknown;
  try {
    value = lang === 'json' ? parseJsonExample(text) : YAML.parse(text);
  } catch (error) {
    return [`does not parse as ${lang}: ${(error as Error).message.split('\n')[0]}`];
  }
  if (lang === 'json') return [];
  const top = value !== null && typeof value === 'object' ? value : {};
  // A list of routes shown alone (a part of a routes file) is loaded as a routes file.
  const routes =
    'routes' in top ? text : Array.isArray(value) && value.every((r) => r?.name && r?.to) ? YAML.stringify({ routes: value }) : undefined;
  if (routes !== undefined) return configMessages({ ...env, ROUTES_FILE: '/srv/routes.yaml' }, { ...files, '/srv/routes.yaml': routes });
  if ('sources' in top) return configMessages({ ...env, SOURCES_FILE: '/srv/shown.yaml' }, { ...files, '/srv/shown.yaml': text });
  if ('waivers' in top) return configMessages({ ...env, WAIVERS_FILE: '/srv/waivers.yaml' }, { ...files, '/srv/waivers.yaml': text });
  return [];
}

/** A JSON example: one document, one per line, or the members of an object shown without their braces. */
function parseJsonExample(text: string): unknown {
  for (const attempt of [text, `{${text}}`]) {
    try {
      return JSON.parse(attempt);
    } catch {
      // the next form
    }
  }
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as unknown);
}

describe('every YAML and JSON example in the pages loads, and validates as the relay reads it', () => {
  const blocks = fencedBlocks([...pages]).filter((b) => b.lang === 'yaml' || b.lang === 'json');

  it('finds the examples it checks', () => expect(blocks.length).toBeGreaterThanOrEqual(8));

  it.each(blocks.map((b) => [b.where, b] as const))('%s', (where, block) => {
    expect(problemsOf(block.text, block.lang).map((p) => `${where}: ${p}`)).toEqual([]);
  });

  // The bodies a page posts to the waivers API (`curl … -d '{…}' …/api/waivers`).
  const bodies = findIn(/-d '(\{[^']*\})'[^`]*?\/api\/waivers\b/g);

  it.each(at(bodies))('%s posts a waiver the API accepts', (where, { match }) => {
    const parsed = parseNewWaiver(JSON.parse(match[1]), { now: Date.parse('2026-12-01'), sources: ['default'] });
    expect(parsed.ok ? [] : parsed.issues.map((i) => `${where}: ${i.path}: ${i.message}`)).toEqual([]);
  });
});

describe('docs/guarantees.md: each promise cites a test that runs in npm test', () => {
  const tests = new Map(filesUnder('test', ['.test.ts']).map((f) => [path.basename(f, '.test.ts'), f]));
  const promises = findIn(/^(\d+)\. \*\*([^*]+)\*\*([\s\S]*?)(?=^\d+\. \*\*|^## )/gm, ['docs/guarantees.md']);
  const cited = (text: string) =>
    [...text.matchAll(/\[(`[^\]]*)\]/g)].flatMap((m) => [...m[1].matchAll(/(?:^|[,;]\s+)`([a-z0-9-]+)`/g)].map((c) => c[1]));

  it('finds the promises it checks', () => expect(promises.length).toBeGreaterThanOrEqual(10));

  it.each(at(promises))('%s cites at least one test', (where, { match }) => {
    expect(`${where} (${match[2]}): ${cited(match[3]).length > 0 ? 'cites' : 'cites no test'}`).toBe(`${where} (${match[2]}): cites`);
  });

  const citations = findIn(/\[(`[^\]]*)\]/g, ['docs/guarantees.md']).flatMap((f) =>
    cited(f.match[0]).map((name) => [f.where, name] as const),
  );

  it.each(citations)('%s cites `%s`: a test file jest runs (not a bench)', (where, name) => {
    const file = tests.get(name);
    const runs = file !== undefined && file.startsWith('test/') && fs.existsSync(path.join(root, file));
    expect(`${where}: ${name}${runs ? '' : ' is not a test file under test/'}`).toBe(`${where}: ${name}`);
  });
});

describe('a retired setting is named only in the upgrade notes', () => {
  const upgradeNotes = ['CHANGELOG.md', 'docs/upgrading.md'];
  const retired = Object.keys(RETIRED_SETTINGS);
  // Generated blocks are their generator's (test/unit/settings-docs.test.ts); the prose is checked here.
  const named = findIn(
    new RegExp(`(?<![\\w-])(${retired.join('|')})(?![\\w-])`, 'g'),
    pages.filter((p) => !upgradeNotes.includes(p)),
    proseOf,
  );

  it('names none elsewhere', () => expect(named.map((f) => `${f.where}: ${f.match[1]}`)).toEqual([]));
});

describe("every command that starts the relay carries the start script's node flags", () => {
  const flags = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start.match(/--[a-z-]+(?:=\S+)?/g) ?? [];
  const places = [
    ...pages,
    'Dockerfile',
    'docker-compose.yml',
    ...(fs.existsSync(path.join(root, 'deploy')) ? filesUnder('deploy', ['']).filter((f) => fs.statSync(path.join(root, f)).isFile()) : []),
  ];
  // `compliance-relay serve` (the bin: node without flags), `node … dist/src/main.js serve`, `"dist/src/main.js", "serve"`.
  const starts = findIn(/^.*(?:compliance-relay|main\.js"?,?) "?serve\b.*$/gm, places);

  it('finds the start commands it checks', () => {
    expect(flags.length).toBeGreaterThan(0);
    expect(starts.length).toBeGreaterThan(0);
  });

  it.each(at(starts))('%s', (where, { match }) => {
    const missing = flags.filter((flag) => !match[0].includes(flag));
    expect(missing.length === 0 ? `${where}: starts with ${flags.join(' ')}` : `${where}: starts without ${missing.join(' ')}`).toBe(
      `${where}: starts with ${flags.join(' ')}`,
    );
  });
});
