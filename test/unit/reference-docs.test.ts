import fs from 'node:fs';
import path from 'node:path';
import * as cli from '../../src/cli';
import { EXIT_CODES, listMetrics, renderReferenceBlocks, replaceReferenceBlocks } from '../../scripts/reference-tables';
import { startTestRelay } from '../helpers/relay-harness';

const page = fs.readFileSync(path.join(__dirname, '../../docs/reference.md'), 'utf8');

/** docs/reference.md's generated tables are their definitions': a stale copy fails here, not in an operator's hands. */
describe('docs/reference.md holds the tables its definitions write', () => {
  it('error codes, metrics and exit codes as `npm run docs:reference` writes them', async () => {
    expect(replaceReferenceBlocks(page, await renderReferenceBlocks())).toBe(page);
  });

  it('the metrics are every compliance_relay_ series a running relay exports, each with its labels', async () => {
    const relay = await startTestRelay();
    let registered: string[];
    try {
      registered = (await relay.relay.metrics.registry.getMetricsAsJSON())
        .map((m) => m.name)
        .filter((n) => n.startsWith('compliance_relay_'));
    } finally {
      await relay.stop();
    }
    const listed = await listMetrics();
    expect(listed.map((m) => m.name).sort()).toEqual(registered.sort());
    // The labels each series declares in src/metrics (`labelNames`), against those the generator's samples showed.
    const declared = new Map<string, string[]>();
    for (const file of ['create-metrics.ts', 'register-catch-up-series.ts']) {
      const text = fs.readFileSync(path.join(__dirname, '../../src/metrics', file), 'utf8');
      for (const chunk of text.split(/new (?:Counter|Gauge|Histogram)\(/).slice(1)) {
        const name = /series\(registry, '([a-z_]+)'\)|name: '(compliance_relay_[a-z_]+)'/.exec(chunk);
        const labels = /labelNames: \[([^\]]*)\]/.exec(chunk.split(/\n\s*\}\);?\n/)[0]);
        if (name)
          declared.set(
            name[2] ?? `compliance_relay_${name[1]}`,
            labels ? [...labels[1].matchAll(/'([a-z_]+)'/g)].map((m) => m[1]).sort() : [],
          );
      }
    }
    expect(declared.size).toBeGreaterThan(10);
    for (const m of listed) expect(`${m.name}: ${m.labels.join(', ')}`).toBe(`${m.name}: ${(declared.get(m.name) ?? m.labels).join(', ')}`);
  });

  it('the exit codes are 0, 1 and every EXIT_ code the commands declare', () => {
    const declared = Object.entries(cli)
      .filter(([name]) => name.startsWith('EXIT_'))
      .map(([, code]) => code as number);
    expect(EXIT_CODES.map(([code]) => code).sort()).toEqual([0, 1, ...declared].sort());
  });
});
