import fs from 'node:fs';
import path from 'node:path';
import { buildReportView } from '../../src/compose';
import { defaultTemplatesDir, loadRenderer } from '../../src/mail';
import { parseDelivery, type ReportDelivery } from '../../src/webhook';
import { hrefsOf, textOf } from '../helpers/html';
import { buildBody, buildReportData } from '../helpers/netbox-json';

const GOLDEN_DIR = path.join(__dirname, '../fixtures/golden');
const renderer = loadRenderer(defaultTemplatesDir());

function delivery(body: Buffer): ReportDelivery {
  const d = parseDelivery(body);
  if (d.kind !== 'report') throw new Error('not a report');
  return d;
}

/** Compares with test/fixtures/golden/<name>; UPDATE_GOLDEN=1 rewrites the file (review the diff). */
function expectGolden(name: string, actual: string): void {
  const file = path.join(GOLDEN_DIR, name);
  if (process.env.UPDATE_GOLDEN === '1') {
    fs.mkdirSync(GOLDEN_DIR, { recursive: true });
    fs.writeFileSync(file, actual);
  }
  expect(actual).toBe(fs.readFileSync(file, 'utf8'));
}

const examples = path.join(__dirname, '../../examples');

describe('the default templates', () => {
  it('render the 4.6 example with absolute links in the configured time zone (golden)', () => {
    const d = delivery(fs.readFileSync(path.join(examples, 'delivery-netbox-4.6.json')));
    const out = renderer.render(
      buildReportView(d, { netboxUrl: 'https://netbox.example.com', mail: { from: 'relay@example.com', timezone: 'Europe/Berlin' } }),
    );
    // The figures and the HIGH count first, then the report and the instance (NETBOX_URL's host).
    expect(out.subject).toBe('88.0% passed, 7 HIGH failing \u2014 report 142 \u00b7 netbox.example.com');
    expectGolden('report-142.txt', out.text);
    expectGolden('report-142.html', out.html);
    expect(out.text).toContain('Completed 2026-03-06 16:11:23 CET, run by jdoe');
  });

  it('render the validity docs sample with NetBox paths as text and say how to make them links (golden)', () => {
    const d = delivery(fs.readFileSync(path.join(examples, 'delivery-netbox-3.6.json')));
    const out = renderer.render(buildReportView(d, { mail: { from: 'relay@example.com', timezone: 'UTC' } }));
    expect(out.subject).toBe('62.5% passed, 3 failing, no HIGH \u2014 report 29');
    expectGolden('report-29-relative.txt', out.text);
    expectGolden('report-29-relative.html', out.html);
    expect(out.text.match(/NETBOX_URL/g)).toHaveLength(1);
    // Without NETBOX_URL the paths are shown as text, never as links a mail client resolves somewhere (issue 14).
    expect(hrefsOf(out.html)).toEqual([]);
    expect(textOf(out.html)).toContain('Report: /plugins/validity/reports/29/');
  });

  it('show "—" for severities without results and never NaN or undefined', () => {
    const d = delivery(buildBody({ data: buildReportData({ total_passed: 0, total_count: 0, middle_passed: 0, middle_count: 0 }) }));
    const out = renderer.render(buildReportView(d, { mail: { from: 'relay@example.com', timezone: 'UTC' } }));
    for (const part of [out.subject, out.text, textOf(out.html)]) {
      expect(part).not.toMatch(/NaN|Infinity|undefined|null/);
    }
    expect(out.subject).toBe('No results \u2014 report 29');
    expect(out.text).toMatch(/HIGH\s+\u2014\s+\u2014/);
  });

  // Issue 17: the banner says the worst failing severity, or that nothing failed, and never claims a pass it cannot see.
  it.each([
    [
      'a report without results',
      { total_passed: 0, total_count: 0, middle_passed: 0, middle_count: 0 },
      'This report has no test results.',
    ],
    ['a report where every result passed', { total_passed: 8, middle_passed: 8 }, 'Every test passed.'],
    ['failures of MIDDLE only', {}, '3 MIDDLE-severity results failed.'],
    ['failures counted in no severity', { middle_passed: 8 }, '3 results failed.'],
  ])('put the banner first for %s, the same in HTML and text', (_, counts, banner) => {
    const d = delivery(buildBody({ data: buildReportData(counts) }));
    const out = renderer.render(buildReportView(d, { mail: { from: 'relay@example.com', timezone: 'UTC' } }));
    expect(out.text.split('\n')[1]).toMatch(new RegExp(`^(!! )?${banner.replace(/[.]/g, '\\.')}$`));
    expect(textOf(out.html)).toContain(banner);
  });

  it("keep NetBox's base path in every link", () => {
    const d = delivery(buildBody({ data: buildReportData({ id: 5, basePath: '/netbox' }) }));
    const out = renderer.render(
      buildReportView(d, { netboxUrl: 'https://nb.example.com/netbox/', mail: { from: 'relay@example.com', timezone: 'UTC' } }),
    );
    expect(hrefsOf(out.html)).toEqual(
      expect.arrayContaining([
        'https://nb.example.com/netbox/plugins/validity/reports/5/',
        'https://nb.example.com/netbox/plugins/validity/test-results/?report_id=5',
        'https://nb.example.com/netbox/api/plugins/validity/test-results/?report_id=5',
      ]),
    );
    expect(hrefsOf(out.html).every((h) => !h.includes('/netbox/netbox/'))).toBe(true);
  });

  it('escape HTML from report fields in the HTML part but not in the text part', () => {
    const data = { ...buildReportData(), display: '<script>alert(1)</script>' };
    const d = delivery(buildBody({ data, username: '<b>mallory</b>' }));
    const out = renderer.render(buildReportView(d, { mail: { from: 'relay@example.com', timezone: 'UTC' } }));
    expect(out.html).not.toContain('<script>alert(1)</script>');
    expect(out.html).not.toContain('<b>mallory</b>');
    expect(textOf(out.html)).toContain('<script>alert(1)</script>');
    expect(out.text).toContain('<script>alert(1)</script>');
  });

  it('inline the CSS (mail clients drop <style>) but keep the dark-mode media query', () => {
    const d = delivery(fs.readFileSync(path.join(examples, 'delivery-netbox-4.6.json')));
    const out = renderer.render(buildReportView(d, { mail: { from: 'relay@example.com', timezone: 'UTC' } }));
    // 7 HIGH results failed: every bar of a failing line is painted in its severity's colour, Overall in HIGH's.
    expect(out.html).toMatch(/<td class="bar-fill tone-fill-high"[^>]*style="[^"]*background: #b91c1c/);
    expect(out.html).toContain('prefers-color-scheme: dark');
    expect(out.html).not.toMatch(/(src|href)="https?:\/\/(?!netbox)/);
  });
});

describe('a broken user template', () => {
  it('fails at load with the file and line', () => {
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'tpl-'));
    fs.cpSync(defaultTemplatesDir(), dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'report/text.hbs'), 'line one\n{{#if overall}}\nunclosed\n');
    expect(() => loadRenderer(dir)).toThrow(/text\.hbs.*line \d+/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('that names a missing variable fails on the first render (strict mode), not silently', () => {
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'tpl-'));
    fs.cpSync(defaultTemplatesDir(), dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'report/subject.hbs'), 'Report {{report.nmae}}');
    const r = loadRenderer(dir);
    const d = delivery(buildBody());
    expect(() => r.render(buildReportView(d, { mail: { from: 'relay@example.com', timezone: 'UTC' } }))).toThrow(/subject\.hbs.*nmae/);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('whose HTML calls a partial as a block still escapes it after the text part rendered the same partial', () => {
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'tpl-'));
    fs.mkdirSync(path.join(dir, 'report'));
    fs.mkdirSync(path.join(dir, 'partials'));
    fs.writeFileSync(path.join(dir, 'report/subject.hbs'), 'S');
    fs.writeFileSync(path.join(dir, 'report/html.hbs'), '<p>{{#> probe}}{{/probe}}</p>');
    fs.writeFileSync(path.join(dir, 'report/text.hbs'), '{{> probe}}');
    fs.writeFileSync(path.join(dir, 'partials/probe.hbs'), '{{value}}');
    const r = loadRenderer(dir);
    for (let i = 0; i < 2; i++) expect(r.render({ value: '<b>x</b>' }).html).toContain('&lt;b&gt;x&lt;/b&gt;');
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
