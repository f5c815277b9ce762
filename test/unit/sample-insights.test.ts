import fs from 'node:fs';
import path from 'node:path';
import { defaultTemplatesDir, loadRenderer, TemplateError } from '../../src/mail';
import { readSampleBody, sampleInsightViews, verifyRouteTemplates } from '../../src/compose';
import { makeTempDir } from '../helpers/relay-harness';
import { parseRoutesFile, type Route } from '../../src/routing';

const config = { mail: { timezone: 'UTC' }, netbox: { url: 'https://netbox.example.com' } } as Parameters<typeof sampleInsightViews>[0];

describe('the boot check renders the enrichment and trend sections', () => {
  it('renders the shipped templates with failures, a trend, and a missing-details line', async () => {
    const renderer = loadRenderer(defaultTemplatesDir());
    const [enriched, degraded] = (await sampleInsightViews(config)).map((view) => renderer.render(view));
    expect(enriched.text).toContain('WHAT FAILED: 4 failing results in 2 tests');
    expect(enriched.text).toContain('Newly failing: [MIDDLE] ntp-servers (1 device)\n');
    expect(enriched.text).toContain('Fixed since report 28:\n  - [MIDDLE] ntp-servers: sw-edge-2\n');
    expect(enriched.text).toContain('failing since report 27');
    expect(enriched.text).toContain(
      'The attached report-29-failures.csv lists the first 2 of 4 failing results: it is capped at 300 bytes.',
    );
    expect(degraded.text).toContain('Failing tests are not listed: NetBox could not be reached (ECONNREFUSED).');
    expect(degraded.text).toContain('there is nothing to compare with yet');
  });

  it('fails on a custom template whose failures section names a field that does not exist', async () => {
    const dir = makeTempDir('templates-');
    try {
      fs.cpSync(defaultTemplatesDir(), dir, { recursive: true });
      const partial = path.join(dir, 'partials', 'failures-text.hbs');
      fs.writeFileSync(partial, fs.readFileSync(partial, 'utf8').replace('{{failingDevices}} {{plural', '{{failingDevicez}} {{plural'));
      const renderer = loadRenderer(dir);
      const views = await sampleInsightViews(config);
      expect(() => views.forEach((view) => renderer.render(view))).toThrow(TemplateError);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("renders an owner group's mail: with its own counts, without them, and the fallback's whole report", async () => {
    const renderer = loadRenderer(defaultTemplatesDir());
    const texts = (await sampleInsightViews(config)).map((view) => renderer.render(view).text);
    expect(texts.some((t) => t.includes('Why you: primary contact of site fra1.'))).toBe(true);
    expect(texts.some((t) => t.includes('These figures are for your 3 devices only: sw-core-1, sw-core-2.'))).toBe(true);
    expect(texts.some((t) => t.includes("Your devices' counts are unavailable"))).toBe(true);
    expect(texts.some((t) => t.includes('NetBox could not say who owns what: this is the whole report.'))).toBe(true);
  });
});

describe("the boot check reaches a catch-up's report and a reminder", () => {
  const broken = async (file: string, edit: (text: string) => string, routes: Route[] = []) => {
    const dir = makeTempDir('templates-');
    try {
      fs.cpSync(defaultTemplatesDir(), dir, { recursive: true });
      const target = path.join(dir, file);
      fs.writeFileSync(target, edit(fs.readFileSync(target, 'utf8')));
      return await verifyRouteTemplates(loadRenderer(dir), { ...config, routing: { file: undefined, routes } }).then(
        () => undefined,
        (error: unknown) => error,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };

  it('passes the shipped templates, and fails a misspelt field inside {{#if receivedText}} or {{#if route.reminder}}', async () => {
    expect(await broken('report/text.hbs', (t) => t)).toBeUndefined();
    expect(await broken('report/text.hbs', (t) => t.replace('{{receivedText}}', '{{recievedText}}'))).toBeInstanceOf(TemplateError);
    expect(await broken('report/text.hbs', (t) => `${t}{{#if route.reminder}}{{remindr}}{{/if}}`)).toBeInstanceOf(TemplateError);
  });

  it('checks the owners section where a route mails by owner, and only there (no other route renders it)', async () => {
    const owners = parseRoutesFile(
      'routes:\n  - name: owners\n    to:\n      netbox_contacts: { role: owner }\n      fallback: noc@example.com\n      allowed_domains: "*"\n',
      'routes.yaml',
    );
    const typo = (t: string) => t.replace('{{deviceCount}} {{plural', '{{deviceCont}} {{plural');
    expect(await broken('partials/owners-text.hbs', typo, owners)).toBeInstanceOf(TemplateError);
    expect(await broken('partials/owners-text.hbs', typo)).toBeUndefined();
  });
});

describe('the sample report the boot check and send-test read', () => {
  it('is the example the package ships, and a copy of the relay without it says which file and to reinstall', () => {
    expect(readSampleBody().toString('utf8')).toContain('"event": "created"');
    const root = makeTempDir('relay-copy-');
    try {
      expect(() => readSampleBody(root)).toThrow(
        `the sample report ${path.join(root, 'examples', 'delivery-netbox-3.6.json')}, part of the relay's package, cannot be read: ENOENT`,
      );
      expect(() => readSampleBody(root)).toThrow(/; reinstall the relay$/);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
