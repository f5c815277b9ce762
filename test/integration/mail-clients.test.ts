import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildDigestView, sampleDigestContents, sampleInsightViews } from '../../src/compose';
import { defaultTemplatesDir, loadRenderer } from '../../src/mail';

const TEMPLATES = defaultTemplatesDir();
const CLIENTS = ['gmail.*', 'outlook.*'];
/** As many as Alertmanager's default e-mail template uses in those clients. */
const MAX_UNSUPPORTED = 7;

/**
 * caniemail (the caniemail.com data, an ES module) run in a child Node process: the HTML features each
 * mail uses that some Gmail or Outlook client does not support ("error" in caniemail's terms), by title.
 */
function findUnsupported(files: string[]): Record<string, string[]> {
  const script = `
    import { caniemail } from 'caniemail';
    import fs from 'node:fs';
    const out = {};
    for (const file of process.argv.slice(1)) {
      const { issues } = caniemail({ clients: ${JSON.stringify(CLIENTS)}, html: fs.readFileSync(file, 'utf8') });
      const titles = new Set();
      for (const list of issues.errors.values()) for (const issue of list) titles.add(issue.title);
      out[file] = [...titles].sort();
    }
    process.stdout.write(JSON.stringify(out));`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script, ...files], {
    cwd: path.join(__dirname, '..', '..'),
    encoding: 'utf8',
  });
  return JSON.parse(output) as Record<string, string[]>;
}

/** The features templates/README.md lists under "Client fallbacks", each with what those clients show instead. */
function readDocumentedFallbacks(): Map<string, string> {
  const readme = fs.readFileSync(path.join(TEMPLATES, 'README.md'), 'utf8');
  const section = readme.split('## Client fallbacks')[1]?.split('\n## ')[0] ?? '';
  return new Map([...section.matchAll(/^- `([^`]+)`: (.+)$/gm)].map((m) => [m[1], m[2]]));
}

describe('every shipped template in Gmail and Outlook (caniemail)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mail-clients-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const names = ['report (failures, trend, chart)', 'report (details missing)', 'digest'];
  const files = names.map((name, i) => [name, path.join(dir, `${i}.html`)] as const);
  let found: Record<string, string[]>;
  beforeAll(async () => {
    const renderer = loadRenderer(TEMPLATES);
    const config = { mail: { timezone: 'UTC' }, netbox: { url: 'https://netbox.example.com' } } as never;
    const [enriched, missing] = await sampleInsightViews(config);
    const mails = [
      renderer.render(enriched).html,
      renderer.render(missing).html,
      renderer.render(buildDigestView(sampleDigestContents('UTC')[0]), 'digest').html,
    ];
    files.forEach(([, file], i) => fs.writeFileSync(file, mails[i]));
    found = findUnsupported(files.map(([, file]) => file));
  });

  it.each(files)('%s: uses no feature those clients lack unless templates/README.md documents its fallback', (_name, file) => {
    const documented = readDocumentedFallbacks();
    expect(found[file].filter((feature) => !documented.has(feature))).toEqual([]);
  });

  it.each(files)(`%s: uses at most ${MAX_UNSUPPORTED} features those clients lack`, (name, file) => {
    // Printed, so a change that adds one shows which.
    process.stdout.write(`${name}: ${found[file].length} unsupported in Gmail or Outlook: ${found[file].join(', ')}\n`);
    expect(found[file].length).toBeLessThanOrEqual(MAX_UNSUPPORTED);
  });

  it('no layout property those clients ignore: the layout is tables, widths and inline styles', () => {
    for (const [, file] of files)
      expect(found[file]).not.toEqual(
        expect.arrayContaining([expect.stringMatching(/^(table-layout|overflow|white-space|text-overflow|width|max-width|display)$/)]),
      );
  });

  it('leans on neither overflow-wrap nor word-break (Gmail drops them): long names break at <wbr>', () => {
    for (const [, file] of files)
      expect(found[file]).not.toEqual(expect.arrayContaining([expect.stringMatching(/^(overflow-wrap|word-break)$/)]));
  });

  it('documents no fallback it does not need', () => {
    const used = new Set(Object.values(found).flat());
    expect([...readDocumentedFallbacks().keys()].filter((feature) => !used.has(feature))).toEqual([]);
  });
});
