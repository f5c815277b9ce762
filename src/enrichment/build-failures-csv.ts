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
 * Every failing result as CSV (RFC 4180: CRLF line ends, fields with commas, quotes or line breaks
 * quoted, quotes doubled), stopping before `maxBytes`. Cells that a spreadsheet would run as a
 * formula (`=`, `+`, `-`, `@`) are escaped: device and test names come from NetBox users.
 */
export function buildFailuresCsv(
  results: readonly FailingResult[],
  options: { maxBytes: number; resultUrl: (resultId: number) => string },
): FailuresCsv {
  const format = (rows: string[][]) => stringify(rows, { record_delimiter: 'windows', escape_formulas: true });
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
