import fc from 'fast-check';
import { buildFailuresCsv } from '../../src/enrichment';
import type { FailingResult } from '../../src/trend';

/** The failures CSV: no line of the file, whatever line endings a NetBox name carries, starts a formula. */

const FORMULA_START = /^[=+\-@\t]/;

function csvOf(names: readonly string[]): string {
  const results: FailingResult[] = names.map((name, i) => ({
    device: name,
    test: `t-${name}`,
    severity: 'HIGH',
    ids: { result: i + 1, device: i + 1, test: 1 },
  }));
  return buildFailuresCsv(results, { maxBytes: 1_000_000, resultUrl: (id) => `https://netbox.example.com/r/${id}/` }).content.toString(
    'utf8',
  );
}

/** RFC 4180 read back (quotes, doubled quotes, CR LF between records), as a spreadsheet imports it. */
function readCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  const endCell = () => {
    row.push(cell);
    cell = '';
  };
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted && c === '"' && text[i + 1] === '"') {
      cell += '"';
      i += 1;
    } else if (c === '"') quoted = !quoted;
    else if (quoted) cell += c;
    else if (c === ',') endCell();
    else if (c === '\r' && text[i + 1] === '\n') {
      endCell();
      rows.push(row);
      row = [];
      i += 1;
    } else cell += c;
  }
  return rows;
}

describe('failures CSV: formula characters on any line of a cell', () => {
  const endings = { LF: '\n', CR: '\r', CRLF: '\r\n' };
  const starts = ['=', '+', '-', '@', '\t'];
  const cases = Object.entries(endings).flatMap(([ending, eol]) =>
    starts.map((s) => [ending, JSON.stringify(s), `sw-lf${eol}${s}HYPERLINK("http://x.example","open")`]),
  );

  it.each(cases)('after %s, %s never starts a line of the file, and the cell reads back as one text cell', (_ending, _start, name) => {
    const csv = csvOf([name]);
    for (const line of csv.split(/\r\n|\r|\n/)) expect(line).not.toMatch(FORMULA_START);
    const rows = readCsv(csv);
    expect(rows).toHaveLength(2);
    expect(rows[1][0]).toBe(name.replace(/(\r\n|\r|\n)/, "$1'"));
    expect(rows[1][1]).toBe(`t-${name.replace(/(\r\n|\r|\n)/, "$1'")}`);
  });

  it('a cell starting with a formula character is escaped as before, and plain names are untouched', () => {
    const rows = readCsv(csvOf(['=1+1', '@SUM(A1)', '-2', '+3', 'sw-fra-1', 'a,b "c"']));
    expect(rows.slice(1).map((r) => r[0])).toEqual(["'=1+1", "'@SUM(A1)", "'-2", "'+3", 'sw-fra-1', 'a,b "c"']);
  });

  it('holds for any name made of line breaks, formula characters and text (property)', () => {
    const unit = fc.constantFrom('\n', '\r', '\r\n', '=', '+', '-', '@', '\t', 'a', ',', '"', ' ');
    fc.assert(
      fc.property(fc.array(fc.string({ unit, maxLength: 12 }), { minLength: 1, maxLength: 5 }), (names) => {
        const csv = csvOf(names);
        for (const line of csv.split(/\r\n|\r|\n/)) expect(line).not.toMatch(FORMULA_START);
        expect(readCsv(csv)).toHaveLength(names.length + 1);
      }),
    );
  });
});
