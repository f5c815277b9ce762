import { createHmac, timingSafeEqual } from 'node:crypto';

export type SignatureVerdict = 'valid' | 'missing' | 'invalid';

/** What NetBox puts in X-Hook-Signature: lowercase hex HMAC-SHA512 of the exact body bytes. */
export function signBody(body: Uint8Array, secret: string): string {
  return createHmac('sha512', Buffer.from(secret, 'utf8')).update(body).digest('hex');
}

/**
 * Checks X-Hook-Signature against the raw body for each accepted secret (current first, then the
 * previous one during a rotation). Constant-time compare after a length check, so the time taken
 * does not reveal how much of a forged signature was right (octokit/webhooks-methods `verify`).
 */
export function verifySignature(body: Uint8Array, header: string | undefined, secrets: readonly string[]): SignatureVerdict {
  if (header === undefined || header.trim() === '') return 'missing';
  const given = Buffer.from(header.trim().toLowerCase(), 'utf8');
  let ok = false;
  for (const secret of secrets) {
    const expected = Buffer.from(signBody(body, secret), 'utf8');
    // Evaluate every secret so a match on the previous one takes as long as on the current one.
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
  }
  return ok ? 'valid' : 'invalid';
}
