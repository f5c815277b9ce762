import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * True when the `Authorization: Bearer <token>` header carries `expected`. Both sides are hashed
 * first, so the comparison is constant-time whatever their lengths (no early exit on a length check).
 */
export function verifyBearerToken(header: string | undefined, expected: string): boolean {
  const m = /^Bearer[ ]+(\S{1,1024})\s*$/i.exec(header ?? '');
  if (!m) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(m[1]), digest(expected));
}
