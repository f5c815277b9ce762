import fs from 'node:fs';
import path from 'node:path';
import { DataDirLockedError, lockDataDir } from '../../src/store';
import { makeTempDir } from '../helpers/relay-harness';

// Across processes (and after SIGKILL) in test/integration/one-relay-per-data-dir.test.ts; here the lock's own contract.
describe('lockDataDir', () => {
  it('refuses a second holder at once, naming the directory and the first PID, and lets the next in after release', () => {
    const dir = path.join(makeTempDir('relay-lock-'), 'data');
    const first = lockDataDir(dir, 4242);
    expect(fs.readFileSync(path.join(dir, 'relay.pid'), 'utf8').trim()).toBe('4242');
    let refused: unknown;
    try {
      lockDataDir(dir, 4343);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(DataDirLockedError);
    expect(refused).toMatchObject({ dataDir: dir, pid: 4242, message: `DATA_DIR ${dir} is in use by another relay (PID 4242)` });
    first.release();
    expect(fs.existsSync(path.join(dir, 'relay.pid'))).toBe(false);
    const next = lockDataDir(dir, 4343);
    next.release();
  });
});
