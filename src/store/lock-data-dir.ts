import fs from 'node:fs';
import path from 'node:path';
import { loadSqliteDriver } from './sqlite-store';

/** Another process holds the data directory: `pid` is what it wrote beside the lock, if anything yet. */
export class DataDirLockedError extends Error {
  readonly code = 'DATA_DIR_LOCKED';
  constructor(
    readonly dataDir: string,
    readonly pid: number | undefined,
  ) {
    super(`DATA_DIR ${dataDir} is in use by another relay (PID ${pid ?? 'unknown'})`);
    this.name = 'DataDirLockedError';
  }
}

/** `release` lets the next relay in; the OS does the same when this process dies. */
export type DataDirLock = { release(): void };

/**
 * Takes the data directory for this process, or throws {@link DataDirLockedError} at once. The lock is SQLite's
 * `locking_mode=EXCLUSIVE` on a file of its own (the data file stays shared with `backup`): a POSIX lock the kernel
 * drops however the process ends, so a crash never leaves the directory held.
 */
export function lockDataDir(dataDir: string, pid: number = process.pid): DataDirLock {
  fs.mkdirSync(dataDir, { recursive: true });
  // Beside the lock: the lock file itself cannot be read while held.
  const pidFile = path.join(dataDir, 'relay.pid');
  // timeout 0: a held lock is answered at once, not after better-sqlite3's default 5 s wait.
  const db = new (loadSqliteDriver())(path.join(dataDir, 'relay.lock'), { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    // No journal file beside the lock: it holds one row that nothing needs to survive.
    db.pragma('journal_mode = MEMORY');
    // The first write takes the exclusive lock, which this connection then keeps.
    db.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER); DELETE FROM holder;');
    db.prepare('INSERT INTO holder (pid) VALUES (?)').run(pid);
  } catch (error) {
    db.close();
    const { code } = error as { code?: string };
    if (code?.startsWith('SQLITE_BUSY') || code === 'SQLITE_LOCKED') throw new DataDirLockedError(dataDir, readHolderPid(pidFile));
    throw error;
  }
  fs.writeFileSync(pidFile, `${pid}\n`);
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      // Only our own PID is removed: after a crash the next holder has written its own.
      if (readHolderPid(pidFile) === pid) fs.rmSync(pidFile, { force: true });
      db.close();
    },
  };
}

function readHolderPid(pidFile: string): number | undefined {
  try {
    const pid = Number.parseInt(fs.readFileSync(pidFile, 'utf8'), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
