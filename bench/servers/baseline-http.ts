/**
 * Baseline (b), the ceiling: plain node:http reading the whole body and answering 200. Nothing a
 * receiver written in Node can do is cheaper than this.
 */
import http from 'node:http';

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    Buffer.concat(chunks);
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    res.end('{"status":"ok"}');
  });
});
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.send!({ type: 'ready', port: (server.address() as { port: number }).port });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
