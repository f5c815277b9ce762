import fs from 'node:fs';
import path from 'node:path';
import { sampleInsightViews, type ReportView } from '../../src/compose';
import { buildInlinedCssFile, INLINED_CSS_FILE, loadRenderer } from '../../src/mail';
import { defaultTemplatesDir } from '../../src/relay';
import { readBuildOutput } from '../helpers/build-output';
import { makeTempDir } from '../helpers/relay-harness';

/**
 * The shipped templates carry their CSS-inlined HTML, computed ahead by `npm run build`, so that neither `serve` nor
 * `check-config` loads juice for them (issue 16). These check it is the same as juice's output, is
 * used only for the sources it was computed from, and gives the same mails.
 */
let enriched: ReportView;
beforeAll(async () => {
  [enriched] = await sampleInsightViews({
    mail: { from: 'relay@example.com', timezone: 'UTC' },
    netbox: { url: 'https://netbox.example.com' },
  });
});

/** A copy of the shipped templates (with their inlined-CSS file) in a fresh directory. */
function copyShippedTemplates(): string {
  const dir = makeTempDir('inlined-css-');
  fs.cpSync(defaultTemplatesDir(), dir, { recursive: true });
  return dir;
}

describe('the inlined-CSS file of the shipped templates', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
  const copy = () => {
    const dir = copyShippedTemplates();
    dirs.push(dir);
    return dir;
  };

  it('is what juice makes from the template sources now (`npm run build` writes it)', () => {
    const shipped = readBuildOutput(path.join(defaultTemplatesDir(), INLINED_CSS_FILE));
    expect(shipped).toBe(buildInlinedCssFile(defaultTemplatesDir()));
  });

  it('gives the same mail as inlining at load', () => {
    const withoutFile = copy();
    fs.rmSync(path.join(withoutFile, INLINED_CSS_FILE));
    expect(loadRenderer(defaultTemplatesDir()).render(enriched)).toEqual(loadRenderer(withoutFile).render(enriched));
  });

  it('is not used for an HTML template changed since: the change is rendered, with its CSS inlined', () => {
    const dir = copy();
    const htmlFile = path.join(dir, 'report', 'html.hbs');
    const html = fs
      .readFileSync(htmlFile, 'utf8')
      .replace('<style>', '<style>.site-note { color: #123456; }')
      .replace('</body>', '<p class="site-note">Operated by the network team</p></body>');
    fs.writeFileSync(htmlFile, html);
    expect(loadRenderer(dir).render(enriched).html).toContain(
      '<p class="site-note" style="color: #123456;">Operated by the network team</p>',
    );
  });

  it('is not used when a partial changed since: the partial renders as changed', () => {
    const dir = copy();
    const partial = path.join(dir, 'partials', 'headline-html.hbs');
    fs.writeFileSync(partial, `<p class="changed-headline">Changed headline</p>\n${fs.readFileSync(partial, 'utf8')}`);
    expect(loadRenderer(dir).render(enriched).html).toContain('Changed headline');
    expect(loadRenderer(defaultTemplatesDir()).render(enriched).html).not.toContain('Changed headline');
  });

  it('is ignored when unreadable or of another format: the templates still load and inline their CSS', () => {
    const dir = copy();
    const expected = loadRenderer(dir).render(enriched);
    fs.writeFileSync(path.join(dir, INLINED_CSS_FILE), '{"format": 0, "sets": {}}');
    expect(loadRenderer(dir).render(enriched)).toEqual(expected);
    fs.writeFileSync(path.join(dir, INLINED_CSS_FILE), 'not json');
    expect(loadRenderer(dir).render(enriched)).toEqual(expected);
  });
});
