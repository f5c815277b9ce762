import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface TestCertificates {
  caFile: string;
  key: Buffer;
  cert: Buffer;
}

/**
 * A private CA and a server certificate for 127.0.0.1 / localhost, made with `openssl` at test time
 * (nothing secret is committed). The server certificate is what a self-signed SMTP server presents;
 * with `expired`, it stopped being valid a day ago (signed by the same CA, so only its dates are wrong).
 */
export function createTestCertificates(dir: string, options: { expired?: boolean } = {}): TestCertificates {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=compliance-relay test CA',
    '-keyout',
    file('ca.key'),
    '-out',
    file('ca.pem'),
  );
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', file('server.key'), '-out', file('server.csr'));
  fs.writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  openssl(
    'x509',
    '-req',
    '-in',
    file('server.csr'),
    '-CA',
    file('ca.pem'),
    '-CAkey',
    file('ca.key'),
    '-CAcreateserial',
    '-days',
    options.expired ? '-1' : '2',
    '-extfile',
    file('server.ext'),
    '-out',
    file('server.pem'),
  );
  return { caFile: file('ca.pem'), key: fs.readFileSync(file('server.key')), cert: fs.readFileSync(file('server.pem')) };
}
