import { stringify } from 'csv-stringify/sync';
import type { FailingResult } from '../trend';

const HEADER = ['device', 'test', 'severity', 'result_url'];

/**
 * A line break inside a cell followed by a character that starts a formula (OWASP's list: `=`, `+`, `-`, `@`, tab):
 * csv-stringify's `escape_formulas` looks at a cell's first character only, so each such line gets a `'` here.
 */
const FORMULA_AFTER_LINE_BREAK = /(\r\n|\r|\n)(?=[=+\-@\t])/g;

/**
 * Every failing result as CSV (RFC 4180), stopping before `maxBytes`. Cells a spreadsheet would run as a formula, on any
 * of their lines, are escaped: device and test names come from NetBox users.
 */
export function buildFailuresCsv(
  results: readonly FailingResult[],
  options: { maxBytes: number; resultUrl: (resultId: number) => string },
) {
  // A lone LF or CR is quoted too, so no reader splits a cell into two records.
  const format = (rows: string[][]) =>
    stringify(
      rows.map((row) => row.map((cell) => cell.replace(FORMULA_AFTER_LINE_BREAK, "$1'"))),
      { record_delimiter: 'windows', escape_formulas: true, quoted_match: /[\r\n]/ },
    );
  const parts: string[] = [format([HEADER])];
  let size = Buffer.byteLength(parts[0]);
  let rows = 0;
  for (const r of results) {
    const line = format([[r.device, r.test, r.severity, options.resultUrl(r.ids.result)]]);
    const bytes = Buffer.byteLength(line);
    if (size + bytes > options.maxBytes) break;
    parts.push(line);
    size += bytes;
    rows += 1;
  }
  // `rows`: results written (every one unless truncated).
  return { content: Buffer.from(parts.join(''), 'utf8'), rows, totalRows: results.length, truncated: rows < results.length };
}
