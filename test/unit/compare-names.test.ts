import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { compareNames } from '../../src/shared';

const distPath = (...parts: string[]) => path.join(__dirname, '..', '..', 'dist', ...parts);

describe('compareNames: the one order of names in mails, digests and pages', () => {
  it('orders by characters, letters’ case aside, then capitals first', () => {
    expect(['z-sw1', 'sw10', 'SW1', 'aa-sw1', 'sw_1', 'sw1', 'sw2', 'Sw2'].sort(compareNames)).toEqual([
      'aa-sw1',
      'SW1',
      'sw1',
      'sw10',
      'Sw2',
      'sw2',
      'sw_1',
      'z-sw1',
    ]);
  });

  it('is the same in a process whose locale is Danish, where collation puts aa after z', () => {
    // The built module, as `serve` loads it, in a process started as on a server with LANG=da_DK.UTF-8.
    const script = `const { compareNames } = require(${JSON.stringify(distPath('src', 'shared'))});
      const names = ['z-sw1', 'aa-sw1'];
      console.log(JSON.stringify([[...names].sort((a, b) => a.localeCompare(b)), [...names].sort(compareNames)]));`;
    const output = execFileSync(process.execPath, ['-e', script], {
      env: { PATH: process.env.PATH, LANG: 'da_DK.UTF-8', LC_ALL: 'da_DK.UTF-8' },
    });
    const [byLocale, byName] = JSON.parse(output.toString()) as string[][];
    expect(byLocale).toEqual(['z-sw1', 'aa-sw1']);
    expect(byName).toEqual(['aa-sw1', 'z-sw1']);
  });
});
