import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { SqliteStore } from '../../src/store';
import { buildBody, buildReportData } from '../helpers/netbox-json';
import { makeTempDir, postWebhook, waitUntil } from '../helpers/relay-harness';
import { startChildRelay } from '../helpers/child-relay';
import { startSmtpPeer } from '../helpers/smtp-peer';

const MAIN = path.join(__dirname, '../../dist/src/main.js');

beforeAll(() => {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run "npm run build" (npm test does it first)`);
});

/** Only what the relay needs: no inherited configuration from the machine running the tests. */
function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...extra };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('the compliance-relay process', () => {
  it('refuses a bad configuration with exit code 78, every problem by variable, no stack and no secret', () => {
    const cwd = makeTempDir();
    const result = spawnSync(process.execPath, [MAIN, 'serve'], {
      cwd,
      env: baseEnv({
        PORT: 'http',
        SMTP_URL: 'smtp://user:Sup3rS3cret@mail.example.com',
        MAIL_TIMEZONE: 'Nowhere/Land',
        WEBHOOK_SECRET: 'a',
        WEBHOOK_SECRET_FILE: '/x',
      }),
      encoding: 'utf8',
    });
    expect(result.status).toBe(78);
    for (const v of ['PORT', 'MAIL_TIMEZONE', 'WEBHOOK_SECRET']) expect(result.stderr).toContain(`- ${v}:`);
    expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(result.stderr + result.stdout).not.toContain('Sup3rS3cret');
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('check-config names a bad port, a bad address and a wrong SMTP scheme in one run', () => {
    const cwd = makeTempDir();
    const result = spawnSync(process.execPath, [MAIN, 'check-config'], {
      cwd,
      env: baseEnv({ PORT: 'abc', MAIL_TO: 'bad', SMTP_URL: 'ftp://x' }),
      encoding: 'utf8',
    });
    expect(result.status).toBe(78);
    for (const v of ['PORT', 'MAIL_TO', 'SMTP_URL']) expect(result.stderr).toContain(`- ${v}:`);
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('is reached through the package bin (`npx compliance-relay`) and prints its version', () => {
    const root = path.join(__dirname, '../..');
    const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
    const result = spawnSync('npx', ['--no-install', 'compliance-relay', '--version'], {
      cwd: root,
      env: { ...process.env },
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(version);
  });

  it('check-config says the configuration is valid and prints it without secrets', () => {
    const cwd = makeTempDir();
    fs.writeFileSync(path.join(cwd, '.env'), 'SMTP_URL=smtp://relay:Pa55-from-dotenv@mail.example.com:587\nMAIL_TO=ops@example.com\n');
    const result = spawnSync(process.execPath, [MAIN, 'check-config'], { cwd, env: baseEnv({}), encoding: 'utf8' });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('The configuration is valid.');
    expect(result.stdout).toContain('mail.example.com');
    expect(result.stdout).not.toContain('Pa55-from-dotenv');
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('on SIGTERM stops accepting, lets the send in flight finish, and exits 0 with nothing lost', async () => {
    const smtp = await startSmtpPeer({ behaviour: { type: 'accept', delayMs: 1500 } });
    const dataDir = makeTempDir();
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, [MAIN, 'serve'], {
      env: baseEnv({
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        SMTP_URL: smtp.url,
        MAIL_TO: 'ops@example.com',
        SHUTDOWN_TIMEOUT_MS: '10000',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitUntil(() => output.includes('listening on'), 15_000, 'the relay to listen');
      const res = await postWebhook(`http://127.0.0.1:${port}/webhook`, buildBody({ data: buildReportData({ id: 501 }) }));
      expect(res.status).toBe(202);
      // The server has the whole message and holds its answer for 1.5 s: the send is in flight.
      await waitUntil(() => (smtp.attempts >= 1 ? true : undefined), 10_000, 'the message to reach the SMTP server');
      expect(smtp.received).toHaveLength(0);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(smtp.received).toHaveLength(1);
      const store = SqliteStore.open({ dataDir });
      const [delivery] = await store.listDeliveries();
      expect(delivery).toMatchObject({ reportId: 501, state: 'sent' });
      await store.close();
      await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await smtp.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('on SIGTERM, while a client still holds a request open, finishes the send in flight and starts no other', async () => {
    const smtp = await startSmtpPeer({ behaviour: { type: 'accept', delayMs: 1000 } });
    const dataDir = makeTempDir();
    const env = { DATA_DIR: dataDir, SMTP_URL: smtp.url, SMTP_POOL_SIZE: '1', MAIL_TO: 'ops@example.com', SHUTDOWN_TIMEOUT_MS: '4000' };
    const child = await startChildRelay(env, { cwd: dataDir });
    const slow = new net.Socket();
    try {
      const url = `${child.url}/webhook`;
      expect((await postWebhook(url, buildBody({ data: buildReportData({ id: 601 }) }))).status).toBe(202);
      await waitUntil(() => (smtp.attempts >= 1 ? true : undefined), 10_000, "report 601's mail to reach the SMTP server");
      // Queued behind it (one send at a time).
      expect((await postWebhook(url, buildBody({ data: buildReportData({ id: 602 }) }))).status).toBe(202);
      // A client that sent half of its request: the server waits for it until the bound.
      await new Promise<void>((resolve) => slow.connect(child.port, '127.0.0.1', resolve));
      slow.on('error', () => undefined);
      slow.write('POST /webhook HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"event"');
      child.proc.kill('SIGTERM');
      expect((await child.exited).code).toBe(0);
      expect(smtp.received.map((m) => m.parsed.headers.get('x-compliance-report-id'))).toEqual(['601']);
      const store = SqliteStore.open({ dataDir });
      const states = (await store.listDeliveries()).map((d) => [d.reportId, d.state]).sort();
      expect(states).toEqual([
        [601, 'sent'],
        [602, 'queued'],
      ]);
      await store.close();
    } finally {
      slow.destroy();
      await child.kill('SIGKILL');
      await smtp.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
