import { createHmac, timingSafeEqual } from 'node:crypto';

/** What NetBox puts in X-Hook-Signature: lowercase hex HMAC-SHA512 of the exact body bytes. */
export function signBody(body: Uint8Array, secret: string): string {
  return createHmac('sha512', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

/**
 * Checks X-Hook-Signature on the raw body against each secret (current, then the previous during a rotation), in constant
 * time after a length check: timing never reveals how much of a forgery was right (octokit/webhooks-methods `verify`).
 */
export function verifySignature(body: Uint8Array, header: string | undefined, secrets: readonly string[]): 'valid' | 'missing' | 'invalid' {
  if (header === undefined) return 'missing';
  const hex = header.trim();
  if (hex === '') return 'missing';
  // Anything but 128 hex digits is wrong whatever the secret, yet still hashed and compared: it costs the same time.
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
