import fc from 'fast-check';
import { createSecretMask, SECRET_MARK } from '../../src/shared';

/** One mask for every text a remote server sends back: each form a secret can be echoed in is hidden. */

/** Every form a server may echo a secret in: plain, URL-encoded, JSON-escaped, base64 alone or inside AUTH PLAIN. */
function echoes(secret: string, user: string): string[] {
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  return [
    secret,
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()),
    new URLSearchParams({ v: secret }).toString().slice(2),
    JSON.stringify(secret).slice(1, -1),
    b64(secret),
    b64(`\0${user}\0${secret}`),
    b64(`${user}:${secret}`).replace(/\+/g, '-').replace(/\//g, '_'),
  ];
}

/** Whether any form of `secret` can still be read from `text`: plain, decoded from %XX, or decoded from a base64 word. */
function leaks(text: string, secret: string): boolean {
  if (text.includes(secret) || text.includes(encodeURIComponent(secret)) || text.includes(JSON.stringify(secret).slice(1, -1))) return true;
  for (const word of text.match(/[A-Za-z0-9+/_=-]{4,}/g) ?? []) {
    for (let skip = 0; skip < 4; skip += 1) {
      const decoded = Buffer.from(word.slice(skip).replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8');
      if (decoded.includes(secret)) return true;
    }
  }
  return false;
}

const secretArb = fc.string({ minLength: 8, maxLength: 40, unit: 'grapheme' }).filter((s) => !SECRET_MARK.includes(s) && s.trim() === s);
const userArb = fc.string({ minLength: 0, maxLength: 12, unit: fc.constantFrom('a', 'b', 'r', 'e', 'l', 'y', '.', '1') });
const around = fc.string({ maxLength: 30 });

describe('createSecretMask', () => {
  it('hides a secret in every form a server can echo it in, wherever it sits in the text (property)', () => {
    fc.assert(
      fc.property(secretArb, userArb, around, around, fc.nat(7), (secret, user, before, after, which) => {
        const mask = createSecretMask([secret]);
        const text = `${before} ${echoes(secret, user)[which]} ${after}`;
        expect(leaks(mask(text), secret)).toBe(false);
      }),
      { numRuns: 400 },
    );
  });

  it('leaves text without a secret as it was, and masks several secrets at once (property)', () => {
    fc.assert(
      fc.property(fc.array(secretArb, { minLength: 1, maxLength: 3 }), around, (secrets, text) => {
        fc.pre(secrets.every((s) => !text.includes(s) && !leaks(text, s)));
        const mask = createSecretMask(secrets);
        expect(mask(text)).toBe(text);
        const all = `${text} ${secrets.map((s, i) => echoes(s, 'relay')[i % 8]).join(' ')}`;
        for (const s of secrets) expect(leaks(mask(all), s)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('masks the echoes real servers send: NetBox 403 detail, SMTP 535 and an AUTH PLAIN echo, a token endpoint error_description', () => {
    const token = 'nbtok-T0pC5sA2yOg7d8e9f0a1b2c3d4e5f6a7b8c9';
    const password = 'smtp-pass-S9oB4rZ1xNh6/+=';
    const clientSecret = 'cs~Q8x.Zr_1-abcDEF';
    const mask = createSecretMask([token, password, clientSecret]);
    const plain = Buffer.from(`\0relay\0${password}`).toString('base64');
    expect(mask(`{"detail": "Invalid token: Token ${token}"}`)).toBe(`{"detail": "Invalid token: Token ${SECRET_MARK}"}`);
    expect(mask(`535 5.7.8 password ${password} rejected`)).toBe(`535 5.7.8 password ${SECRET_MARK} rejected`);
    expect(mask(`535 5.7.8 bad credentials ${plain}`)).toBe(`535 5.7.8 bad credentials ${SECRET_MARK}`);
    expect(mask(`AADSTS7000215: Invalid client secret provided: client_secret=${encodeURIComponent(clientSecret)}`)).toBe(
      `AADSTS7000215: Invalid client secret provided: client_secret=${SECRET_MARK}`,
    );
    expect(createSecretMask([])('nothing to hide')).toBe('nothing to hide');
  });

  it('returns a long base64-like line without a secret as it was', () => {
    const mask = createSecretMask(['smtp-pass-S9oB4rZ1xNh6/+=']);
    const line = 'A'.repeat(1_000_000);
    expect(mask(line)).toBe(line);
  });
});
