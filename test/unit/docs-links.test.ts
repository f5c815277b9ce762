import fs from 'node:fs';
import path from 'node:path';

const root = path.join(__dirname, '../..');

/** README.md, BENCHMARKS.md, templates/README.md and every page under docs/. */
function listDocs(): string[] {
  const docs = fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f));
  return ['README.md', 'BENCHMARKS.md', 'templates/README.md', ...docs];
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = fs.readFileSync(path.join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slugOf(m[1])));
}

/** Every relative link target of a Markdown file, outside code blocks. */
function relativeLinksOf(file: string): string[] {
  const text = fs.readFileSync(path.join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((target) => !/^[a-z]+:/i.test(target));
}

describe('documentation links', () => {
  const pairs = listDocs().flatMap((file) => relativeLinksOf(file).map((target) => [file, target] as const));

  it('finds the links it checks', () => {
    expect(pairs.length).toBeGreaterThan(10);
  });

  it.each(pairs)('%s links to %s, which exists', (file, target) => {
    const [target0, anchor] = target.split('#');
    const resolved = target0 === '' ? file : path.normalize(path.join(path.dirname(file), target0));
    expect(fs.existsSync(path.join(root, resolved))).toBe(true);
    if (anchor && resolved.endsWith('.md')) expect([...anchorsOf(resolved)]).toContain(anchor);
  });
});
