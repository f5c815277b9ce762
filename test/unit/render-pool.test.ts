import fs from 'node:fs';
import path from 'node:path';
import { buildReportView } from '../../src/compose';
import { createRenderPool, loadRenderer, TemplateError, type RenderPool } from '../../src/mail';
import { defaultTemplatesDir } from '../../src/relay';
import { findPackageRoot } from '../../src/shared';
import { parseDelivery } from '../../src/webhook';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir } from '../helpers/relay-harness';

// The compiled thread script (npm test builds first); under jest the sources are TypeScript.
const script = path.join(findPackageRoot(), 'dist', 'src', 'mail', 'render-thread.js');

function viewFor(fields: Parameters<typeof buildReportData>[0]) {
  const parsed = parseDelivery(buildBody({ version: '4.6', data: buildReportData(fields) }));
  if (parsed.kind !== 'report') throw new Error('not a report');
  return buildReportView(parsed, { netboxUrl: 'https://netbox.example.com/base', timezone: 'Europe/Berlin' });
}

describe('render pool (rendering off the event loop)', () => {
  let pool: RenderPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('renders exactly what the renderer renders, for every band and for a report with no results', async () => {
    const renderer = loadRenderer(defaultTemplatesDir());
    pool = createRenderPool(renderer, { threads: 2, script });
    expect(pool?.threads).toBe(2);
    const views = [
      viewFor({ id: 1 }),
      viewFor({ id: 2, total_passed: 8, total_count: 8, middle_passed: 8 }),
      viewFor({ id: 3, high_passed: 1, high_count: 9, total_passed: 6, total_count: 17 }),
      viewFor({ id: 4, total_passed: 0, total_count: 0, middle_passed: 0, middle_count: 0, custom_fields: { owner: '<b>ops & co</b>' } }),
    ];
    const fromPool = await Promise.all(views.map((v) => pool!.render(v)));
    expect(fromPool).toEqual(views.map((v) => renderer.render(v)));
  });

  it('throws the same TemplateError as the renderer when a template fails for a view', async () => {
    const dir = makeTempDir('render-pool-');
    try {
      fs.cpSync(defaultTemplatesDir(), dir, { recursive: true });
      // Strict mode: a variable the view lacks fails at render time, not at load time.
      fs.appendFileSync(path.join(dir, 'report', 'text.hbs'), '{{#if highFailed}}{{noSuchVariable}}{{/if}}\n');
      const renderer = loadRenderer(dir);
      pool = createRenderPool(renderer, { threads: 1, script });
      const ok = viewFor({ id: 5, high_count: 0 });
      const bad = viewFor({ id: 6, high_passed: 1, high_count: 2, total_passed: 6, total_count: 10 });
      expect(await pool!.render(ok)).toEqual(renderer.render(ok));
      const expected = (() => {
        try {
          renderer.render(bad);
        } catch (error) {
          return error as TemplateError;
        }
        throw new Error('the broken template rendered');
      })();
      const thrown = await pool!.render(bad).catch((error: unknown) => error);
      expect(thrown).toBeInstanceOf(TemplateError);
      expect((thrown as TemplateError).message).toBe(expected.message);
      expect((thrown as TemplateError).file).toBe(path.join(dir, 'report', 'text.hbs'));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps rendering (on the calling thread) after it was closed', async () => {
    const renderer = loadRenderer(defaultTemplatesDir());
    const closing = createRenderPool(renderer, { threads: 1, script })!;
    await closing.close();
    const view = viewFor({ id: 7 });
    expect(await closing.render(view)).toEqual(renderer.render(view));
  });

  it('is not created when the thread script is not built, so callers render in-line', () => {
    expect(createRenderPool(loadRenderer(defaultTemplatesDir()), { script: path.join(makeTempDir('no-script-'), 'missing.js') })).toBeUndefined();
  });
});
