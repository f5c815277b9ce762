import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNetboxClient } from '../../src/netbox';
import { buildNetboxUrl, parseNetboxBase } from '../../src/report';

/** NETBOX_URL's base path holds: dot-segments, plain or percent-encoded, never lead the token out of it. */

const ESCAPES = [
  '/netbox/../other-app/api/x/',
  '/netbox/%2e%2e/other-app/api/x/',
  '/netbox/%2E%2E/other-app/api/x/',
  '/netbox/.%2e/other-app/api/x/',
  '/netbox/api/../../other-app/api/x/',
  '/netbox/./%2e%2e/other-app/api/x/?limit=1',
];

describe('dot-segments are resolved before the base-path check', () => {
  const base = parseNetboxBase('http://nb.example/netbox');

  it.each(ESCAPES)('%s stays under /netbox/', (path) => {
    const built = buildNetboxUrl(base, path);
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.url.pathname.startsWith('/netbox/')).toBe(true);
    expect(built.url.pathname).not.toContain('..');
  });

  it('an absolute URL on the origin with dot-segments is resolved the same way', () => {
    const built = buildNetboxUrl(base, 'http://nb.example/netbox/%2e%2e/other-app/api/x/');
    expect(built.ok && built.url.pathname).toBe('/netbox/other-app/api/x/');
  });

  it("NetBox's own paths and query strings are unchanged", () => {
    const built = buildNetboxUrl(base, '/netbox/api/plugins/validity/test-results/?report_id=5&passed=false');
    expect(built.ok && built.url.href).toBe('http://nb.example/netbox/api/plugins/validity/test-results/?report_id=5&passed=false');
  });

  it('the client sends the token to no path outside the base path', async () => {
    const seen: { path: string; authorization?: string }[] = [];
    const server = http.createServer((req, res) => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/netbox`;
    const client = createNetboxClient({ url, token: '0123456789abcdef0123456789abcdef01234567', timeoutMs: 2_000 });
    try {
      for (const path of ESCAPES) await client.getJson(path, { deadline: Date.now() + 5_000 });
      expect(seen).toHaveLength(ESCAPES.length);
      for (const request of seen) expect(request.path.startsWith('/netbox/')).toBe(true);
    } finally {
      client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
