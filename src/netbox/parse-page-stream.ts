import type { Readable } from 'node:stream';
import { parser } from 'stream-json';
import { NetboxError } from './netbox-error';

/** One page of a NetBox list: `{count, next, previous, results}`. */
export interface NetboxPage {
  count: number | null;
  next: string | null;
  results: Record<string, unknown>[];
}

/** Keys of a result dropped while parsing: validity's `explanation` can be megabytes per result. */
const DROPPED_RESULT_KEYS = new Set(['explanation', 'custom_fields']);

type Frame = { kind: 'object'; value: Record<string, unknown>; key: string | null } | { kind: 'array'; value: unknown[] };

/**
 * Parses a page of a NetBox list from a byte stream, token by token, so a NetBox that ignores
 * `?omit=explanation` (older than 4.5.2) never has a result's explanation assembled in memory:
 * those values are skipped as they stream past. Everything else of the page is kept.
 */
export async function parsePageStream(body: Readable, maxBytes: number): Promise<NetboxPage> {
  const tokens = parser({ packValues: true, streamValues: false });
  let bytes = 0;
  let tooLarge = false;
  body.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    if (bytes > maxBytes && !tooLarge) {
      tooLarge = true;
      body.destroy(new NetboxError('PROTOCOL', `a NetBox page exceeded ${maxBytes} bytes`));
    }
  });
  body.on('error', (error) => tokens.destroy(error));
  body.pipe(tokens);

  const frames: Frame[] = [];
  let root: unknown;
  let skipDepth = 0;
  let skipNext = false;

  const place = (value: unknown) => {
    const top = frames[frames.length - 1];
    if (!top) {
      root = value;
    } else if (top.kind === 'array') {
      top.value.push(value);
    } else {
      if (top.key !== null) top.value[top.key] = value;
      top.key = null;
    }
  };

  try {
    for await (const token of tokens as AsyncIterable<{ name: string; value?: string }>) {
      if (skipDepth > 0) {
        if (token.name === 'startObject' || token.name === 'startArray') skipDepth += 1;
        else if (token.name === 'endObject' || token.name === 'endArray') skipDepth -= 1;
        continue;
      }
      if (skipNext) {
        skipNext = false;
        const top = frames[frames.length - 1];
        if (top?.kind === 'object') top.key = null;
        if (token.name === 'startObject' || token.name === 'startArray') skipDepth = 1;
        continue;
      }
      switch (token.name) {
        case 'startObject':
        case 'startArray': {
          const frame: Frame = token.name === 'startObject' ? { kind: 'object', value: {}, key: null } : { kind: 'array', value: [] };
          place(frame.value);
          // place() consumed the parent's key; the child is now filled in place.
          frames.push(frame);
          break;
        }
        case 'endObject':
        case 'endArray':
          frames.pop();
          break;
        case 'keyValue': {
          const top = frames[frames.length - 1];
          if (top?.kind !== 'object') break;
          // Depth 3 is a result: page object → results array → result object.
          if (frames.length === 3 && DROPPED_RESULT_KEYS.has(token.value ?? '')) skipNext = true;
          else top.key = token.value ?? '';
          break;
        }
        case 'stringValue':
          place(token.value ?? '');
          break;
        case 'numberValue':
          place(Number(token.value));
          break;
        case 'nullValue':
          place(null);
          break;
        case 'trueValue':
          place(true);
          break;
        case 'falseValue':
          place(false);
          break;
        default:
          break;
      }
    }
  } catch (error) {
    if (error instanceof NetboxError) throw error;
    if (tooLarge) throw new NetboxError('PROTOCOL', `a NetBox page exceeded ${maxBytes} bytes`);
    const code = (error as NodeJS.ErrnoException).code;
    if (code && /^(ECONNRESET|EPIPE|ETIMEDOUT|ERR_STREAM_PREMATURE_CLOSE)$/.test(code)) {
      throw new NetboxError('UNREACHABLE', `the connection to NetBox broke while reading a page (${code})`, { cause: error });
    }
    throw new NetboxError('PROTOCOL', `NetBox sent a page that is not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (root === null || typeof root !== 'object' || Array.isArray(root) || !Array.isArray((root as { results?: unknown }).results)) {
    throw new NetboxError('PROTOCOL', 'NetBox sent JSON without a "results" list (is NETBOX_URL the NetBox API?)');
  }
  const page = root as { count?: unknown; next?: unknown; results: unknown[] };
  return {
    count: typeof page.count === 'number' ? page.count : null,
    next: typeof page.next === 'string' && page.next !== '' ? page.next : null,
    results: page.results.filter((r): r is Record<string, unknown> => r !== null && typeof r === 'object' && !Array.isArray(r)),
  };
}
