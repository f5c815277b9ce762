import fs from 'node:fs';
import path from 'node:path';
import { describeSettings, loadConfig, renderEnvExample, replaceSettingsReference } from '../../src/config';

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

  it('lists at most 30 basics, first, and the advanced group last', () => {
    const groups = describeSettings().map((s) => s.group);
    const basics = groups.filter((g) => g === 'basics').length;
    expect(basics).toBeGreaterThan(0);
    expect(basics).toBeLessThanOrEqual(30);
    expect(groups.slice(0, basics).every((g) => g === 'basics')).toBe(true);
    expect(groups.indexOf('advanced')).toBe(groups.length - groups.filter((g) => g === 'advanced').length);
  });

  it('names the unit of every timing: _MS, or a duration written with its unit', () => {
    const timings = describeSettings().filter((s) => /TIMEOUT|DELAY|BUDGET|WINDOW|INTERVAL|POLL|LEASE|EVERY/.test(s.name));
    expect(timings.length).toBeGreaterThan(10);
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
    expect(config.worker.pauseAfter4xx).toBe(3);
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
    expect(config.observe.smtpCheckIntervalMs).toBe(300_000);
  });

  it('nothing retired set: no warning', () => {
    expect(loadConfig({ PORT: '8081' }, { readFile: () => '' }).warnings).toEqual([]);
  });
});
