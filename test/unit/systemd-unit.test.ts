import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const UNIT = 'deploy/systemd/compliance-relay.service';

/** `Key=value` lines of the unit's [Service] section, each key with all its values in order. */
function readService(): Map<string, string[]> {
  const text = fs.readFileSync(path.join(ROOT, UNIT), 'utf8');
  const section = text.split(/^\[Service\]$/m)[1].split(/^\[/m)[0];
  const keys = new Map<string, string[]>();
  for (const [, key, value] of section.matchAll(/^(\w+)=(.*)$/gm)) keys.set(key, [...(keys.get(key) ?? []), value]);
  return keys;
}

/** The systemd unit docs/install.md installs: what it starts, as whom, with which settings and data directory. */
describe(UNIT, () => {
  const service = readService();
  const one = (key: string) => {
    expect([key, service.get(key)?.length]).toEqual([key, 1]);
    return service.get(key)![0];
  };

  it("starts `serve` with package.json's node flags, from the install prefix docs/install.md uses", () => {
    const start = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    const [node, ...args] = one('ExecStart').split(' ');
    expect(node).toBe('/usr/bin/node');
    const main = args.find((arg) => arg.endsWith('dist/src/main.js'))!;
    expect(main).toBe('/opt/compliance-relay/lib/node_modules/compliance-relay/dist/src/main.js');
    expect(['node', ...args.map((arg) => (arg === main ? 'dist/src/main.js' : arg))].join(' ')).toBe(start);
    const install = fs.readFileSync(path.join(ROOT, 'docs/install.md'), 'utf8');
    expect(install).toContain('npm install -g --prefix /opt/compliance-relay ');
  });

  it('runs as an unprivileged user, with its settings from an environment file and its outbox in its state directory', () => {
    expect(one('User')).not.toMatch(/^(root|0)$/);
    expect(one('EnvironmentFile')).toBe('/etc/compliance-relay/relay.env');
    expect(service.get('Environment')).toContain(`DATA_DIR=/var/lib/${one('StateDirectory')}`);
    expect(one('NoNewPrivileges')).toBe('yes');
    // A configuration the relay refuses (exit 78) is not restarted in a loop.
    expect(one('RestartPreventExitStatus')).toBe('78');
  });
});
