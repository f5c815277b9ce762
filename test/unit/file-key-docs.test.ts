import fs from 'node:fs';
import path from 'node:path';
import { listFileKeys, replaceKeyTable, ROUTES_FILE, SOURCES_FILE } from '../../scripts/file-key-tables';

const root = path.join(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** The key tables of the routes and sources pages are their schemas': a stale copy fails here, not in an operator's hands. */
describe.each([ROUTES_FILE, SOURCES_FILE])('$page holds the key table its schema writes', (file) => {
  it('as `npm run docs:keys` writes it', () => {
    const page = read(file.page);
    expect(replaceKeyTable(page, file)).toBe(page);
  });
});

describe('the tables list every key of the files', () => {
  it('the routes file: 48 keys (a route, its conditions, its owners and its digest)', () => {
    expect(listFileKeys(ROUTES_FILE)).toHaveLength(48);
  });

  it('the sources file: 13 keys and the list, the inline secrets and the retired key outside the table', () => {
    expect(listFileKeys(SOURCES_FILE).map((k) => k.key)).toHaveLength(14);
    expect(Object.keys(SOURCES_FILE.outside)).toEqual(['token', 'webhook_secret', 'catch_up_max']);
  });

  it('a key the schema has and the meanings lack stops the generation, naming the key', () => {
    const { 'match.device.site': _site, ...meanings } = ROUTES_FILE.meanings;
    expect(() => listFileKeys({ ...ROUTES_FILE, meanings })).toThrow(
      'the key match.device.site of src/routing/routes-schema.ts has no meaning',
    );
  });

  it('a meaning for a key the schema does not have stops it too', () => {
    const meanings = { ...SOURCES_FILE.meanings, api_token: { meaning: 'x' } };
    expect(() => listFileKeys({ ...SOURCES_FILE, meanings })).toThrow('meanings for keys the schema does not have: api_token');
  });
});
