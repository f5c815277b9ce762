/**
 * The layer order of src/, bottom to top (docs/architecture.md, "The layers"). A module may import only from its
 * own layer or a layer below it, never in a circle, and another folder only through its public door (index.ts).
 * `npm run layers` (part of `npm test`) fails on any import that breaks this.
 */
const LAYERS = [
  ['shared'],
  ['report'],
  ['netbox'],
  ['webhook'],
  ['trend'],
  ['waivers'],
  ['store'],
  ['enrichment'],
  ['routing'],
  ['mail'],
  ['notify'],
  ['config'],
  ['compose'],
  ['delivery'],
  ['health', 'metrics', 'watchdog', 'digest'],
  ['catch-up'],
  ['http', 'dashboard', 'netbox-setup'],
  ['relay'],
  ['cli'],
  ['main.ts'],
];

const pathOf = (name) => (name.endsWith('.ts') ? `^src/${name.replace('.', '\\.')}$` : `^src/${name}/`);
const layerRules = LAYERS.flatMap((layer, i) => {
  const above = LAYERS.slice(i + 1).flat();
  if (above.length === 0) return [];
  return layer.map((name) => ({
    name: `layer-${name}`,
    comment: `${name} is below ${above.join(', ')}: it must not import from them (data flows down)`,
    severity: 'error',
    from: { path: pathOf(name) },
    to: { path: above.map(pathOf).join('|') },
  }));
});

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'import circles hide where a change goes', from: {}, to: { circular: true } },
    {
      name: 'public-door',
      severity: 'error',
      comment: 'another folder is imported through its index.ts, never its inner files',
      from: { path: '^src/([^/]+)/' },
      to: { path: '^src/([^/]+)/(?!index\\.ts$)', pathNot: '^src/$1/' },
    },
    ...layerRules,
    { name: 'not-to-test', severity: 'error', from: { path: '^src/' }, to: { path: '^(test|bench)/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
