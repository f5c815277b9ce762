import fs from 'node:fs';
import path from 'node:path';
import { CHART_REPORTS, CSV_ATTACHMENT_MAX_BYTES, MAX_FAILING_TESTS_LISTED } from '../../src/compose';
import { PG_POOL_SIZE } from '../../src/store';
import { describeSettings, loadConfig } from '../../src/config';
import { renderEnvExample, replaceRetiredSettings, replaceSettingsReference } from '../../scripts/settings-docs';

const root = path.join(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** The reference and .env.example are generated from the schema: a stale copy fails here, not in a user's hands. */
describe('the settings documentation is generated from the schema', () => {
  it('docs/configuration.md holds the reference as the schema writes it (npm run docs:settings)', () => {
    const page = read('docs/configuration.md');
    expect(replaceSettingsReference(page)).toBe(page);
  });

  it('.env.example is the one the schema writes (npm run docs:settings)', () => {
    expect(read('.env.example')).toBe(renderEnvExample());
  });

  it('CHANGELOG.md lists every setting no longer read, and the live reference none (npm run docs:settings)', () => {
    const changelog = read('CHANGELOG.md');
    expect(replaceRetiredSettings(changelog)).toBe(changelog);
    expect(changelog).toContain('| `GRAPH_CONCURRENCY` |');
    expect(read('docs/configuration.md')).not.toContain('GRAPH_CONCURRENCY');
  });

  it('lists at most 30 basics, first, and the advanced group last', () => {
    const groups = describeSettings().map((s) => s.group);
    const basics = groups.filter((g) => g === 'basics').length;
    expect(basics).toBeGreaterThan(0);
    expect(basics).toBeLessThanOrEqual(30);
    expect(groups.slice(0, basics).every((g) => g === 'basics')).toBe(true);
    expect(groups.indexOf('advanced')).toBe(groups.length - groups.filter((g) => g === 'advanced').length);
  });

  it('documents at most 46 environment variables (_FILE forms of secrets aside): a new one replaces one, or is a constant', () => {
    expect(describeSettings().length).toBeLessThanOrEqual(46);
  });

  it('names the unit of every timing: _MS, or a duration written with its unit', () => {
    const timings = describeSettings().filter((s) => /TIMEOUT|DELAY|BUDGET|WINDOW|INTERVAL|POLL|LEASE|EVERY/.test(s.name));
    expect(timings.length).toBeGreaterThan(0);
    for (const s of timings) expect(s.name.endsWith('_MS') || s.description.startsWith('A duration')).toBe(true);
  });

  it('shows a duration default as written (5m), and the relay holds it in milliseconds', () => {
    expect(describeSettings().find((s) => s.name === 'CATCH_UP_EVERY')?.default).toBe('5m');
    expect(loadConfig({}, { readFile: () => '' }).sources[0].catchUp.everyMs).toBe(300_000);
  });
});

describe('a variable no longer read is warned about, naming what replaced it', () => {
  it('GRAPH_CONCURRENCY and SMTP_PAUSE_AFTER_4XX still set: a warning each, and the relay runs on the fixed values', () => {
    const config = loadConfig({ GRAPH_CONCURRENCY: '8', SMTP_PAUSE_AFTER_4XX: '1' }, { readFile: () => '' });
    expect(config.warnings.map((w) => w.variable)).toEqual(['GRAPH_CONCURRENCY', 'SMTP_PAUSE_AFTER_4XX']);
    expect(config.warnings[0].message).toContain('fixed at 4');
    expect(config.warnings[1].message).toContain('3 different deliveries answered 4xx in a row');
  });

  it('the advanced timings and limits still set: a warning each, and the relay runs on the fixed values', () => {
    const retired = {
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      HTTP_REQUEST_TIMEOUT_MS: '2000',
      WEBHOOK_MAX_BYTES: '4096',
      RETENTION_INTERVAL_MS: '50',
      NETBOX_TIMEOUT_MS: '1000',
      NETBOX_ENRICH_BUDGET_MS: '400000',
      RETRY_MAX_ATTEMPTS: '3',
      RETRY_BASE_MS: '50',
      RETRY_MAX_DELAY_MS: '100',
      WORKER_POLL_MS: '50',
      LEASE_MS: '600',
    };
    // Not even a value the relay once refused (a budget above the lease) stops it now.
    const config = loadConfig({ ...retired, NETBOX_URL: 'https://netbox.example.com', NETBOX_TOKEN: 'tok' }, { readFile: () => '' });
    expect(config.warnings.map((w) => w.variable).sort()).toEqual(Object.keys(retired).sort());
    expect(config.warnings.find((w) => w.variable === 'LEASE_MS')?.message).toContain('5 minutes');
    expect(config.warnings.find((w) => w.variable === 'WEBHOOK_MAX_BYTES')?.message).toContain('1 MiB');
    expect(config.webhook.maxBytes).toBe(1_048_576);
    expect(config.retention.intervalMs).toBe(3_600_000);
    expect(config.netbox).toMatchObject({ timeoutMs: 10_000, enrichBudgetMs: 30_000 });
    expect(config.retry).toEqual({ maxAttempts: 48, baseMs: 60_000, maxDelayMs: 3_600_000 });
    expect(config.worker).toMatchObject({ pollMs: 1_000, leaseMs: 300_000 });
  });

  // Each still set loads as before, with a warning that says what holds now (the number being the one in force).
  it.each([
    ['MAIL_MAX_FAILURES', '100', `at most ${MAX_FAILING_TESTS_LISTED} failing tests`],
    ['MAIL_CHART_REPORTS', '0', `the last ${CHART_REPORTS} reports (a route's chart: false leaves it out)`],
    ['MAIL_ATTACH_MAX_BYTES', '1000', `capped at ${CSV_ATTACHMENT_MAX_BYTES} bytes`],
    ['MAIL_REPLY_TO', 'noc@example.com', 'set reply_to on the route in ROUTES_FILE'],
    ['MAIL_ATTACH_CSV', 'true', 'set attach_csv: true on the route in ROUTES_FILE'],
    ['CATCH_UP_MAX', '5', 'at most 20 missed reports of a source'],
    ['WAIVER_MAX_DAYS', '30', 'at most 180 days after it is made'],
    ['DATABASE_POOL_SIZE', '4', `at most ${PG_POOL_SIZE} PostgreSQL connections`],
    ['LOG_FORMAT', 'json', 'pretty on a terminal and JSON otherwise'],
    [
      'NETBOX_TLS_REJECT_UNAUTHORIZED',
      'false',
      "NetBox's certificate is always verified; give a private CA or a self-signed certificate with NETBOX_CA_FILE (or a source's ca_file",
    ],
  ])('%s=%s still set: a warning naming what holds now', (name, value, holds) => {
    const config = loadConfig({ [name]: value }, { readFile: () => '' });
    expect(config.warnings).toEqual([{ variable: name, message: expect.stringContaining(`is no longer read: `) }]);
    expect(config.warnings[0].message).toContain(holds);
  });

  it.each([
    ['SMTP_CONNECTION_TIMEOUT_MS', '2000', '10 s'],
    ['SMTP_GREETING_TIMEOUT_MS', '2000', '10 s'],
    ['SMTP_SOCKET_TIMEOUT_MS', '2000', '60 s'],
    ['SMTP_CHECK_INTERVAL', '30s', 'every 5 minutes'],
  ])('%s=%s still set: warned, and the fixed value (%s) holds', (name, value, words) => {
    const config = loadConfig({ SMTP_URL: 'smtp://mail.example.com:587', MAIL_TO: 'a@b.c', [name]: value }, { readFile: () => '' });
    expect(config.warnings).toEqual([{ variable: name, message: expect.stringContaining(words) }]);
    expect(config.transport.settings).toMatchObject({ connectionTimeoutMs: 10_000, greetingTimeoutMs: 10_000, socketTimeoutMs: 60_000 });
  });

  it('nothing retired set: no warning', () => {
    expect(loadConfig({ PORT: '8081' }, { readFile: () => '' }).warnings).toEqual([]);
  });
});
