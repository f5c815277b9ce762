import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * What `npm pack` ships (docs/install.md) is what the packaged relay reads at run time: the compiled code with
 * both stores' migrations, the templates with the compiled and inlined forms that `npm run build` writes (build
 * outputs, not in git), the examples the docs point to and the sample report the boot check and `send-test` read
 * (examples/delivery-netbox-3.6.json); and every `files` entry names something that exists.
 * It reads the dist/ and templates that `npm test` builds first.
 */
describe('the npm package', () => {
  const packed = (): string[] => {
    if (!fs.existsSync(path.join(ROOT, 'dist/src/main.js'))) throw new Error('dist/ is missing: run `npm run build` first');
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' });
    return (JSON.parse(out) as { files: { path: string }[] }[])[0].files.map((f) => f.path);
  };

  it('names in `files` only what exists, and ships what `serve` reads at run time', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { files: string[]; bin: Record<string, string> };
    for (const entry of pkg.files) expect([entry, fs.existsSync(path.join(ROOT, entry))]).toEqual([entry, true]);
    const files = packed();
    for (const entry of pkg.files) expect([entry, files.some((f) => f === entry || f.startsWith(`${entry}/`))]).toEqual([entry, true]);
    // Every migration module the stores read at start, one per engine.
    const migrations = fs
      .readdirSync(path.join(ROOT, 'src/store/migrations'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `dist/src/store/migrations/${f.replace(/\.ts$/, '.js')}`);
    expect(files).toEqual(
      expect.arrayContaining([
        ...Object.values(pkg.bin),
        ...migrations,
        'templates/compiled-templates.json',
        'templates/report/html.hbs',
        'examples/routes.yaml',
        'examples/delivery-netbox-3.6.json',
        'deploy/systemd/compliance-relay.service',
      ]),
    );
    expect(files.filter((f) => /^(src|test|bench|scripts)\//.test(f))).toEqual([]);
  });
});
