import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxy } from 'proxy';

/** The address the proxy connects from: a peer that accepts only it is reachable only through the proxy. */
export const PROXY_EGRESS_ADDRESS = '127.0.0.2';

export interface HttpProxy {
  /** http://127.0.0.1:<port> (no credentials). */
  url: string;
  /** What the proxy was asked to carry: `CONNECT host:port` for tunnels, `GET http://…` for plain requests. */
  requests: string[];
  /** Requests refused for want of the right Proxy-Authorization. */
  refused: number;
  close(): Promise<void>;
}

/**
 * A real forward proxy (TooTallNate's `proxy`, as Squid would: CONNECT tunnels and absolute-form requests)
 * on a loopback port 0, connecting onward from {@link PROXY_EGRESS_ADDRESS}. With `credentials`, it
 * answers 407 to any request without them as Basic Proxy-Authorization.
 */
export async function startHttpProxy(options: { credentials?: { user: string; password: string } } = {}): Promise<HttpProxy> {
  const server = createProxy(http.createServer());
  server.localAddress = PROXY_EGRESS_ADDRESS;
  const requests: string[] = [];
  let refused = 0;
  const expected = options.credentials
    ? `Basic ${Buffer.from(`${options.credentials.user}:${options.credentials.password}`).toString('base64')}`
    : undefined;
  server.authenticate = (req) => {
    requests.push(`${req.method} ${req.url}`);
    const ok = expected === undefined || req.headers['proxy-authorization'] === expected;
    if (!ok) refused += 1;
    return ok;
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    get refused() {
      return refused;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
