import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { startChildRelay, MAIN_JS, type ChildRelay } from '../helpers/child-relay';
import { makeTempDir } from '../helpers/relay-harness';

/**
 * Issue 14, item 2: without a webhook secret the relay listens on loopback only, and refuses to
 * listen beyond it unless told so. A client on 127.0.0.2 stands for another machine.
 */

/** The JSON log lines of a child relay. */
function logLines(relay: ChildRelay): { level: number; msg: string; host?: string }[] {
  return relay.output.flatMap((line) => {
    try {
      return [JSON.parse(line) as { level: number; msg: string; host?: string }];
    } catch {
      return [];
    }
  });
}

/** Whether a TCP connection to host:port is accepted. */
function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('where the relay listens without a webhook secret (issue 14)', () => {
  let cwd: string;
  let relay: ChildRelay | undefined;
  beforeEach(() => {
    cwd = makeTempDir();
  });
  afterEach(async () => {
    await relay?.kill();
    relay = undefined;
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('with no configuration at all, listens on 127.0.0.1 only, saying so', async () => {
    // HOST empty is HOST unset: the relay's own default.
    relay = await startChildRelay({ HOST: '' }, { cwd });
    const listening = logLines(relay).find((l) => l.msg.startsWith('listening on'));
    expect(listening?.host).toBe('127.0.0.1');
    expect(await connects('127.0.0.1', relay.port)).toBe(true);
    expect(await connects('127.0.0.2', relay.port)).toBe(false);
    expect(relay.output.join('\n')).toContain(
      'WEBHOOK_SECRET is not set: deliveries are accepted WITHOUT a signature check, on 127.0.0.1 (loopback) only',
    );
  });

  it('refuses to listen on 0.0.0.0 without a secret: exit 78, naming WEBHOOK_SECRET', () => {
    const result = spawnSync(process.execPath, [MAIN_JS, 'serve'], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOST: '0.0.0.0', PORT: '0' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(78);
    expect(result.stderr).toContain('- WEBHOOK_SECRET: is required to listen on HOST=0.0.0.0');
  });

  it('check-config lists a blank secret, the missing one and the other problems in one pass', () => {
    const result = spawnSync(process.execPath, [MAIN_JS, 'check-config'], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOST: '0.0.0.0', WEBHOOK_SECRET_PREVIOUS: '   ', SMTP_URL: 'smtp://mail.example.com' },
      encoding: 'utf8',
    });
    expect(result.status).toBe(78);
    for (const line of [
      '- WEBHOOK_SECRET: is required to listen on HOST=0.0.0.0',
      '- WEBHOOK_SECRET_PREVIOUS: is empty or only white space',
      '- MAIL_TO: is required',
    ]) {
      expect(result.stderr).toContain(line);
    }
  });

  it('listens on 0.0.0.0 unsigned only with WEBHOOK_ALLOW_UNSIGNED=true, warning at start', async () => {
    relay = await startChildRelay({ HOST: '0.0.0.0', WEBHOOK_ALLOW_UNSIGNED: 'true' }, { cwd });
    expect(await connects('127.0.0.2', relay.port)).toBe(true);
    const warning = logLines(relay).find((l) => l.msg.startsWith('WEBHOOK_ALLOW_UNSIGNED=true'));
    expect(warning).toMatchObject({ level: 40, msg: expect.stringContaining('WITHOUT a signature from anyone who can reach 0.0.0.0') });
  });
});
