/**
 * `npm run docs:settings`: writes the settings reference in docs/configuration.md and .env.example from the
 * schema (src/config/schema.ts, through scripts/settings-docs.ts), and the settings no longer read into CHANGELOG.md's upgrade notes.
 * test/unit/settings-docs.test.ts fails when one is stale.
 */
import fs from 'node:fs';
import path from 'node:path';
import { renderEnvExample, replaceRetiredSettings, replaceSettingsReference } from './settings-docs';

const root = path.join(__dirname, '../..');
const page = path.join(root, 'docs/configuration.md');
fs.writeFileSync(page, replaceSettingsReference(fs.readFileSync(page, 'utf8')));
fs.writeFileSync(path.join(root, '.env.example'), renderEnvExample());
const changelog = path.join(root, 'CHANGELOG.md');
fs.writeFileSync(changelog, replaceRetiredSettings(fs.readFileSync(changelog, 'utf8')));
process.stdout.write('Wrote docs/configuration.md (settings reference), .env.example and the retired settings in CHANGELOG.md.\n');
