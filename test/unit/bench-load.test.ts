import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { runLoad } from '../../bench/lib/load';
import { BENCH_SECRET } from '../../bench/lib/relay-env';
import { netboxSignature } from '../helpers/netbox-json';

// The load generator runs compiled (dist/bench/servers/load-generator.js): `npm test` builds first.
describe('bench load generator', () => {
  let server: http.Server;
  let url: string;
  const sockets = new Set<unknown>();
  const ids: number[] = [];
  let badSignatures = 0;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        if (req.headers['x-hook-signature'] !== netboxSignature(body, BENCH_SECRET)) badSignatures += 1;
        ids.push((JSON.parse(body.toString('utf8')) as { data: { id: number } }).data.id);
        res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
      });
    });
    server.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    sockets.clear();
    ids.length = 0;
    badSignatures = 0;
  });

  it('sends each request on a TCP connection of its own in new-connection mode, signed NetBox bodies with distinct ids', async () => {
    const result = await runLoad({ url, connections: 4, amount: 20, secret: BENCH_SECRET, firstId: 100, newConnection: true });
    expect(result).toMatchObject({ ok: 20, sent: 20, errors: 0, timeouts: 0, statusCodes: { '202': 20 } });
    expect(sockets.size).toBe(20);
    expect(badSignatures).toBe(0);
    expect([...ids].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => 100 + i));
  }, 30_000);

  it('keeps its connections open otherwise', async () => {
    const result = await runLoad({ url, connections: 4, amount: 20, secret: BENCH_SECRET, firstId: 200 });
    expect(result.ok).toBe(20);
    expect(sockets.size).toBe(4);
  }, 30_000);
});
