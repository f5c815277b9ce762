import fs from 'node:fs';
import path from 'node:path';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { Command } from 'commander';
import { createProgram } from '../../src/cli';
import { buildMessageId, buildThreadId } from '../../src/mail';
import { describeSettings } from '../../src/config';
import { RETIRED_SETTINGS } from '../../src/config/retired-settings';
import { startTestRelay } from '../helpers/relay-harness';
import { captureIo } from '../helpers/cli-io';
import { configMessages, EXAMPLES_ENV, EXAMPLES_SECRET_FILES } from '../helpers/config-files';

/*
 * What the pages say, checked against the one definition of each thing they name: the settings schema,
 * the commander program, the headers the relay writes, the metrics registry and the examples/ folder.
 * A name that is not there fails here, with the page that names it.
 */

const root = path.join(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** Every file under `dir` (relative to the root) whose name ends with one of `endings`. */
function filesUnder(dir: string, endings: string[]): string[] {
  return fs
    .readdirSync(path.join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => endings.some((e) => f.endsWith(e)))
    .map((f) => path.join(dir, f));
}

/** README.md, templates/README.md and every page of docs/. */
const pages = ['README.md', 'templates/README.md', ...filesUnder('docs', ['.md'])];

/** Every distinct match of `pattern` (its first group, else the whole match) in each page, as [page, name]. */
function namesIn(pattern: RegExp): [string, string][] {
  return pages.flatMap((page) =>
    [...new Set([...read(page).matchAll(pattern)].map((m) => m[1] ?? m[0]))].map((name): [string, string] => [page, name]),
  );
}

/** Every distinct match of `pattern`'s first group in the given files. */
function matchesIn(files: string[], pattern: RegExp): string[] {
  return files.flatMap((file) => [...read(file).matchAll(pattern)].map((m) => m[1]));
}

/** Names of the programs around the relay that the pages speak of (SQLite's error, NetBox's settings, Node's). */
const OTHER_PROGRAMS_SETTINGS = [
  'SQLITE_FULL',
  'RQ_RETRY_MAX',
  'MAX_PAGE_SIZE',
  'BASE_PATH',
  'LOGIN_REQUIRED',
  'NODE_OPTIONS',
  'NODE_EXTRA_CA_CERTS',
];

describe('every upper-case name with an underscore a page uses is a setting, or a name the code or the files define', () => {
  const settings = describeSettings();
  const code = filesUnder('src', ['.ts']);
  const known = new Set<string>([
    ...settings.map((s) => s.name),
    ...settings.filter((s) => s.secret).map((s) => `${s.name}_FILE`),
    ...Object.keys(RETIRED_SETTINGS),
    // The codes and constants the code defines: a quoted code, or a declared constant.
    ...matchesIn(code, /'([A-Z][A-Z0-9_]*[A-Z0-9])'/g),
    ...matchesIn(code, /(?:const|enum) ([A-Z][A-Z0-9_]*[A-Z0-9])\b/g),
    ...matchesIn(code, /^ {2}([A-Z][A-Z0-9_]*[A-Z0-9]):/gm),
    // What the relay, its tests and its tools read from the environment beside the settings.
    ...matchesIn(
      [...code, ...filesUnder('test', ['.ts']), ...filesUnder('bench', ['.ts']), ...filesUnder('scripts', ['.ts'])],
      /process\.env\.([A-Z][A-Z0-9_]*)/g,
    ),
    // Docker Compose's variables, and the variables a sources file names (chosen by its writer).
    ...matchesIn(['docker-compose.yml'], /\$\{([A-Z][A-Z0-9_]*)/g),
    ...matchesIn([...pages, ...filesUnder('examples', ['.yaml']), ...filesUnder('deploy', ['.yaml'])], /_env: ([A-Z][A-Z0-9_]*)/g),
    ...OTHER_PROGRAMS_SETTINGS,
  ]);
  const named = namesIn(/(?<![\w-])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![\w-])/g);

  it('finds the names it checks', () => expect(named.length).toBeGreaterThan(200));

  it.each(named)('%s names %s, which exists', (_page, name) => {
    expect(known).toContain(name);
  });

  // A one-word name is checked where it reads as a setting cut short (`TIMEZONE` for MAIL_TIMEZONE).
  const shortened = namesIn(/`([A-Z][A-Z0-9]{2,})`/g).filter(
    ([, word]) => !known.has(word) && settings.some((s) => s.name.endsWith(`_${word}`)),
  );

  it('no page names a setting by the end of its name alone', () => expect(shortened).toEqual([]));
});

/**
 * The command a command line names: its first word, and the second when the first has subcommands
 * (`waivers add`); undefined when the program declares no such command.
 */
function findCommand(program: Command, words: string[]): Command | undefined {
  const command = program.commands.find((c) => c.name() === words[0]);
  if (!command || command.commands.length === 0) return command;
  return command.commands.find((c) => c.name() === words[1]);
}

/** The long flags a command accepts, its parents' included. */
function flagsOf(command: Command): string[] {
  const own = command.options.map((o) => o.long ?? '');
  return [...own, '--help', ...(command.parent ? flagsOf(command.parent) : [])];
}

/** Flags of the other tools the pages show: curl, docker compose, node, npm, the bench, pg_ctlcluster, unshare. */
const OTHER_TOOLS_FLAGS = [
  '--data-binary',
  '--build',
  '--profile',
  '--heap-growing-percent',
  '--max-semi-space-size',
  '--prefix',
  '--omit',
  '--only',
  '--skip-systemctl-redirect',
  '--mount',
  '--propagation',
  // docker run, useradd and systemctl in docs/install.md
  '--env-file',
  '--restart',
  '--system',
  '--home-dir',
  '--shell',
  '--now',
];

interface CommandLine {
  page: string;
  line: string;
  /** Where its flags are named: the line itself, or in docs/commands.md the whole row. */
  text: string;
}

/** A command line a page shows: `<program> <words> [--flags…]`, up to the end of its line or code span. */
const INVOCATION = /(?:(?<![#\w/-]\s?)compliance-relay|main\.js) ([a-z][a-z-]*(?: [a-z][a-z-]*)?[^`\n#|]*)/g;

describe('every command and flag a page shows is one the CLI declares', () => {
  const program = createProgram(captureIo({}, root), () => {});
  const lines: CommandLine[] = pages.flatMap((page) =>
    [...read(page).matchAll(INVOCATION)].map((m) => ({ page, line: m[1].trim(), text: m[1] })),
  );
  // docs/commands.md lists each command as a table row: its first cell's code spans are command lines.
  const rows: CommandLine[] = [...read('docs/commands.md').matchAll(/^\| (`.+?) \| (.*) \|$/gm)].flatMap((m) =>
    [...m[1].matchAll(/`([a-z](?:[^`\\]|\\.)*)`/g)].map((s) => ({ page: 'docs/commands.md', line: s[1], text: `${s[1]} ${m[2]}` })),
  );

  it('finds the command lines it checks', () => {
    expect(lines.length).toBeGreaterThan(15);
    expect(rows.length).toBeGreaterThan(10);
  });

  it.each([...lines, ...rows])('$page shows `$line`: the command and its flags exist', ({ line, text }) => {
    const command = findCommand(program, line.split(' '));
    expect(command).toBeDefined();
    const flags = [...text.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((m) => m[0]);
    expect(flags.filter((f) => !flagsOf(command!).includes(f))).toEqual([]);
  });

  // Anywhere else a flag is named (prose, a comment after a command), it is one of some command's.
  const allFlags = new Set([...program.commands.flatMap((c) => [c, ...c.commands]).flatMap(flagsOf), ...OTHER_TOOLS_FLAGS]);
  const prose = namesIn(/(?<![\w-])(--[a-z][a-z-]*)/g);

  it.each(prose)('%s names %s, a flag of one of the commands (or of a tool the page shows)', (_page, flag) => {
    expect(allFlags).toContain(flag);
  });

  it('docs/commands.md names every flag of each command in its rows', () => {
    const commands = program.commands.flatMap((c) => (c.commands.length ? c.commands : [c]));
    const missing = commands.flatMap((command) => {
      const text = rows
        .filter((row) => findCommand(program, row.line.split(' ')) === command)
        .map((row) => row.text)
        .join(' ');
      const name = `${command.parent === program ? '' : `${command.parent!.name()} `}${command.name()}`;
      return command.options.filter((o) => o.long && !text.includes(o.long)).map((o) => `docs/commands.md: ${name} ${o.long}`);
    });
    expect(missing).toEqual([]);
  });

  it('docs/commands.md lists every command', () => {
    const listed = new Set(rows.map((row) => findCommand(program, row.line.split(' '))));
    const missing = program.commands.flatMap((c) => (c.commands.length ? c.commands : [c])).filter((c) => !listed.has(c));
    expect(missing.map((c) => `${c.parent === program ? '' : `${c.parent!.name()} `}${c.name()}`)).toEqual([]);
  });
});

/** The `X-Compliance-…` header names the code sets, as they appear in a mail's bytes (nodemailer writes the case). */
async function writtenHeaderNames(): Promise<Set<string>> {
  const names = matchesIn(filesUnder('src', ['.ts']), /'(X-Compliance-[A-Za-z-]+)'/g);
  const headers = Object.fromEntries(names.map((name) => [name, 'x']));
  const raw = await new MailComposer({ from: 'a@example.com', to: 'b@example.com', text: 'x', headers }).compile().build();
  return new Set([...raw.toString('utf8').matchAll(/^(X-Compliance-[A-Za-z-]+):/gm)].map((m) => m[1]));
}

describe('every X-Compliance header a page names is one a mail carries, spelt as in the mail', () => {
  const named = namesIn(/X-Compliance-[A-Za-z-]*[A-Za-z]/g);
  let written: Set<string>;
  beforeAll(async () => {
    written = await writtenHeaderNames();
  });

  it('finds the headers it checks', () => {
    expect(named.length).toBeGreaterThan(10);
    expect(written.size).toBeGreaterThan(8);
  });

  it.each(named)('%s names %s, which a mail carries', (_page, name) => {
    expect([...written]).toContain(name);
  });
});

describe('every metric a page names is in the registry a relay creates', () => {
  const named = namesIn(/compliance_relay_[a-z0-9_]*[a-z0-9]/g);
  let registered: string[];
  beforeAll(async () => {
    const relay = await startTestRelay();
    try {
      registered = (await relay.relay.metrics.registry.getMetricsAsJSON()).map((m) => m.name);
    } finally {
      await relay.stop();
    }
  });

  it('finds the metrics it checks', () => {
    expect(named.length).toBeGreaterThan(10);
    expect(registered.length).toBeGreaterThan(10);
  });

  it.each(named)('%s names %s, which the relay exports', (_page, name) => {
    expect(registered).toContain(name.replace(/_(bucket|sum|count)$/, (suffix) => (registered.includes(name) ? suffix : '')));
  });

  it("docs/reference.md's table names every compliance_relay_ metric the relay exports", () => {
    const table = new Set([...read('docs/reference.md').matchAll(/^\| `(compliance_relay_[a-z0-9_]+)/gm)].map((m) => m[1]));
    expect(registered.filter((name) => name.startsWith('compliance_relay_') && !table.has(name))).toEqual([]);
  });
});

/** The marker a page writes on the line before a fenced block that shows an examples/ file whole. */
const EXAMPLE_MARKER = /^<!-- example: (examples\/[^ ]+) -->\n```[a-z]*\n([\s\S]*?)^```$/gm;

describe('examples/ files: each one a page names exists, and each one a page shows is shown as it is', () => {
  const named = namesIn(/(?<![\w/.-])(examples\/[A-Za-z0-9._/-]*[A-Za-z0-9])/g);
  const shown = pages.flatMap((page) => [...read(page).matchAll(EXAMPLE_MARKER)].map((m): [string, string, string] => [page, m[1], m[2]]));

  it('finds the files it checks', () => {
    expect(named.length).toBeGreaterThan(5);
    expect(shown.length).toBeGreaterThanOrEqual(3);
  });

  it.each(named)('%s names %s, which exists', (_page, file) => {
    expect(fs.existsSync(path.join(root, file))).toBe(true);
  });

  it.each(shown)('%s shows %s as it is', (_page, file, content) => {
    expect(content).toBe(read(file));
  });

  it('each examples/ routes and sources file loads as the relay loads it', () => {
    const env = EXAMPLES_ENV;
    const files = {
      '/srv/examples/routes.yaml': read('examples/routes.yaml'),
      '/srv/examples/owner-routes.yaml': read('examples/owner-routes.yaml'),
      '/srv/examples/sources.yaml': read('examples/sources.yaml'),
      ...EXAMPLES_SECRET_FILES,
    };
    expect(configMessages({ ...env, ROUTES_FILE: 'examples/routes.yaml', SOURCES_FILE: 'examples/sources.yaml' }, files)).toEqual([]);
    expect(configMessages({ ...env, ROUTES_FILE: 'examples/owner-routes.yaml' }, files)).toEqual([]);
  });

  it('a fenced block that says it is an examples/ file carries the marker, so that it is checked', () => {
    const unmarked = pages.flatMap((page) =>
      [...read(page).matchAll(/^(.*)\n```[a-z]*\n#[^\n]*(examples\/[A-Za-z0-9._-]+)/gm)]
        .filter((m) => !m[1].startsWith('<!-- example:'))
        .map((m) => `${page}: ${m[2]}`),
    );
    expect(unmarked).toEqual([]);
  });
});

/** A format as a page writes it (`<report-<report id>.d<delivery id>…>`), as a pattern: each `<placeholder>` any text. */
function patternOf(format: string): RegExp {
  const parts = format.split(/<[A-Za-z][A-Za-z_ ]*>/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^@<>]+')}$`);
}

describe('docs/routes.md writes the Message-ID and the thread root as the relay builds them', () => {
  const page = read('docs/routes.md');
  const formats = (start: string) => [...page.matchAll(/`(<[^`]+>)`/g)].map((m) => m[1]).filter((f) => f.startsWith(start));
  const from = 'Compliance Relay <reports@example.com>';

  it('a report mail of a route', () => {
    const id = buildMessageId({ deliveryId: 7, reportId: 202, dedupKey: 'default/202@2026-03-06', from, route: 'on-call' });
    expect(formats('<report-')).toHaveLength(1);
    expect(id).toMatch(patternOf(formats('<report-')[0]));
  });

  it("a route's thread root, of the default source and of a named one", () => {
    const [bare, named] = formats('<compliance-thread.');
    expect(buildThreadId({ from, route: 'on-call' })).toMatch(patternOf(bare));
    expect(buildThreadId({ from, route: 'on-call' })).not.toMatch(patternOf(named));
    expect(buildThreadId({ from, route: 'on-call', source: 'lab' })).toMatch(patternOf(named));
  });
});

describe('comments and files that point at a page (and a part of it) point at one that exists', () => {
  const sources = [
    ...filesUnder('src', ['.ts']),
    ...filesUnder('scripts', ['.ts']),
    ...filesUnder('bench', ['.ts']),
    ...filesUnder('examples', ['.yaml']),
    ...filesUnder('deploy', ['.yaml', '.conf']),
    'docker-compose.yml',
    'Dockerfile',
    '.dependency-cruiser.cjs',
    '.env.example',
  ];
  const pointers = sources.flatMap((file) =>
    [...read(file).matchAll(/(templates\/README\.md|README(?:\.md)?|docs\/[a-z-]+\.md)(?:,? \(?"([^"]+)"\)?)?/g)].map(
      (m): [string, string, string] => [file, m[1].endsWith('.md') ? m[1] : `${m[1]}.md`, m[2] ?? ''],
    ),
  );

  it('finds the pointers it checks', () => expect(pointers.filter(([, , part]) => part).length).toBeGreaterThanOrEqual(3));

  it.each(pointers)('%s points at %s "%s", which exists', (_file, page, part) => {
    expect(fs.existsSync(path.join(root, page))).toBe(true);
    if (!part) return;
    // A part is a heading, or a paragraph's bold lead (`**Memory.**`).
    const parts = [
      ...read(page)
        .replace(/^```[\s\S]*?^```$/gm, '')
        .matchAll(/^#{1,6} (.+)$|^\*\*([^*]+?)\.?\*\*/gm),
    ].map((m) => (m[1] ?? m[2]).trim());
    expect(parts).toContain(part);
  });
});

describe('every source, test or script file a page names exists', () => {
  const named = namesIn(/(?<![\w/.-])((?:src|test|bench|scripts|deploy|templates)\/[A-Za-z0-9._/-]*\.[a-z]+)(?![\w/-])/g);

  it('finds the files it checks', () => expect(named.length).toBeGreaterThan(20));

  it.each(named)('%s names %s, which exists', (_page, file) => {
    expect(fs.existsSync(path.join(root, file))).toBe(true);
  });
});

describe('no comment in src/ names a retired setting, as if it were still read', () => {
  const retired = Object.keys(RETIRED_SETTINGS);
  const comments = filesUnder('src', ['.ts'])
    .filter((file) => !file.endsWith('retired-settings.ts'))
    .flatMap((file) =>
      read(file)
        .split('\n')
        .filter((line) => /^\s*(\*|\/\/|\/\*)/.test(line) && retired.some((name) => new RegExp(`\\b${name}\\b`).test(line)))
        .map((line) => `${file}: ${line.trim()}`),
    );

  it('names none', () => expect(comments).toEqual([]));
});
