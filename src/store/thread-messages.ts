import { RelayError } from '../shared';
import { StorageUnavailableError, type Store } from './types';

/** The store methods the outbox thread runs (everything but the property `singleOwner`). */
export type StoreMethod = Exclude<keyof Store, 'singleOwner'>;

export interface StoreCall {
  id: number;
  method: StoreMethod;
  args: unknown[];
}

/** An error as it crosses the thread boundary: enough to rebuild the class callers test for. */
export interface ThreadError {
  name: string;
  message: string;
  code?: string;
  issues?: unknown;
}

export type StoreReply = { id: number; value: unknown } | { id: number; error: ThreadError };

export function encodeThreadError(error: unknown): ThreadError {
  const e = error as { name?: unknown; message?: unknown; code?: unknown; issues?: unknown };
  return {
    name: typeof e?.name === 'string' ? e.name : 'Error',
    message: typeof e?.message === 'string' ? e.message : String(error),
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
    ...(e?.issues !== undefined ? { issues: e.issues } : {}),
  };
}

/** The same class on this side: StorageUnavailableError stays a 503, a RelayError keeps its code. */
export function decodeThreadError(error: ThreadError): Error {
  if (error.name === 'StorageUnavailableError') return new StorageUnavailableError(error.message, error.code ?? 'STORAGE');
  if (error.name === 'RelayError' && error.code) {
    return new RelayError(error.code as ConstructorParameters<typeof RelayError>[0], { message: error.message, issues: error.issues as never });
  }
  return Object.assign(new Error(error.message), { name: error.name, ...(error.code ? { code: error.code } : {}) });
}

/**
 * Buffers in `value` as Buffers again: structured cloning turns a Buffer into a plain Uint8Array,
 * which SQLite would refuse to bind and callers would print as numbers. Walks plain objects and
 * arrays (rows, deliveries), not class instances; replaces in place.
 */
export function reviveBuffers<T>(value: T, depth = 0): T {
  if (value instanceof Uint8Array) {
    return (Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)) as T;
  }
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = reviveBuffers(value[i], depth + 1);
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const v = record[key];
    if (v !== null && typeof v === 'object') record[key] = reviveBuffers(v, depth + 1);
  }
  return value;
}

/**
 * Buffers among `args` (one level into objects: a delivery's body) copied into ArrayBuffers of
 * their own and listed for transfer. A small Buffer is usually a view of Node's shared 8 KiB pool,
 * which structured cloning would copy whole; the copy here is exactly the bytes, and moving it
 * costs nothing.
 */
export function detachBuffers(args: unknown[], transfer: ArrayBuffer[]): unknown[] {
  return args.map((arg) => {
    if (arg instanceof Uint8Array) return own(arg, transfer);
    if (arg === null || typeof arg !== 'object' || Array.isArray(arg)) return arg;
    let copy: Record<string, unknown> | undefined;
    for (const [key, v] of Object.entries(arg)) {
      if (v instanceof Uint8Array) (copy ??= { ...(arg as Record<string, unknown>) })[key] = own(v, transfer);
    }
    return copy ?? arg;
  });
}

function own(bytes: Uint8Array, transfer: ArrayBuffer[]): Uint8Array {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  transfer.push(copy.buffer);
  return copy;
}
