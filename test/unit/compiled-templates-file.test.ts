import fs from 'node:fs';
import path from 'node:path';
import Handlebars from 'handlebars';
import { buildDigestView, DIGEST_TEMPLATE_SET, sampleDigestContents, sampleInsightViews, type ReportView } from '../../src/compose';
import { defaultTemplatesDir, buildCompiledTemplatesFile, COMPILED_TEMPLATES_FILE, loadRenderer, type Renderer } from '../../src/mail';
import { readBuildOutput } from '../helpers/build-output';
import { makeTempDir } from '../helpers/relay-harness';

/**
 * The shipped templates are computed ahead (templates/compiled-templates.json, written by `npm run build`): their HTML
 * with its CSS inlined and every template compiled, so that neither `serve` nor `check-config` loads juice or runs
 * Handlebars' compiler for them (issue 16). These check the file is what juice and Handlebars make from the sources
 * now, gives the same mails, is used only for the sources it was computed from, and that its compiled templates are
 * read from the package only, never from a templates folder of the user's.
 */
const config = { mail: { timezone: 'UTC' } as never, netbox: { url: 'https://netbox.example.com' } as never };
const reportViews: ReportView[] = [];
beforeAll(async () => void reportViews.push(...(await sampleInsightViews(config))));
const digestViews = sampleDigestContents('UTC').map(buildDigestView);
let enriched: ReportView;
beforeAll(async () => {
  [enriched] = await sampleInsightViews({
    mail: { from: 'relay@example.com', timezone: 'UTC' },
    netbox: { url: 'https://netbox.example.com' },
  });
});

/** Every mail the sample views give with each set, and with a route's own subject. */
function renderAll(renderer: Renderer): unknown[] {
  return [
    ...reportViews.map((view) => renderer.render({ ...view, route: { name: 'sample', reminder: false, reason: 'sample' } })),
    ...reportViews.map((view) =>
      renderer.render({ ...view, route: { name: 'r', reminder: false, reason: 'sample' } }, 'report', {
        subject: 'Route r: {{defaultSubject}}',
      }),
    ),
    ...digestViews.map((view) => renderer.render(view, DIGEST_TEMPLATE_SET)),
  ];
}

describe('the compiled-templates file of the shipped templates', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));
  /** A copy of the shipped templates (with their file computed ahead) in a fresh directory. */
  const copy = () => {
    const dir = makeTempDir('compiled-templates-');
    fs.cpSync(defaultTemplatesDir(), dir, { recursive: true });
    dirs.push(dir);
    return dir;
  };

  it('is what juice and Handlebars make from the template sources now (`npm run build` writes it)', () => {
    const shipped = readBuildOutput(path.join(defaultTemplatesDir(), COMPILED_TEMPLATES_FILE));
    expect(shipped).toBe(buildCompiledTemplatesFile(defaultTemplatesDir()));
  });

  it('gives the same mails as inlining and compiling at load', () => {
    const mails = renderAll(loadRenderer(defaultTemplatesDir()));
    expect(mails).toEqual(renderAll(loadRenderer(defaultTemplatesDir(), { compiledAhead: false })));
    expect(mails).toHaveLength(2 * reportViews.length + digestViews.length);
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

  it('is not used when an HTML partial changed since: the partial renders as changed', () => {
    const dir = copy();
    const partial = path.join(dir, 'partials', 'headline-html.hbs');
    fs.writeFileSync(partial, `<p class="changed-headline">Changed headline</p>\n${fs.readFileSync(partial, 'utf8')}`);
    expect(loadRenderer(dir).render(enriched).html).toContain('Changed headline');
    expect(loadRenderer(defaultTemplatesDir()).render(enriched).html).not.toContain('Changed headline');
  });

  it("gives a templates folder's changed HTML from the folder's own file, inlined ahead", () => {
    const dir = copy();
    const htmlFile = path.join(dir, 'report', 'html.hbs');
    fs.writeFileSync(htmlFile, fs.readFileSync(htmlFile, 'utf8').replace('</body>', '<p>Operated by the network team</p></body>'));
    fs.writeFileSync(path.join(dir, COMPILED_TEMPLATES_FILE), buildCompiledTemplatesFile(dir));
    const own = JSON.parse(fs.readFileSync(path.join(dir, COMPILED_TEMPLATES_FILE), 'utf8')) as {
      inlined: Record<string, { html: string }>;
    };
    for (const set of Object.values(own.inlined)) set.html = set.html.replace('Operated by the network team', 'Inlined ahead');
    fs.writeFileSync(path.join(dir, COMPILED_TEMPLATES_FILE), JSON.stringify(own));
    expect(loadRenderer(dir).render(enriched).html).toContain('<p>Inlined ahead</p>');
  });

  it('is ignored when unreadable or of another format: the templates still load and inline their CSS', () => {
    const dir = copy();
    const expected = loadRenderer(dir).render(enriched);
    fs.writeFileSync(path.join(dir, COMPILED_TEMPLATES_FILE), '{"format": 0, "inlined": {}, "specs": {}}');
    expect(loadRenderer(dir).render(enriched)).toEqual(expected);
    fs.writeFileSync(path.join(dir, COMPILED_TEMPLATES_FILE), 'not json');
    expect(loadRenderer(dir).render(enriched)).toEqual(expected);
  });

  it('is not used for a template or partial changed since: the change is rendered', () => {
    const dir = copy();
    fs.appendFileSync(path.join(dir, 'report', 'text.hbs'), '\nSent by the network team\n');
    const partial = path.join(dir, 'partials', 'worst-text.hbs');
    fs.writeFileSync(partial, `Changed partial\n${fs.readFileSync(partial, 'utf8')}`);
    const { text } = loadRenderer(dir).render({ ...reportViews[0], route: { name: 'sample', reminder: false, reason: 'sample' } });
    expect(text).toContain('Sent by the network team');
    expect(
      loadRenderer(defaultTemplatesDir()).render({ ...reportViews[0], route: { name: 'sample', reminder: false, reason: 'sample' } }).text,
    ).not.toContain('Sent by the network team');
    expect(renderAll(loadRenderer(dir)).some((mail) => (mail as { text: string }).text.includes('Changed partial'))).toBe(true);
  });

  it('is read from the package only: a file in the templates folder, even with the keys of its sources, is not evaluated', () => {
    const dir = copy();
    const shipped = JSON.parse(fs.readFileSync(path.join(dir, COMPILED_TEMPLATES_FILE), 'utf8')) as { specs: Record<string, string> };
    const tampered = Handlebars.precompile('TAMPERED', { strict: true }) as unknown as string;
    for (const key of Object.keys(shipped.specs)) shipped.specs[key] = tampered;
    fs.writeFileSync(path.join(dir, COMPILED_TEMPLATES_FILE), JSON.stringify(shipped));
    expect(renderAll(loadRenderer(dir))).toEqual(renderAll(loadRenderer(defaultTemplatesDir())));
  });

  it('still reports a broken partial by its file at load', () => {
    const dir = copy();
    fs.writeFileSync(path.join(dir, 'partials', 'worst-text.hbs'), 'line one\n{{#if report}}\nunclosed\n');
    expect(() => loadRenderer(dir)).toThrow(/worst-text\.hbs.*line \d+/);
  });
});
