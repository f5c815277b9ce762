import fs from 'node:fs';
import path from 'node:path';
import Handlebars from 'handlebars';
import {
  buildDigestView,
  DIGEST_TEMPLATE_SET,
  sampleDeliveryView,
  sampleDigestContents,
  sampleInsightViews,
  type ReportView,
} from '../../src/compose';
import { buildCompiledTemplatesFile, COMPILED_TEMPLATES_FILE, loadRenderer, type Renderer } from '../../src/mail';
import { defaultTemplatesDir } from '../../src/relay';
import { readBuildOutput } from '../helpers/build-output';
import { makeTempDir } from '../helpers/relay-harness';

/**
 * The shipped templates are compiled ahead (templates/compiled-templates.json, written by `npm run build`), so that neither
 * `serve` nor `check-config` runs Handlebars' compiler for them (issue 16). These check the file is
 * what Handlebars makes from the sources now, gives the same mails, is used only for the sources it
 * was compiled from, and is read from the package only, never from a templates folder of the user's.
 */
const config = { mail: { timezone: 'UTC' } as never, netbox: { url: 'https://netbox.example.com' } as never };
const reportViews: ReportView[] = [sampleDeliveryView(config)];
beforeAll(async () => void reportViews.push(...(await sampleInsightViews(config))));
const digestViews = sampleDigestContents('UTC').map(buildDigestView);

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
  /** A copy of the shipped templates (with both files computed ahead) in a fresh directory. */
  const copy = () => {
    const dir = makeTempDir('compiled-templates-');
    fs.cpSync(defaultTemplatesDir(), dir, { recursive: true });
    dirs.push(dir);
    return dir;
  };

  it('is what Handlebars makes from the template sources now (`npm run build` writes it)', () => {
    const shipped = readBuildOutput(path.join(defaultTemplatesDir(), COMPILED_TEMPLATES_FILE));
    expect(shipped).toBe(buildCompiledTemplatesFile(defaultTemplatesDir()));
  });

  it('gives the same mails as compiling at load', () => {
    const mails = renderAll(loadRenderer(defaultTemplatesDir()));
    expect(mails).toEqual(renderAll(loadRenderer(defaultTemplatesDir(), { compiledAhead: false })));
    expect(mails).toHaveLength(2 * reportViews.length + digestViews.length);
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
