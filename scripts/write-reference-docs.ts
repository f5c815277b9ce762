/**
 * `npm run docs:reference`: writes the generated tables of docs/reference.md (error codes, metrics, exit codes)
 * from their definitions (scripts/reference-tables.ts). test/unit/reference-docs.test.ts fails when one is stale.
 */
import fs from 'node:fs';
import path from 'node:path';
import { renderReferenceBlocks, replaceReferenceBlocks } from './reference-tables';

const page = path.join(__dirname, '../../docs/reference.md');
void renderReferenceBlocks().then((blocks) => {
  fs.writeFileSync(page, replaceReferenceBlocks(fs.readFileSync(page, 'utf8'), blocks));
  process.stdout.write('Wrote the error codes, metrics and exit codes of docs/reference.md.\n');
});
