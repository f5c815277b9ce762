/**
 * `npm run docs:settings`: writes the settings reference in docs/configuration.md and .env.example from the
 * schema (src/config/schema.ts). test/unit/settings-docs.test.ts fails when either is stale.
 */
import fs from 'node:fs';
import path from 'node:path';
import { renderEnvExample, replaceSettingsReference } from '../src/config';

const root = path.join(__dirname, '../..');
const page = path.join(root, 'docs/configuration.md');
fs.writeFileSync(page, replaceSettingsReference(fs.readFileSync(page, 'utf8')));
fs.writeFileSync(path.join(root, '.env.example'), renderEnvExample());
process.stdout.write('Wrote docs/configuration.md (settings reference) and .env.example from src/config/schema.ts.\n');
