/**
 * `npm run docs:keys`: writes the key tables of docs/routes.md and docs/sources.md from the routes and sources
 * files' schemas (scripts/file-key-tables.ts). test/unit/file-key-docs.test.ts fails when either is stale.
 */
import fs from 'node:fs';
import path from 'node:path';
import { replaceKeyTable, ROUTES_FILE, SOURCES_FILE } from './file-key-tables';

const root = path.join(__dirname, '../..');
for (const file of [ROUTES_FILE, SOURCES_FILE]) {
  const page = path.join(root, file.page);
  fs.writeFileSync(page, replaceKeyTable(fs.readFileSync(page, 'utf8'), file));
  process.stdout.write(`Wrote the key table of ${file.page} from ${file.from}.\n`);
}
