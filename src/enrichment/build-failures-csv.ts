import { stringify } from 'csv-stringify/sync';
import type { FailingResult } from '../trend';

const HEADER = ['device', 'test', 'severity', 'result_url'];

/** A formula start (OWASP: `= + - @` tab) after a line break in a cell: csv-stringify's `escape_formulas` sees only the first. */
const FORMULA_AFTER_LINE_BREAK = /(\r\n|\r|\n)(?=[=+\-@\t])/g;

/** Every failing result as CSV (RFC 4180) within `maxBytes`; formulas escaped on every line (NetBox users write the names). */
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
