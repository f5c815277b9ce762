import fs from 'node:fs';
import path from 'node:path';
import { signBody, verifySignature } from '../../src/webhook';

const SAMPLE = fs.readFileSync(path.join(__dirname, '../../examples/delivery-netbox-3.6.json'));

/**
 * Known answers computed outside this code base:
 *   openssl dgst -sha512 -hmac 'NetBox-secret' examples/delivery-netbox-3.6.json
 *   python3 -c "hmac.new('sécret-ü'.encode(), body, hashlib.sha512).hexdigest()"
 *   printf '' | openssl dgst -sha512 -hmac 'k'
 */
const VECTORS = [
  {
    secret: 'NetBox-secret',
    body: SAMPLE,
    hex: '0fb322a3c2801ae7b0b379183ebea4f32780af2ae46e266a08fcf9d090afb271d2e6c0f9b350901d1485721cb1f8f5c9a51e25eaa57c76a8d932e0e7db5fd149',
  },
  {
    secret: 's\u00e9cret-\u00fc',
    body: SAMPLE,
    hex: '16efda1a429ee9ab46ed05156b1ad07704146bb81b08b47a3165cce25ce978f3f21cf9b7e252a53b93e7b53a7d212fbb644d95e24c93b3810a4a9d55abd7e410',
  },
  {
    secret: 'k',
    body: Buffer.alloc(0),
    hex: '893ccbf5d0b335fcda6f625e4a59055a364d75a9251589428750782c116830a1af455efe1094c1901d0e8fd5beb6df64c6d5fe1c6f09be6ef47fb3987260cdd8',
  },
];

describe('X-Hook-Signature (HMAC-SHA512 of the exact body bytes)', () => {
  it("the sample body is the 772 bytes of validity's recorded exchange", () => {
    expect(SAMPLE.length).toBe(772);
  });

  it.each(VECTORS)('matches the independently computed signature (vector %#)', ({ secret, body, hex }) => {
    expect(signBody(body, secret)).toBe(hex);
    expect(verifySignature(body, hex, [secret])).toBe('valid');
  });

  it('accepts the previous secret during a rotation, and only configured secrets', () => {
    const { hex, body } = VECTORS[0];
    expect(verifySignature(body, hex, ['new-secret', 'NetBox-secret'])).toBe('valid');
    expect(verifySignature(body, hex, ['new-secret'])).toBe('invalid');
  });

  it('is computed on bytes: the same JSON re-serialized compactly does not verify', () => {
    const { hex } = VECTORS[0];
    const compact = Buffer.from(JSON.stringify(JSON.parse(SAMPLE.toString('utf8'))));
    expect(compact.length).toBeLessThan(SAMPLE.length);
    expect(verifySignature(compact, hex, ['NetBox-secret'])).toBe('invalid');
  });

  it('says missing for an absent or blank header, invalid for truncated, altered or prefixed ones', () => {
    const { hex, body } = VECTORS[0];
    expect(verifySignature(body, undefined, ['NetBox-secret'])).toBe('missing');
    expect(verifySignature(body, '  ', ['NetBox-secret'])).toBe('missing');
    expect(verifySignature(body, hex.slice(0, 64), ['NetBox-secret'])).toBe('invalid');
    expect(verifySignature(body, `sha512=${hex}`, ['NetBox-secret'])).toBe('invalid');
    const flipped = (hex[0] === '0' ? '1' : '0') + hex.slice(1);
    expect(verifySignature(body, flipped, ['NetBox-secret'])).toBe('invalid');
    expect(verifySignature(Buffer.concat([body, Buffer.from(' ')]), hex, ['NetBox-secret'])).toBe('invalid');
  });

  it('tolerates an upper-case hex header (the same digest)', () => {
    const { hex, body } = VECTORS[0];
    expect(verifySignature(body, hex.toUpperCase(), ['NetBox-secret'])).toBe('valid');
  });
});
