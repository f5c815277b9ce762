import type { Readable } from 'node:stream';
import { NetboxError } from './netbox-error';

/** Keys of a result whose values are skipped unread: validity's `explanation` can be megabytes per result. */
const DROPPED_RESULT_KEYS = new Set(['explanation', 'custom_fields']);
const MAX_PAGE_BYTES = 256 * 1024 * 1024;
/** What one page may keep in memory (1,000 devices are about 3 MB): more is a broken NetBox (PROTOCOL). */
export const MAX_PAGE_KEPT_BYTES = 16 * 1024 * 1024;
/** One result without its explanation is a few hundred bytes; anything near this is not a result. */
const MAX_RESULT_BYTES = 4 * 1024 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
const NULL_BYTES = Buffer.from('null');

/**
 * Splits a list page as it streams in: each `results` element is JSON.parsed alone, DROPPED_RESULT_KEYS' values skipped
 * unheld (NetBox < 4.5.2 ignores `?omit=explanation`); the rest (`count`, `next`) is parsed from what remains. Only
 * strings and brackets are tracked: stream-json is far slower.
 */
class PageScanner {
  private depth = 0;
  private inString = false;
  private escape = false;
  private key: number[] | null = null;
  private lastString: string | null = null;
  private expectResults = false;
  private inResults = false;
  private sawResults = false;
  private readonly skeleton: number[] = [];
  private segments: Buffer[] = [];
  private segStart = -1;
  private elementBytes = 0;
  private inElement = false;
  private skipping = false;
  /** Bytes of results kept so far (the skipped values are not). */
  private keptResultBytes = 0;
  readonly results: Record<string, unknown>[] = [];

  push(chunk: Buffer): void {
    const n = chunk.length;
    for (let i = 0; i < n; i += 1) {
      if (this.inString) {
        // Strings inside results (explanations are mostly that) take the fast path.
        if (this.key === null && this.inResults) i = this.skipResultString(chunk, i);
        else this.scanStringByte(chunk[i]);
        continue;
      }
      const c = chunk[i];
      if (this.skipping && this.skipValueByte(c, i)) continue;
      this.scanStructuralByte(chunk, c, i);
    }
    if (this.inElement && !this.skipping) {
      this.flush(chunk, n);
      this.segStart = 0;
    }
    this.checkKept();
  }

  /** A page is parsed into objects held until it is complete: what it keeps is bounded, like a NetBox outage beyond. */
  private checkKept(): void {
    if (this.keptResultBytes + this.skeleton.length > MAX_PAGE_KEPT_BYTES)
      throw new NetboxError('PROTOCOL', `a NetBox page holds more than ${MAX_PAGE_KEPT_BYTES} bytes besides explanations`);
  }

  /** Inside a string in `results`: jumps to its closing quote (or the chunk's end); returns the last index consumed. */
  private skipResultString(chunk: Buffer, i: number): number {
    if (this.escape) {
      this.escape = false;
      return i;
    }
    const n = chunk.length;
    let j = chunk.indexOf(QUOTE, i);
    while (j !== -1 && backslashesBefore(chunk, j, i) % 2 === 1) j = chunk.indexOf(QUOTE, j + 1);
    if (j === -1) {
      this.escape = backslashesBefore(chunk, n, i) % 2 === 1;
      return n - 1;
    }
    this.inString = false;
    return j;
  }

  /** One byte of a string outside the fast path: tracks escapes, collects keys, keeps the skeleton. */
  private scanStringByte(c: number): void {
    if (this.escape) this.escape = false;
    else if (c === BACKSLASH) this.escape = true;
    else if (c === QUOTE) {
      this.inString = false;
      if (this.key) {
        this.lastString = String.fromCharCode(...this.key);
        this.key = null;
      }
    } else if (this.key && this.key.length < 64) this.key.push(c);
    if (!this.inResults) this.skeleton.push(c);
  }

  /** One byte of a dropped value being skipped; returns false once the value has ended (this byte is then scanned as usual). */
  private skipValueByte(c: number, i: number): boolean {
    if (c === QUOTE) this.inString = true;
    else if (c === LBRACE || c === LBRACKET) this.depth += 1;
    else if ((c === COMMA || c === RBRACE) && this.depth === 3) {
      // The skipped value ended: the element goes on from this byte.
      this.skipping = false;
      this.segStart = i;
    } else if (c === RBRACE || c === RBRACKET) this.depth -= 1;
    return this.skipping;
  }

  /** One byte outside any string: brackets, colons and quotes move the scanner; the rest is kept for the skeleton. */
  private scanStructuralByte(chunk: Buffer, c: number, i: number): void {
    switch (c) {
      case QUOTE:
        this.inString = true;
        this.key = this.depth === 1 || (this.inElement && this.depth === 3) ? [] : null;
        break;
      case COLON:
        this.readColon(chunk, i);
        break;
      case LBRACKET:
      case LBRACE:
        this.openBracket(c, i);
        break;
      case RBRACKET:
      case RBRACE:
        this.closeBracket(chunk, i);
        break;
      default:
        break;
    }
    if (this.expectResults && c !== COLON && c !== LBRACKET && c > 0x20) this.expectResults = false;
    if (!this.inResults) this.skeleton.push(c);
  }

  /** After a key: `results` opens the list; a dropped key in a result starts skipping its value (kept as `null`). */
  private readColon(chunk: Buffer, i: number): void {
    if (this.depth === 1 && this.lastString === 'results') this.expectResults = true;
    else if (this.inElement && this.depth === 3 && this.lastString !== null && DROPPED_RESULT_KEYS.has(this.lastString)) {
      this.flush(chunk, i + 1);
      this.segments.push(NULL_BYTES);
      this.skipping = true;
      this.segStart = -1;
    }
    this.lastString = null;
  }

  /** `[` or `{`: may open the results list (its `[` stays in the skeleton) or one result. */
  private openBracket(c: number, i: number): void {
    this.depth += 1;
    if (this.expectResults && c === LBRACKET && this.depth === 2) {
      this.skeleton.push(c);
      this.inResults = true;
      this.sawResults = true;
      this.expectResults = false;
    } else if (this.inResults && this.depth === 3 && c === LBRACE) {
      this.inElement = true;
      this.segments = [];
      this.elementBytes = 0;
      this.segStart = i;
    }
  }

  /** `]` or `}`: may close one result (parsed now) or the results list. */
  private closeBracket(chunk: Buffer, i: number): void {
    this.depth -= 1;
    if (this.inElement && this.depth === 2) {
      this.flush(chunk, i + 1);
      this.finishElement();
    } else if (this.inResults && this.depth === 1) this.inResults = false;
  }

  /** Ends the page (NetBox's `{count, next, previous, results}`): throws PROTOCOL unless it was one complete JSON object with a `results` list. */
  finish() {
    if (this.depth !== 0 || this.inString) throw new NetboxError('PROTOCOL', 'NetBox sent a page that ends in the middle of its JSON');
    let page: { count?: unknown; next?: unknown; results?: unknown };
    try {
      page = JSON.parse(Buffer.from(this.skeleton).toString('utf8')) as typeof page;
    } catch (error) {
      throw new NetboxError('PROTOCOL', `NetBox sent a page that is not JSON: ${(error as Error).message}`);
    }
    if (!this.sawResults || page === null || typeof page !== 'object' || !Array.isArray(page.results))
      throw new NetboxError('PROTOCOL', 'NetBox sent JSON without a "results" list (is NETBOX_URL the NetBox API?)');
    return {
      count: typeof page.count === 'number' ? page.count : null,
      next: typeof page.next === 'string' && page.next !== '' ? page.next : null,
      results: this.results,
    };
  }

  private flush(chunk: Buffer, end: number): void {
    if (this.segStart < 0 || end <= this.segStart) return;
    const part = chunk.subarray(this.segStart, end);
    this.elementBytes += part.length;
    this.keptResultBytes += part.length;
    this.checkKept();
    if (this.elementBytes > MAX_RESULT_BYTES)
      throw new NetboxError('PROTOCOL', `a result in a NetBox page exceeds ${MAX_RESULT_BYTES} bytes without its explanation`);
    // Copied: the chunk's memory is reused by the socket once this call returns.
    this.segments.push(Buffer.from(part));
    this.segStart = end;
  }

  private finishElement(): void {
    this.inElement = false;
    this.segStart = -1;
    let value: unknown;
    try {
      value = JSON.parse(Buffer.concat(this.segments).toString('utf8'));
    } catch (error) {
      throw new NetboxError('PROTOCOL', `NetBox sent a result that is not JSON: ${(error as Error).message}`);
    }
    this.segments = [];
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const result = value as Record<string, unknown>;
      for (const key of DROPPED_RESULT_KEYS) delete result[key];
      this.results.push(result);
    }
  }
}

/** How many backslashes directly precede `end`, not looking before `start`. */
function backslashesBefore(chunk: Buffer, end: number, start: number): number {
  let count = 0;
  for (let k = end - 1; k >= start && chunk[k] === BACKSLASH; k -= 1) count += 1;
  return count;
}

/** Reads one page from a byte stream with {@link PageScanner}, refusing more than MAX_PAGE_BYTES read or MAX_PAGE_KEPT_BYTES kept. */
export async function parsePageStream(body: Readable) {
  const scanner = new PageScanner();
  let bytes = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      if (bytes > MAX_PAGE_BYTES) throw new NetboxError('PROTOCOL', `a NetBox page exceeded ${MAX_PAGE_BYTES} bytes`);
      scanner.push(chunk);
    }
  } catch (error) {
    body.destroy();
    if (error instanceof NetboxError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? 'ERROR';
    throw new NetboxError('UNREACHABLE', `the connection to NetBox broke while reading a page (${code})`, { cause: error });
  }
  return scanner.finish();
}
