import fs from 'node:fs';
import path from 'node:path';
import { sampleInsightViews, type ReportView } from '../../src/compose';
import { defaultTemplatesDir, loadRenderer, TemplateError } from '../../src/mail';
import { makeTempDir } from '../helpers/relay-harness';

/**
 * The CSS of a template set is inlined once, when the templates load (issue 16): these check what a
 * reader of the mail would see, for the shipped templates and for a user's own set.
 */

/** Writes a template set `report` (and partials) into a fresh directory and returns the directory. */
function writeTemplates(files: Record<string, string>): string {
  const dir = makeTempDir('template-css-');
  const all = { 'report/subject.hbs': 'Report {{title}}', 'report/text.hbs': '{{title}}', ...files };
  for (const [name, content] of Object.entries(all)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  return dir;
}

/** The content of the mail's `<style>` blocks (what clients that honour `<style>` apply). */
function styleBlockOf(html: string): string {
  return [...html.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/g)].map((m) => m[1]).join('\n');
}

const page = (style: string, body: string) => `<!DOCTYPE html><html><head><style>${style}</style></head><body>${body}</body></html>`;

describe('a user template set', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
  const load = (files: Record<string, string>) => {
    const dir = writeTemplates(files);
    dirs.push(dir);
    return loadRenderer(dir);
  };

  it('gets its CSS inline, in partials too, as the calling page styles them', () => {
    const renderer = load({
      'report/html.hbs': page(
        '.lead { font-weight: bold; } .rows td { padding: 3px; } .other td { color: #ff0000; } @media (prefers-color-scheme: dark) { .lead { color: #ffffff !important; } }',
        '<p class="lead">{{title}}</p><table class="rows">{{> cell}}</table><table class="other">{{> cell}}</table>',
      ),
      'partials/cell.hbs': '<tr><td>{{title}}</td></tr>',
    });
    const { html } = renderer.render({ title: 'Weekly' });
    expect(html).toContain('<p class="lead" style="font-weight: bold;">Weekly</p>');
    // The same partial, styled by each table it is called in.
    expect(html).toContain('<table class="rows"><tr><td style="padding: 3px;">Weekly</td></tr></table>');
    expect(html).toContain('<table class="other"><tr><td style="color: #ff0000;">Weekly</td></tr></table>');
    // Inlined rules leave <style>; the dark-mode media query stays there.
    expect(styleBlockOf(html)).toContain('prefers-color-scheme: dark');
    expect(styleBlockOf(html)).not.toMatch(/\.rows td|\.other td|font-weight/);
  });

  it('keeps in <style> the rules for classes chosen from data, which no element matched at load', () => {
    const renderer = load({
      'report/html.hbs': page(
        '.band-green { background: #00ff00; } .name { color: #333333; }',
        '<p class="name band-{{band}}">{{title}}</p>',
      ),
    });
    const { html } = renderer.render({ title: 'Weekly', band: 'green' });
    expect(html).toMatch(/<p class="name band-green" style="color: #333333;">Weekly<\/p>/);
    expect(styleBlockOf(html)).toMatch(/\.band-green\s*\{\s*background: #00ff00;/);
    expect(styleBlockOf(html)).not.toContain('.name');
  });

  it('leaves the text part and its partials as written (no HTML processing)', () => {
    const renderer = load({
      'report/html.hbs': page('p { margin: 0; }', '<p>{{> note}}</p>'),
      'report/text.hbs': '{{> note}}',
      'partials/note.hbs': 'a < b && "c" {{title}}',
    });
    expect(renderer.render({ title: 'Weekly' }).text).toBe('a < b && "c" Weekly\n');
  });

  it('links an <a> written in {{#link}} only to an http(s) URL, keeping its inlined style', () => {
    const renderer = load({
      'report/html.hbs': page('.go { color: #1d4ed8; }', '<p>{{#link url}}<a class="go">Open {{title}}</a>{{/link}}</p>'),
    });
    expect(renderer.render({ title: 'it', url: 'https://nb.example.com/r/?a=1&b=2' }).html).toContain(
      '<p><a class="go" href="https://nb.example.com/r/?a&#x3D;1&amp;b&#x3D;2" style="color: #1d4ed8;">Open it</a></p>',
    );
    // A NetBox path without NETBOX_URL, or another scheme: the text only.
    for (const url of ['/plugins/validity/reports/1/', 'javascript:alert(1)']) {
      expect(renderer.render({ title: 'it', url }).html).toContain('<p>Open it</p>');
    }
  });

  it('still renders the older {{#link url class="…"}} form, its class styled from <style>', () => {
    const renderer = load({
      'report/html.hbs': page('.button { color: #ffffff; }', '<p>{{#link url class="button"}}Open{{/link}}</p>'),
    });
    const { html } = renderer.render({ title: 'x', url: 'https://nb.example.com/r/' });
    expect(html).toContain('<p><a class="button" href="https://nb.example.com/r/">Open</a></p>');
    expect(styleBlockOf(html)).toMatch(/\.button\s*\{\s*color: #ffffff;/);
  });

  it('fails with the template file when an <a> in {{#link}} brings its own href', () => {
    const renderer = load({
      'report/html.hbs': page('a { color: red; }', '{{#link url}}<a href="https://elsewhere.example/">x</a>{{/link}}'),
    });
    const view = { title: 'x', url: 'https://nb.example.com/' };
    expect(() => renderer.render(view)).toThrow(TemplateError);
    expect(() => renderer.render(view)).toThrow(/html\.hbs.*href/);
  });
});

describe('the shipped templates', () => {
  const renderer = loadRenderer(defaultTemplatesDir());
  let enriched: ReportView;
  beforeAll(async () => {
    [enriched] = await sampleInsightViews({
      mail: { from: 'relay@example.com', timezone: 'UTC' },
      netbox: { url: 'https://netbox.example.com' },
    });
  });

  it('choose no class from data, so that every class can be inlined at load', () => {
    const files = [
      'report/html.hbs',
      ...fs
        .readdirSync(path.join(defaultTemplatesDir(), 'partials'))
        .filter((f) => f.endsWith('-html.hbs') || f === 'ratio-row.hbs')
        .map((f) => `partials/${f}`),
    ];
    for (const file of files) {
      expect({ file, dynamic: fs.readFileSync(path.join(defaultTemplatesDir(), file), 'utf8').match(/class="[^"]*\{\{[^"]*"/g) }).toEqual({
        file,
        dynamic: null,
      });
    }
  });

  // Issue 17: the bars and percentages are coloured on the banner's scale (the worst failing severity), not by pass band.
  it.each(['high', 'middle', 'low', 'ok', 'none'] as const)('colour the %s tone inline, on the percentage and on the bar', (tone) => {
    const view: ReportView = structuredClone(enriched);
    view.overall = { ...view.overall, tone, hasResults: tone !== 'none', barWidth: tone === 'none' ? 0 : 40 };
    const { html } = renderer.render(view);
    expect(html).toMatch(new RegExp(`<td class="ratio-pct tone-text-${tone}"[^>]*style="[^"]*color: #[0-9a-f]{6}`));
    if (tone !== 'none')
      expect(html).toMatch(new RegExp(`<td class="bar-fill tone-fill-${tone}"[^>]*style="[^"]*background: #[0-9a-f]{6}`));
  });

  it.each(['high', 'middle', 'low', 'ok', 'none'] as const)('paint the %s banner inline, its colour and its border', (tone) => {
    const view: ReportView = structuredClone(enriched);
    view.tone = tone;
    view.worst = { severity: 'MIDDLE', failed: 3, tone, otherFailed: 0 };
    expect(renderer.render(view).html).toMatch(
      new RegExp(
        `<p class="banner banner-${tone}" style="[^"]*border-left: 4px solid #[0-9a-f]{6}[^"]*background: #[0-9a-f]{6}[^"]*color: #[0-9a-f]{6}`,
      ),
    );
  });

  it.each(['better', 'worse', 'mixed', 'same', 'first'] as const)('colour a %s verdict inline', (direction) => {
    const view: ReportView = structuredClone(enriched);
    view.verdict = { direction, word: 'x', scopeChanged: false, scopeText: null, previousReportId: 28, text: 'x' };
    expect(renderer.render(view).html).toMatch(new RegExp(`<p class="verdict verdict-${direction}" style="[^"]*color: #[0-9a-f]{6}`));
  });

  // Outlook for Windows renders with Word's engine: layout by tables only (issue 17).
  it('lay the mail out with tables, never flex or grid, in the rendered HTML', () => {
    const html = renderer.render(enriched).html;
    expect(html).not.toMatch(/display:\s*(inline-)?(flex|grid)/);
    expect(html).not.toMatch(/\bgrid-template|\bflex(-direction|-wrap)?:/);
    expect(html.match(/<table role="presentation"/g)?.length).toBeGreaterThan(5);
  });

  it('let a long device name of a grouped list wrap at its dots and hyphens (no nowrap or ellipsis, which Outlook ignores)', () => {
    const html = renderer.render(enriched).html;
    const devices = html.match(/<div class="device"[^>]*>.*?<\/div>/g) ?? [];
    expect(devices.length).toBeGreaterThan(0);
    for (const d of devices) expect(d).not.toMatch(/white-space|overflow/);
    expect(devices.some((d) => /[.-]<wbr>/.test(d))).toBe(true);
  });

  it.each(['better', 'worse', 'same'] as const)('colour a %s trend inline', (direction) => {
    const view: ReportView = structuredClone(enriched);
    view.trend!.overall!.direction = direction;
    expect(renderer.render(view).html).toMatch(new RegExp(`<td class="trend-${direction}" style="[^"]*color: #[0-9a-f]{6}`));
  });

  it.each(['HIGH', 'MIDDLE', 'LOW'] as const)('colour the %s failures heading inline', (severity) => {
    const view: ReportView = structuredClone(enriched);
    const enrichment = view.enrichment as { groups: Array<{ severity: string }> };
    enrichment.groups = [{ ...enrichment.groups[0], severity }];
    expect(renderer.render(view).html).toMatch(
      new RegExp(`<h3 class="severity severity-${severity.toLowerCase()}" style="[^"]*color: #[0-9a-f]{6}`),
    );
  });
});
