/**
 * The baseline of the big-network benchmark: what a small script fetching the same pages would cost.
 * On `{type:'download', url, token, paths}` it GETs every path in sequence (one keep-alive connection),
 * counts the bytes and drops them. IPC: `ready`; `done {ms, bytes, pages, peakRssMb}`.
 */
import fs from 'node:fs';
import http from 'node:http';

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function download(url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent, headers: { Authorization: `Token ${token}`, Accept: 'application/json' } }, (res) => {
        let bytes = 0;
        res.on('data', (c: Buffer) => (bytes += c.length));
        res.on('end', () => resolve(bytes));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

function readPeakRssMb(): number {
  const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1];
  return Number(kb) / 1024;
}

process.on('message', (message: { type?: string; url: string; token: string; paths: string[] }) => {
  if (message?.type !== 'download') return;
  void (async () => {
    const started = performance.now();
    let bytes = 0;
    for (const p of message.paths) bytes += await download(`${message.url}${p}`, message.token);
    const ms = performance.now() - started;
    agent.destroy();
    process.send!({ type: 'done', ms, bytes, pages: message.paths.length, peakRssMb: readPeakRssMb() });
  })();
});
process.send!({ type: 'ready' });
