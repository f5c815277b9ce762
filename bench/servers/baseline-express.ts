/**
 * Baseline (a): a bare Express 5 app that parses the JSON body and answers 200 — what any Express
 * webhook receiver costs before it does anything. Same route and body limit as the relay.
 */
import http from 'node:http';
import express from 'express';

const app = express();
app.disable('x-powered-by');
app.post('/webhook', express.json({ limit: 1_048_576 }), (_req, res) => {
  res.status(200).json({ status: 'ok' });
});
const server = http.createServer(app);
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.send!({ type: 'ready', port: (server.address() as { port: number }).port });
});
process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
