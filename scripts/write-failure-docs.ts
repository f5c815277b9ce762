/**
 * `npm run docs:failures`: writes the failure catalogue's table in docs/errors.md from the relay's own codes
 * (src/shared/failure-catalogue.ts) and its transports' (notify's registry, src/notify/transports.ts).
 * test/unit/failure-docs.test.ts fails when it is stale.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FAILURE_CATALOGUE } from '../src/notify';
import { replaceFailureCatalogue } from './failure-table';

const page = path.join(__dirname, '../../docs/errors.md');
fs.writeFileSync(page, replaceFailureCatalogue(fs.readFileSync(page, 'utf8'), FAILURE_CATALOGUE));
process.stdout.write("Wrote the failure catalogue in docs/errors.md from the relay's and its transports' codes.\n");
