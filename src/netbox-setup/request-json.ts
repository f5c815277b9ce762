import http from 'node:http';
import https from 'node:https';
import type { FetchLike } from './netbox-api';

/** Largest answer read from NetBox during setup (a page of webhooks or event rules is small). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * A {@link FetchLike} over node's http/https, so the setup trusts NETBOX_CA_FILE (and verifies NetBox's
 * certificate) like the relay's own NetBox client.
 */
export function createNodeFetch(options: { ca?: string | Buffer } = {}): FetchLike {
  return (url, init) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const lib = target.protocol === 'https:' ? https : http;
      const req = lib.request(
        target,
        {
          method: init.method,
          headers: { ...init.headers, ...(init.body !== undefined ? { 'Content-Length': String(Buffer.byteLength(init.body)) } : {}) },
          signal: init.signal,
          ...(target.protocol === 'https:' ? { ca: options.ca } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) {
              req.destroy(Object.assign(new Error(`answer larger than ${MAX_ANSWER_BYTES} bytes`), { code: 'ETOOBIG' }));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => {
            const body = Buffer.concat(chunks).toString('utf8');
            resolve({ status: res.statusCode ?? 0, text: () => Promise.resolve(body) });
          });
          res.on('error', reject);
        },
      );
      req.on('error', (error) => reject(Object.assign(new Error(error.message), { cause: error })));
      if (init.body !== undefined) req.write(init.body);
      req.end();
    });
}
