import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A plain HTTP server on a loopback port 0, for a peer whose answers a test writes by hand. */
export interface HttpListener {
  url: string;
  close(): Promise<void>;
}

export async function startHttpListener(handler: http.RequestListener): Promise<HttpListener> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A loopback port that refuses every connection: port 1 is privileged, so no test's listener can take it, as one
 * could take a port bound and closed again.
 */
export const REFUSED_PORT = 1;
