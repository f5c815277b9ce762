import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MAIN_JS, startChildRelay, type ChildRelay } from '../helpers/child-relay';
import { makeTempDir } from '../helpers/relay-harness';

/**
 * Every value is checked before start: what `check-config` accepts, `serve` starts with, and what `serve` would refuse,
 * `check-config` refuses first, both exiting 78 with the variable named and what it accepts. The command line is checked
 * too: a word that names no command is an error (64) with the nearest command; `serve` runs only when none is given.
 */
describe('every value checked before start', () => {
  let cwd: string;
  let relay: ChildRelay | undefined;
  beforeEach(() => {
    cwd = makeTempDir('config-before-start-');
  });
  afterEach(async () => {
    await relay?.kill();
    relay = undefined;
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  /** One command as a child process in `cwd` (no developer .env), with only this environment. */
  function run(args: string[], env: Record<string, string>) {
    return spawnSync(process.execPath, [MAIN_JS, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', DATA_DIR: path.join(cwd, 'data'), PORT: '0', ...env },
      encoding: 'utf8',
      timeout: 30_000,
    });
  }

  const refused: [string, Record<string, string>, string][] = [
    ['TRUST_PROXY=banana', { TRUST_PROXY: 'banana' }, '- TRUST_PROXY: invalid IP address: banana; it accepts true, false, a hop count'],
    ['TRUST_PROXY=10.0.0.0/33', { TRUST_PROXY: '10.0.0.0/33' }, '- TRUST_PROXY: invalid range on address: 10.0.0.0/33; it accepts'],
    ['HOST=not-an-address', { HOST: 'not-an-address', WEBHOOK_ALLOW_UNSIGNED: 'true' }, '- HOST: "not-an-address" does not resolve'],
  ];
  for (const [name, env, line] of refused) {
    it(`${name}: check-config and serve both exit 78 naming the variable and what it accepts`, () => {
      for (const command of ['check-config', 'serve']) {
        const result = run([command], env);
        expect({ command, status: result.status }).toEqual({ command, status: 78 });
        expect(result.stderr).toContain('the configuration is invalid (nothing was started)');
        expect(result.stderr).toContain(line);
        expect(result.stdout).not.toContain('The configuration is valid.');
        expect(result.stdout).not.toContain('listening on');
      }
    });
  }

  it('says what TRUST_PROXY and HOST accept, in the words check-config prints', () => {
    const trust = run(['check-config'], { TRUST_PROXY: 'banana' }).stderr;
    expect(trust).toContain('CIDR ranges and the names loopback, linklocal, uniquelocal');
    const host = run(['check-config'], { HOST: 'not-an-address', WEBHOOK_ALLOW_UNSIGNED: 'true' }).stderr;
    expect(host).toContain('accepts an IP address of this machine (0.0.0.0 or :: for all, 127.0.0.1) or a host name that resolves to one');
  });

  const accepted: Record<string, string>[] = [
    { TRUST_PROXY: 'true' },
    { TRUST_PROXY: 'false' },
    { TRUST_PROXY: '2' },
    { TRUST_PROXY: 'loopback, 10.0.0.0/8' },
    { TRUST_PROXY: 'uniquelocal' },
    { HOST: '0.0.0.0', WEBHOOK_SECRET: 'a-webhook-secret-of-32-characters' },
    { HOST: '::', WEBHOOK_SECRET: 'a-webhook-secret-of-32-characters' },
    { HOST: 'localhost' },
  ];
  it('check-config accepts every good TRUST_PROXY and HOST', () => {
    for (const env of accepted) {
      const result = run(['check-config'], env);
      expect({ env, status: result.status, stderr: result.stderr }).toEqual({ env, status: 0, stderr: '' });
      expect(result.stdout).toContain('The configuration is valid.');
    }
  });

  it('serve starts with a list of proxies and named ranges, on a host name', async () => {
    relay = await startChildRelay({ TRUST_PROXY: 'loopback, 10.0.0.0/8', HOST: 'localhost' }, { cwd });
    const health = await fetch(`http://localhost:${relay.port}/healthz`);
    expect(health.status).toBe(200);
  });

  it('a TEMPLATES_DIR that is not there: check-config and serve both exit 78 naming it', () => {
    for (const command of ['check-config', 'serve']) {
      const result = run([command], { TEMPLATES_DIR: path.join(cwd, 'my-templates') });
      expect({ command, status: result.status }).toEqual({ command, status: 78 });
      expect(result.stdout + result.stderr).toContain(
        'cannot read the templates folder (ENOENT): TEMPLATES_DIR accepts a copy of templates/',
      );
    }
  });

  it('a DATA_DIR that is a file: serve exits 78 naming it, having changed nothing', () => {
    const file = path.join(cwd, 'not-a-dir');
    fs.writeFileSync(file, 'x');
    const result = run(['serve'], { DATA_DIR: file });
    expect(result.status).toBe(78);
    expect(result.stdout).toContain(`DATA_DIR ${file} cannot be used (EEXIST); nothing was changed. DATA_DIR accepts a directory`);
    expect(fs.readFileSync(file, 'utf8')).toBe('x');
  });

  it('a DOTENV_CONFIG_PATH naming a missing or unreadable file is an error (78), not a start without configuration', () => {
    for (const file of [path.join(cwd, 'missing.env'), cwd]) {
      for (const command of ['check-config', 'serve']) {
        const result = run([command], { DOTENV_CONFIG_PATH: file });
        expect({ file, command, status: result.status }).toEqual({ file, command, status: 78 });
        expect(result.stderr).toContain(`- DOTENV_CONFIG_PATH: cannot read ${file}`);
        expect(result.stderr).toContain('accepts the path of a readable .env file');
      }
    }
  });

  it('the file DOTENV_CONFIG_PATH names is read', () => {
    const file = path.join(cwd, 'relay.env');
    fs.writeFileSync(file, 'TRUST_PROXY=banana\n');
    const result = run(['check-config'], { DOTENV_CONFIG_PATH: file });
    expect(result.status).toBe(78);
    expect(result.stderr).toContain('- TRUST_PROXY: invalid IP address: banana');
  });

  it('an unknown command is an error naming the nearest command (64); nothing starts', () => {
    const result = run(['chek-config'], {});
    expect(result.status).toBe(64);
    expect(result.stderr).toContain("unknown command 'chek-config'");
    expect(result.stderr).toContain('Did you mean check-config?');
    expect(result.stderr).not.toContain('serve');
    const sub = run(['waivers', 'lst'], {});
    expect(sub.status).toBe(64);
    expect(sub.stderr).toContain('Did you mean list?');
  });

  it('with no command at all, the relay serves', async () => {
    relay = await startChildRelay({}, { cwd, args: [] });
    expect((await fetch(`${relay.url}/healthz`)).status).toBe(200);
  });
});
