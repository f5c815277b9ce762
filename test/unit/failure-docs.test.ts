import fs from 'node:fs';
import path from 'node:path';
import { FAILURE_CATALOGUE } from '../../src/notify';
import { replaceFailureCatalogue } from '../../scripts/failure-table';

const page = fs.readFileSync(path.join(__dirname, '../../docs/errors.md'), 'utf8');

/** docs/errors.md's table of failure codes is the catalogue's: a stale copy fails here, not in an on-call's hands. */
describe('docs/errors.md shows the failure catalogue as it is', () => {
  it('holds the table as the catalogue writes it (npm run docs:failures)', () => {
    expect(replaceFailureCatalogue(page, FAILURE_CATALOGUE)).toBe(page);
  });
});
