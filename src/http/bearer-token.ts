import { createHash, timingSafeEqual } from 'node:crypto';

/** True when `a` and `b` are equal. Both are hashed first, so the comparison is constant-time whatever their lengths (no early exit). */
export function isSameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** True when the `Authorization: Bearer <token>` header carries `expected` (compared with {@link isSameSecret}). */
export function verifyBearerToken(header: string | undefined, expected: string): boolean {
  const m = /^Bearer[ ]+(\S{1,1024})\s*$/i.exec(header ?? '');
  return m !== null && isSameSecret(m[1], expected);
}
