import { stringify } from 'csv-stringify/sync';
import type { FailingResult } from './summarize-failures';

export interface FailuresCsv {
  content: Buffer;
  /** Results written (every one unless truncated). */
  rows: number;
  totalRows: number;
  truncated: boolean;
}

const HEADER = ['device', 'test', 'severity', 'result_url'];

/**
 * A line break inside a cell followed by a character that starts a formula (OWASP's list: `=`, `+`,
 * `-`, `@`, tab). csv-stringify's `escape_formulas` looks at a cell's first character only, and quotes
 * a cell only for CR LF under `record_delimiter: 'windows'`, so `sw\n=HYPERLINK(…)` put a line
 * starting `=HYPERLINK(` into the file.
 */
const FORMULA_AFTER_LINE_BREAK = /(\r\n|\r|\n)(?=[=+\-@\t])/g;

/** Every line a cell holds starts as text: a `'` before a formula character after each line break (the first is csv-stringify's). */
function neutralizeLines(cell: string): string {
  return cell.replace(FORMULA_AFTER_LINE_BREAK, "$1'");
}

/**
 * Every failing result as CSV (RFC 4180: CRLF line ends, fields with commas, quotes or line breaks
 * quoted, quotes doubled), stopping before `maxBytes`. Cells that a spreadsheet would run as a
 * formula (`=`, `+`, `-`, `@`, tab), on any of their lines, are escaped: device and test names come
 * from NetBox users.
 */
export function buildFailuresCsv(
  results: readonly FailingResult[],
  options: { maxBytes: number; resultUrl: (resultId: number) => string },
): FailuresCsv {
  // A lone LF or CR is quoted too, so no reader splits a cell into two records.
  const format = (rows: string[][]) =>
    stringify(
      rows.map((row) => row.map(neutralizeLines)),
      { record_delimiter: 'windows', escape_formulas: true, quoted_match: /[\r\n]/ },
    );
  const parts: string[] = [format([HEADER])];
  let size = Buffer.byteLength(parts[0]);
  let rows = 0;
  for (const r of results) {
    const line = format([[r.device, r.test, r.severity, options.resultUrl(r.resultId)]]);
    const bytes = Buffer.byteLength(line);
    if (size + bytes > options.maxBytes) break;
    parts.push(line);
    size += bytes;
    rows += 1;
  }
  return { content: Buffer.from(parts.join(''), 'utf8'), rows, totalRows: results.length, truncated: rows < results.length };
}
