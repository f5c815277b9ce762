import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findPackageRoot } from '../../src/shared';
import { DELIVERY_STATES } from '../../src/store';

const MAIN = path.join(findPackageRoot(), 'dist', 'src', 'main.js');

/**
 * Runs the built CLI with `args` in a fresh Node process and returns the packages (under node_modules)
 * it had loaded when it exited, their files (`<package>/<path>`), and what it printed.
 */
function packagesLoadedBy(args: string[], cwd?: string): { status: number | null; packages: string[]; files: string[]; stdout: string } {
  const script = `
    process.argv = [process.argv[0], 'compliance-relay', ...${JSON.stringify(args)}];
    process.on('exit', () => {
      const files = Object.keys(require.cache).map((k) => /node_modules[\\\\/](.+)$/.exec(k)?.[1].replace(/\\\\/g, '/')).filter(Boolean);
      process.stderr.write('LOADED ' + JSON.stringify(files) + '\\n');
    });
    require(${JSON.stringify(MAIN)});
  `;
  const run = spawnSync(process.execPath, ['-e', script], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '' },
    timeout: 30_000,
  });
  const line = run.stderr.split('\n').find((l) => l.startsWith('LOADED '));
  if (!line) throw new Error(`no module list from the CLI: ${run.stderr}`);
  const files = JSON.parse(line.slice('LOADED '.length)) as string[];
  const packages = [...new Set(files.map((file) => /^(?:@[^/]+\/)?[^/]+/.exec(file)![0]))];
  return { status: run.status, packages, files, stdout: run.stdout };
}

/**
 * Starts `serve` with `env` (and a port the OS just gave out) in a fresh Node process, cwd `cwd`; once
 * /healthz answers, GETs each of `paths` in turn. Returns the files (under node_modules:
 * `<package>/<path>`; the relay's own: `src/<path>`) it had loaded at rest, then after each path, and how many
 * Intl.DateTimeFormat it had built at rest (the first pages in about 6 MB of ICU's data).
 */
function modulesLoadedByServe(
  env: Record<string, string>,
  cwd: string,
  paths: string[] = [],
): { atRest: string[]; after: string[][]; dateTimeFormats: number } {
  const script = `
    const net = require('node:net');
    let dateTimeFormats = 0;
    const counted = { apply: (f, self, args) => (dateTimeFormats++, Reflect.apply(f, self, args)), construct: (f, args) => (dateTimeFormats++, Reflect.construct(f, args)) };
    Intl.DateTimeFormat = new Proxy(Intl.DateTimeFormat, counted);
    const list = () => Object.keys(require.cache).map((file) => {
      const k = file.split(require('node:path').sep).join('/');
      const i = k.lastIndexOf('/node_modules/');
      const j = k.lastIndexOf('/dist/src/');
      return i >= 0 ? k.slice(i + '/node_modules/'.length) : j >= 0 ? k.slice(j + '/dist/'.length) : undefined;
    }).filter(Boolean);
    const probe = net.createServer().listen(0, '127.0.0.1', () => {
      const port = probe.address().port;
      probe.close(() => {
        process.env.PORT = String(port);
        process.argv = [process.argv[0], 'compliance-relay', 'serve'];
        require(${JSON.stringify(MAIN)});
        const base = 'http://127.0.0.1:' + port;
        const poll = setInterval(() => {
          fetch(base + '/healthz').then(async (res) => {
            if (!res.ok) return;
            clearInterval(poll);
            const loaded = { atRest: list(), after: [], dateTimeFormats };
            for (const p of ${JSON.stringify(paths)}) {
              await (await fetch(base + p, { redirect: 'manual' })).arrayBuffer();
              loaded.after.push(list());
            }
            process.stderr.write('LOADED ' + JSON.stringify(loaded) + '\\n');
            process.exit(0);
          }, () => undefined);
        }, 50);
      });
    });
  `;
  const run = spawnSync(process.execPath, ['-e', script], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...env },
    timeout: 60_000,
  });
  const line = run.stderr.split('\n').find((l) => l.startsWith('LOADED '));
  if (!line) throw new Error(`no module list from serve: ${run.stderr}`);
  return JSON.parse(line.slice('LOADED '.length)) as ReturnType<typeof modulesLoadedByServe>;
}

/** The packages among `files` (as modulesLoadedByServe names them). */
function packagesOf(files: string[]): string[] {
  return [...new Set(files.filter((f) => !f.startsWith('src/')).map((file) => /^(?:@[^/]+\/)?[^/]+/.exec(file)![0]))];
}

/** What only a relay that mails through Microsoft Graph or logs in with OAuth2 needs. */
const GRAPH_OAUTH2_FILES = ['src/notify/create-graph-notifier.js', 'src/notify/fetch-access-token.js'];
/** Packages no relay needs at rest unless configured for them: PostgreSQL, OAuth2 (JWT), CSS inlining, YAML, the rate limiter. */
const UNCONFIGURED_PACKAGES = ['pg', 'jose', 'juice', 'yaml', 'express-rate-limit'];

/** What only `serve` needs: the HTTP app, its rate limiter, metrics; and what only some commands or settings need. */
const SERVE_ONLY = ['express', 'express-rate-limit', 'prom-client'];
const NOT_FOR_CHECKS = [...SERVE_ONLY, 'pg', 'better-sqlite3', 'nodemailer', 'pino'];
/** Handlebars' runtime (renders compiled templates) and its compiler (parser, code generator; loads source-map). */
const HANDLEBARS_RUNTIME = 'handlebars/dist/cjs/handlebars.runtime.js';
const HANDLEBARS_COMPILER = 'handlebars/dist/cjs/handlebars/compiler/';

describe('modules the CLI loads', () => {
  let dir: string;
  beforeAll(() => {
    // Zero configuration: an empty directory (no .env), only PATH in the environment.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lazy-modules-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("`--help` loads no command's packages: no HTTP, metrics, store driver, mail, logger, YAML or zod", () => {
    const { status, packages, stdout } = packagesLoadedBy(['--help'], dir);
    expect(status).toBe(0);
    expect(stdout).toContain('check-config');
    expect(packages.filter((p) => [...NOT_FOR_CHECKS, 'handlebars', 'juice', 'yaml', 'zod'].includes(p))).toEqual([]);
    // Only what parsing the command line needs (dotenv reads .env in main.ts before any command).
    expect(packages.sort()).toEqual(['commander', 'dotenv']);
  });

  it("a command's `--help` loads no configuration either, and `deliveries --help` names every state the store knows", () => {
    for (const command of ['serve', 'check-config', 'preview', 'netbox-setup', 'deliveries']) {
      const { status, packages } = packagesLoadedBy([command, '--help'], dir);
      expect({ command, status, zod: packages.includes('zod') }).toEqual({ command, status: 0, zod: false });
    }
    const { stdout } = packagesLoadedBy(['deliveries', '--help'], dir);
    expect(stdout).toContain(`--state <state>  only this state (${DELIVERY_STATES.join('|')})`);
  });

  it('`check-config` compiles the templates but loads neither the HTTP app, metrics, a store driver, nodemailer nor the logger', () => {
    const { status, packages } = packagesLoadedBy(['check-config'], dir);
    expect(status).toBe(0);
    expect(packages).toContain('handlebars');
    expect(packages.filter((p) => NOT_FOR_CHECKS.includes(p))).toEqual([]);
  });

  it("the shipped templates load without juice or Handlebars' compiler (inlined and compiled ahead); a changed copy loads both", () => {
    const shipped = packagesLoadedBy(['check-config'], dir);
    expect(shipped.packages).not.toContain('juice');
    expect(shipped.files).toContain(HANDLEBARS_RUNTIME);
    expect(shipped.files.filter((file) => file.startsWith(HANDLEBARS_COMPILER) || /(^|\/)source-map\//.test(file))).toEqual([]);
    const templates = path.join(dir, 'my-templates');
    fs.cpSync(path.join(findPackageRoot(), 'templates'), templates, { recursive: true });
    fs.appendFileSync(path.join(templates, 'report', 'html.hbs'), '\n');
    fs.writeFileSync(path.join(dir, '.env'), `TEMPLATES_DIR=${templates}\n`);
    try {
      const { status, packages, files } = packagesLoadedBy(['check-config'], dir);
      expect(status).toBe(0);
      expect(packages).toContain('juice');
      expect(files.some((file) => file.startsWith(HANDLEBARS_COMPILER))).toBe(true);
    } finally {
      fs.rmSync(path.join(dir, '.env'));
    }
  });

  it("a SQLite relay's commands do not load the PostgreSQL driver (pg only with DATABASE_URL)", () => {
    const { status, packages } = packagesLoadedBy(['migrate'], dir);
    expect(status).toBe(0);
    expect(packages).toContain('better-sqlite3');
    expect(packages).not.toContain('pg');
    expect(packages.filter((p) => SERVE_ONLY.includes(p))).toEqual([]);
  });

  it("a zero-configuration relay at rest has loaded neither PostgreSQL's client, Graph's nor OAuth2's code, nor nodemailer, nor built a date formatter", () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lazy-serve-'));
    try {
      const { atRest, dateTimeFormats } = modulesLoadedByServe({}, cwd);
      expect(packagesOf(atRest).filter((p) => [...UNCONFIGURED_PACKAGES, 'nodemailer'].includes(p))).toEqual([]);
      expect(atRest.filter((f) => GRAPH_OAUTH2_FILES.includes(f))).toEqual([]);
      // In UTC (the default MAIL_TIMEZONE) neither the configuration's check nor the boot's sample mails need Intl's dates.
      expect(dateTimeFormats).toBe(0);
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('with SMTP, NetBox and the dashboard configured, serve loads nodemailer but not PostgreSQL or OAuth2', () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lazy-serve-'));
    const env = {
      // A port nobody listens on: the relay starts anyway (mail waits), which is all this looks at.
      SMTP_URL: 'smtp://127.0.0.1:9',
      MAIL_TO: 'noc@example.com',
      NETBOX_URL: 'http://127.0.0.1:9',
      NETBOX_TOKEN: 'netbox-token-0123456789',
      ADMIN_TOKEN: 'admin-token-0123456789abcdef',
      WEBHOOK_SECRET: 'webhook-secret-0123456789',
    };
    try {
      const { atRest } = modulesLoadedByServe(env, cwd);
      expect(packagesOf(atRest)).toContain('nodemailer');
      // The dashboard's templates are compiled on its first page, not at start.
      expect(atRest.filter((f) => f.startsWith(HANDLEBARS_COMPILER))).toEqual([]);
      expect(packagesOf(atRest).filter((p) => UNCONFIGURED_PACKAGES.includes(p))).toEqual([]);
      expect(atRest.filter((f) => GRAPH_OAUTH2_FILES.includes(f))).toEqual([]);
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});
