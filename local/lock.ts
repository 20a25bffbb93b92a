/**
 * One `npm start` per data directory. Two on the same `.local/` would both run s3rver and dynalite over the
 * same files (a second dynalite fails with "Database is closed" after the first has the database open, and a
 * republish of its source undoes a publisher's). The lock is a file created exclusively, before any server
 * starts, holding the holder's pid; it is stale once that process is gone.
 */
import { linkSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../store/objects/directory.js';

export const LOCK_FILE = 'npm-start.lock';

export interface LockHolder {
  pid: number;
  host: string;
  /** ISO 8601 time the holder took the lock. */
  since: string;
}

export type LockOutcome =
  | { ok: true; file: string; release(): void }
  | { ok: false; reason: 'in-use'; file: string; holder: LockHolder };

export interface LockOptions {
  pid?: number;
  host?: string;
  now?: Date;
  /** Whether process `pid` of this host still runs an `npm start` (tests inject one). */
  isRunning?: (pid: number) => boolean;
}

/**
 * Whether `pid` is a live process that may be an `npm start`. Signal 0 tests existence (EPERM: it exists,
 * owned by another user). Where /proc tells the command line (Linux), a live process that is not a Node.js
 * `local/start.ts` is a pid reused since the holder died, e.g. by a container restarted on the same volume.
 */
function runningStart(pid: number): boolean {
  if (!processAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('start');
  } catch {
    return true; // no /proc (macOS): trust the pid
  }
}

function readHolder(file: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockHolder>;
    if (!Number.isSafeInteger(holder.pid) || typeof holder.host !== 'string') return undefined;
    return { pid: holder.pid!, host: holder.host, since: String(holder.since ?? '') };
  } catch {
    return undefined;
  }
}

/**
 * The live holder of the data directory's lock, without taking it or writing anything (a stale or unreadable
 * lock: none); `npm start` asks before it checks its port, so that a second start on a directory in use is
 * told about the directory, whatever else it finds.
 */
export function lockHolder(directory: string, options: LockOptions = {}): LockHolder | undefined {
  const holder = readHolder(join(directory, LOCK_FILE));
  if (!holder) return undefined;
  const isRunning = options.isRunning ?? runningStart;
  const alive = holder.host !== (options.host ?? hostname()) || isRunning(holder.pid);
  return alive && holder.pid !== (options.pid ?? process.pid) ? holder : undefined;
}

/**
 * Take the data directory's lock, or say who holds it. The lock file appears with its content in one step
 * (written aside, then hard-linked into place, which fails if the name exists), so a reader never sees it
 * half written. A lock whose holder is gone (or unreadable: a crash between the two steps cannot leave
 * one) is removed and taken.
 * @example
 * const lock = lockDataDirectory('.local');
 * if (!lock.ok) throw new Error(`in use by ${lock.holder.pid}`);
 * process.on('exit', lock.release);
 */
export function lockDataDirectory(directory: string, options: LockOptions = {}): LockOutcome {
  const file = join(directory, LOCK_FILE);
  const ours: LockHolder = {
    pid: options.pid ?? process.pid,
    host: options.host ?? hostname(),
    since: (options.now ?? new Date()).toISOString(),
  };
  const isRunning = options.isRunning ?? runningStart;
  const aside = `${file}.${ours.pid}`;
  writeFileSync(aside, `${JSON.stringify(ours)}\n`);
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        createExclusively(aside, file);
        return { ok: true, file, release: () => releaseLock(file, ours.pid) };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = readHolder(file);
      const alive =
        holder !== undefined &&
        holder.pid !== ours.pid &&
        // Another host's process cannot be checked from here: its lock stands.
        (holder.host !== ours.host || isRunning(holder.pid));
      if (alive) return { ok: false, reason: 'in-use', file, holder };
      rmSync(file, { force: true });
    }
    // Another start took the stale lock between our removal and our link.
    const holder = readHolder(file);
    return { ok: false, reason: 'in-use', file, holder: holder ?? { pid: 0, host: '?', since: '' } };
  } finally {
    rmSync(aside, { force: true });
  }
}

/**
 * Create `file` with the content of `aside`, failing with EEXIST if it exists: a hard link where the file
 * system has them (the content appears with the name), else an exclusive create (FAT, some network shares).
 */
function createExclusively(aside: string, file: string): void {
  try {
    linkSync(aside, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw error;
    writeFileSync(file, readFileSync(aside), { flag: 'wx' });
  }
}

/** Remove the lock if it is still ours (never another start's). Synchronous: it runs in an exit handler. */
function releaseLock(file: string, pid: number): void {
  try {
    if (readHolder(file)?.pid === pid) unlinkSync(file);
  } catch {
    // Gone already: nothing to release.
  }
}
