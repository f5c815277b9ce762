import { createHmac, timingSafeEqual } from 'node:crypto';

/** What NetBox puts in X-Hook-Signature: lowercase hex HMAC-SHA512 of the exact body bytes. */
export function signBody(body: Uint8Array, secret: string): string {
  return createHmac('sha512', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

/**
 * Checks X-Hook-Signature against the raw body for each accepted secret (current first, then the
 * previous one during a rotation). Constant-time compare after a length check, so the time taken
 * does not reveal how much of a forged signature was right (octokit/webhooks-methods `verify`).
 */
export function verifySignature(body: Uint8Array, header: string | undefined, secrets: readonly string[]): 'valid' | 'missing' | 'invalid' {
  if (header === undefined) return 'missing';
  const hex = header.trim();
  if (hex === '') return 'missing';
  // The header's bytes, compared with the raw digest (64 bytes). Anything but 128 hex digits is
  // wrong whatever the secret; it is still hashed and compared, so it costs the same time.
  const wellFormed = HEX_SHA512.test(hex);
  const given = wellFormed ? Buffer.from(hex, 'hex') : Buffer.alloc(SHA512_BYTES);
  let ok = false;
  for (const secret of secrets) {
    const expected = createHmac('sha512', secret).update(body).digest();
    // Evaluate every secret so a match on the previous one takes as long as on the current one.
    if (timingSafeEqual(given, expected) && wellFormed) ok = true;
  }
  return ok ? 'valid' : 'invalid';
}

const SHA512_BYTES = 64;
const HEX_SHA512 = /^[0-9a-fA-F]{128}$/;
