/** One `npm start` per data directory: the lock file, its holder, stale locks and release. */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE, lockDataDirectory, lockHolder } from '../../local/lock.js';

const directories: string[] = [];
const directory = () => {
  const made = mkdtempSync(join(tmpdir(), 'cat-lock-'));
  directories.push(made);
  return made;
};
afterEach(() => {
  for (const made of directories.splice(0)) rmSync(made, { recursive: true, force: true });
});

const at = new Date('2026-11-24T15:00:00Z');

describe('lockDataDirectory', () => {
  it('takes a free directory, writing the holder, and releases it', () => {
    const dir = directory();

    const lock = lockDataDirectory(dir, { pid: 101, host: 'here', now: at });

    expect(lock.ok).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8'))).toEqual({
      pid: 101,
      host: 'here',
      since: '2026-11-24T15:00:00.000Z',
    });
    if (lock.ok) lock.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('refuses while the holder runs, naming it, and leaves its lock alone', () => {
    const dir = directory();
    const first = lockDataDirectory(dir, { pid: 101, host: 'here', now: at });

    const second = lockDataDirectory(dir, { pid: 202, host: 'here', isRunning: (pid) => pid === 101 });

    expect(first.ok).toBe(true);
    expect(second).toEqual({
      ok: false,
      reason: 'in-use',
      file: join(dir, LOCK_FILE),
      holder: { pid: 101, host: 'here', since: '2026-11-24T15:00:00.000Z' },
    });
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(101);
  });

  it('takes over a stale lock: its holder is gone, unreadable, or this very pid (a restarted container)', () => {
    for (const stale of [
      JSON.stringify({ pid: 101, host: 'here', since: '' }),
      'not json',
      JSON.stringify({ pid: 303, host: 'here', since: '' }),
    ]) {
      const dir = directory();
      writeFileSync(join(dir, LOCK_FILE), stale);

      const lock = lockDataDirectory(dir, { pid: 303, host: 'here', isRunning: () => false });

      expect(lock.ok).toBe(true);
      expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(303);
    }
  });

  it("trusts another host's lock (its process cannot be checked from here)", () => {
    const dir = directory();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 101, host: 'elsewhere', since: '' }));

    const lock = lockDataDirectory(dir, { pid: 202, host: 'here', isRunning: () => false });

    expect(lock).toMatchObject({ ok: false, holder: { host: 'elsewhere' } });
  });

  it('releases only its own lock', () => {
    const dir = directory();
    const lock = lockDataDirectory(dir, { pid: 101, host: 'here' });
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: 202, host: 'here', since: '' }));

    if (lock.ok) lock.release();

    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')).pid).toBe(202);
  });

  it('checks a live pid on this machine: this test process is running, a finished one is not', () => {
    const dir = directory();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: process.pid, host: 'here', since: '' }));

    // The real check: the pid is alive; its command line (vitest) is not an npm start, so on Linux the
    // lock is a reused pid's and stale.
    const lock = lockDataDirectory(dir, { pid: 404, host: 'here' });

    expect(lock.ok).toBe(process.platform === 'linux');
  });
});

describe('lockHolder', () => {
  it('names a live holder without taking the lock or writing anything, and none for a free or stale one', () => {
    const dir = directory();
    expect(lockHolder(dir, { pid: 202, host: 'here' })).toBeUndefined();
    const first = lockDataDirectory(dir, { pid: 101, host: 'here', now: at });
    const before = readFileSync(join(dir, LOCK_FILE), 'utf8');

    expect(lockHolder(dir, { pid: 202, host: 'here', isRunning: (pid) => pid === 101 })).toEqual({
      pid: 101,
      host: 'here',
      since: '2026-11-24T15:00:00.000Z',
    });
    expect(lockHolder(dir, { pid: 202, host: 'here', isRunning: () => false })).toBeUndefined();
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(before);
    if (first.ok) first.release();
  });
});
