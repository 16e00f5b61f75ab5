import fs from 'node:fs';
import path from 'node:path';

export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the exclusive lock on an embedded data directory. PGlite cannot be shared by two
 * processes (a second opener silently corrupts the files), so a second Dialer refuses to start.
 * The lock file holds the owner's PID; a lock left by a process that died is taken over.
 * Returns the release function.
 */
export function lockDataDir(dir: string): () => void {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'dialer.lock');
  for (let tries = 0; tries < 3; tries++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.unlinkSync(file);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number.parseInt(fs.readFileSync(file, 'utf8').trim(), 10);
      if (Number.isInteger(owner) && owner > 0 && (owner === process.pid || alive(owner))) {
        throw new DataDirLockedError(
          `The data directory ${dir} is in use by another Dialer process (pid ${owner}). ` +
            'The embedded database serves one process only: stop the other process, point DIALER_DATA_DIR ' +
            'elsewhere, or set DATABASE_URL to share a PostgreSQL server between processes.',
        );
      }
      // Stale lock from a process that is gone: remove it and try again.
      fs.rmSync(file, { force: true });
    }
  }
  throw new DataDirLockedError(`Could not take the lock on ${dir}`);
}
