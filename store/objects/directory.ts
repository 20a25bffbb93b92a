/** An object store in a local directory: `npm start` without S3, and publishing to a folder. */
import { createHash } from 'node:crypto';
import {
  type BigIntStats,
  type Dirent,
  rename as renameWithCallback,
  writeFile as writeFileWithCallback,
} from 'node:fs';
import { mkdir, open, readdir, rmdir, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { DependencyError, errorMessage } from '../errors.js';
import type {
  ConditionalPutOutcome,
  GetOptions,
  GetOutcome,
  ListedObject,
  WritableObjectStore,
  WriteCondition,
} from './interface.js';
import { clampRange } from './range.js';

/**
 * Writes go to a temporary file in this directory under the root, then are renamed into place (same
 * filesystem: atomic). `list` skips it, so a killed writer never exposes a partial object, and
 * `collectTemporary` removes what a killed writer left there without listing the objects.
 */
const TEMPORARY_DIR = '.tmp-writes';
/** Names skipped by `list`: the temporary directory, and temporary files of earlier releases (next to their object). */
const TEMPORARY_PREFIX = '.tmp-';
const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);
/** Stats and unlinks in flight at once; enough to keep libuv's four threads busy. */
const PARALLEL_FS_CALLS = 32;
/** A temporary file or mutex this old belongs to no live write (a write takes milliseconds). */
const ABANDONED_AFTER_MS = 10 * 60_000;
/** A conditional write's mutex this old was left by a killed process. */
const MUTEX_STALE_MS = 10_000;
/** How long a conditional write waits for another one of the same key. */
const MUTEX_WAIT_MS = 5_000;

/** This machine, in temporary file names: a file of another machine (a shared volume) is judged by age. */
const HOST =
  hostname()
    .replace(/[^A-Za-z0-9-]/g, '')
    .slice(0, 32) || 'host';
/** Temporary names are unique per machine (host), process (pid) and write (counter); no random bytes needed. */
let temporaryCounter = 0;

// The callback forms: a publish makes ~75,000 puts, and FileHandle-based promises cost a third more CPU.
function writeNewFile(path: string, body: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    writeFileWithCallback(path, body, { flag: 'wx' }, (error) => (error ? reject(error) : resolve()));
  });
}

function renameFile(from: string, to: string): Promise<void> {
  return new Promise((resolve, reject) => {
    renameWithCallback(from, to, (error) => (error ? reject(error) : resolve()));
  });
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function fault(action: string, key: string, error: unknown): DependencyError {
  if (error instanceof DependencyError) return error;
  return new DependencyError('objects', `${action} ${key} failed: ${errorMessage(error)}`, {
    cause: error,
  });
}

/** The ETag of a file: size, modification time and inode, so a rename always changes it. */
function etagOf(info: BigIntStats): string {
  return `"${info.size.toString(36)}-${info.mtimeNs.toString(36)}-${info.ino.toString(36)}"`;
}

/** Whether process `pid` of this machine is alive (a process of another user counts as alive). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return codeOf(error) === 'EPERM';
  }
}

/**
 * Whether a temporary file named `name` (this release: `<host>.<pid>.<n>`; earlier ones: `.tmp-<object>-<pid>-<n>`)
 * was left by a writer that is gone: a dead process of this machine, or older than any write takes.
 */
function abandoned(name: string, ageMs: number): boolean {
  if (ageMs > ABANDONED_AFTER_MS) return true;
  const current = /^([A-Za-z0-9-]+)\.(\d+)\.\d+$/.exec(name);
  if (current) return current[1] === HOST && !processAlive(Number(current[2]));
  const earlier = /-(\d+)-\d+$/.exec(name);
  return earlier !== null && !processAlive(Number(earlier[1]));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Objects are files under `root`, one per key (`o/abc` → `<root>/o/abc`). Writes go to a temporary file
 * (`<root>/.tmp-writes/`) and are renamed into place, so readers see the old bytes or the new, never a part.
 * The ETag is derived from size, modification time and inode: a rename always changes it.
 * @example
 * const store = new DirectoryObjectStore('/tmp/catalogue');
 * await store.put('current.json', Buffer.from('{}'));
 * const pointer = await store.get('current.json'); // → { ok: true, body, etag: '"2-…"' }
 */
export class DirectoryObjectStore implements WritableObjectStore {
  readonly #createdDirectories = new Set<string>();

  constructor(readonly root: string) {}

  /** The file of `key`; refuses keys that could leave the root. */
  pathOf(key: string): string {
    const segments = key.split('/');
    if (segments.some((s) => s === '' || s === '.' || s === '..' || s.includes('\\') || s.includes('\0'))) {
      throw new RangeError(`invalid object key: ${JSON.stringify(key)}`);
    }
    return join(this.root, ...segments);
  }

  async get(key: string, options: GetOptions = {}): Promise<GetOutcome> {
    const path = this.pathOf(key);
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      options.signal?.throwIfAborted();
      handle = await open(path, 'r');
    } catch (error) {
      if (MISSING.has(codeOf(error) ?? '')) return { ok: false, reason: 'not-found' };
      throw fault('get', key, error);
    }
    try {
      const info = await handle.stat({ bigint: true });
      if (!info.isFile()) return { ok: false, reason: 'not-found' };
      const etag = etagOf(info);
      if (options.ifNoneMatch !== undefined && options.ifNoneMatch === etag)
        return { ok: false, reason: 'not-modified' };
      const size = Number(info.size);
      const [start, end] = options.range ? clampRange(options.range, size) : [0, size];
      const body = Buffer.allocUnsafe(end - start);
      let filled = 0;
      while (filled < body.byteLength) {
        const { bytesRead } = await handle.read(body, filled, body.byteLength - filled, start + filled);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      options.signal?.throwIfAborted();
      return { ok: true, body: filled === body.byteLength ? body : body.subarray(0, filled), etag };
    } catch (error) {
      if (error instanceof RangeError) throw error;
      throw fault('get', key, error);
    } finally {
      await handle.close().catch(() => {});
    }
  }

  async put(key: string, body: Uint8Array, options: { signal?: AbortSignal } = {}): Promise<void> {
    const path = this.pathOf(key);
    let temporary: string | undefined;
    try {
      options.signal?.throwIfAborted();
      temporary = await this.#temporaryWith(path, body);
      await renameFile(temporary, path);
    } catch (error) {
      if (temporary) await unlink(temporary).catch(() => {});
      throw fault('put', key, error);
    }
  }

  /**
   * A conditional write with S3's semantics: the check and the rename run under a mutex of the key (a
   * directory created with `mkdir`, which fails if it exists: atomic), so of two conditional writers one
   * wins, and the object is never absent while it is replaced (rename over it). Unconditional `put`s take no
   * mutex: they are for content-addressed objects and files no reader compares.
   */
  async putIf(
    key: string,
    body: Uint8Array,
    condition: WriteCondition,
    options: { signal?: AbortSignal } = {},
  ): Promise<ConditionalPutOutcome> {
    const path = this.pathOf(key);
    let temporary: string | undefined;
    try {
      options.signal?.throwIfAborted();
      temporary = await this.#temporaryWith(path, body);
      const written = temporary;
      return await this.#underMutex(key, async () => {
        const info = await stat(path, { bigint: true }).catch((error: unknown) => {
          if (MISSING.has(codeOf(error) ?? '')) return undefined;
          throw error;
        });
        const holds =
          'ifNoneMatch' in condition ? !info : info !== undefined && etagOf(info) === condition.ifMatch;
        if (!holds) return { ok: false, reason: 'precondition-failed' } as const;
        await renameFile(written, path);
        return { ok: true, etag: etagOf(await stat(path, { bigint: true })) } as const;
      });
    } catch (error) {
      throw fault('put', key, error);
    } finally {
      if (temporary) await unlink(temporary).catch(() => {});
    }
  }

  /** Write `body` to a new temporary file for the object at `path` (creating the directories it needs). */
  async #temporaryWith(path: string, body: Uint8Array): Promise<string> {
    const directory = dirname(path);
    const temporaryDirectory = join(this.root, TEMPORARY_DIR);
    for (const needed of [directory, temporaryDirectory]) {
      if (!this.#createdDirectories.has(needed)) {
        await mkdir(needed, { recursive: true });
        this.#createdDirectories.add(needed);
      }
    }
    const temporary = join(temporaryDirectory, `${HOST}.${process.pid}.${temporaryCounter++}`);
    // No fsync: atomic against a killed process (the page cache survives it), which is what a
    // publish must survive; durability across power loss is left to the filesystem.
    await writeNewFile(temporary, body);
    return temporary;
  }

  /** Run `critical` holding the mutex of `key` (see putIf); a mutex left by a killed process expires. */
  async #underMutex<T>(key: string, critical: () => Promise<T>): Promise<T> {
    const name = `cas-${createHash('sha256').update(key).digest('base64url').slice(0, 22)}`;
    const mutex = join(this.root, TEMPORARY_DIR, name);
    const started = Date.now();
    for (;;) {
      try {
        await mkdir(mutex);
        break;
      } catch (error) {
        if (codeOf(error) !== 'EEXIST') throw error;
      }
      const age = await stat(mutex).then(
        (info) => Date.now() - info.mtimeMs,
        () => 0,
      );
      if (age > MUTEX_STALE_MS) await rmdir(mutex).catch(() => {});
      else if (Date.now() - started > MUTEX_WAIT_MS)
        throw new DependencyError('objects', `conditional write of ${key}: another one does not finish`);
      else await sleep(2);
    }
    try {
      return await critical();
    } finally {
      await rmdir(mutex).catch(() => {});
    }
  }

  /**
   * Remove temporary files whose writer is gone (a killed publish): those of the temporary directory, and
   * those earlier releases left next to their object in the root and `versions/` — and, with `deep`, in
   * `o/` (a listing of every object; a full build or repair lists them anyway).
   */
  async collectTemporary(options: { deep?: boolean } = {}): Promise<number> {
    const places = [TEMPORARY_DIR, '', 'versions', ...(options.deep ? ['o'] : [])];
    let removed = 0;
    for (const place of places) {
      const directory = place ? join(this.root, place) : this.root;
      let entries: Dirent[];
      try {
        entries = await readdir(directory, { withFileTypes: true });
      } catch (error) {
        if (MISSING.has(codeOf(error) ?? '')) continue;
        throw fault('collect', place, error);
      }
      const inTemporary = place === TEMPORARY_DIR;
      const candidates = entries.filter((entry) =>
        inTemporary ? entry.isFile() : entry.isFile() && entry.name.startsWith(TEMPORARY_PREFIX),
      );
      for (let i = 0; i < candidates.length; i += PARALLEL_FS_CALLS) {
        const results = await Promise.all(
          candidates.slice(i, i + PARALLEL_FS_CALLS).map(async ({ name }) => {
            const path = join(directory, name);
            const age = await stat(path).then(
              (info) => Date.now() - info.mtimeMs,
              () => -1,
            );
            if (age < 0 || !abandoned(name, age)) return 0;
            return unlink(path).then(
              () => 1,
              () => 0,
            );
          }),
        );
        for (const count of results) removed += count;
      }
    }
    return removed;
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<ListedObject> {
    // Walk the deepest directory the prefix names fully, then filter by the rest of the prefix.
    const base = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    const pending: string[] = [base];
    while (pending.length > 0) {
      const directoryKey = pending.pop()!;
      let entries: Dirent[];
      try {
        options.signal?.throwIfAborted();
        entries = await readdir(directoryKey ? this.pathOf(directoryKey.slice(0, -1)) : this.root, {
          withFileTypes: true,
        });
      } catch (error) {
        if (MISSING.has(codeOf(error) ?? '')) continue;
        throw fault('list', prefix, error);
      }
      const files: string[] = [];
      for (const entry of entries) {
        const key = `${directoryKey}${entry.name}`;
        if (entry.name.startsWith(TEMPORARY_PREFIX)) continue;
        if (entry.isDirectory()) {
          if (`${key}/`.startsWith(prefix) || prefix.startsWith(`${key}/`)) pending.push(`${key}/`);
        } else if (entry.isFile() && key.startsWith(prefix)) {
          files.push(key);
        }
      }
      files.sort();
      for (let i = 0; i < files.length; i += PARALLEL_FS_CALLS) {
        const batch = files.slice(i, i + PARALLEL_FS_CALLS);
        const sizes = await Promise.all(
          batch.map((key) =>
            stat(join(this.root, ...key.split('/'))).then(
              (info) => info.size,
              (error: unknown) => {
                if (MISSING.has(codeOf(error) ?? '')) return -1; // deleted while listing
                throw fault('list', prefix, error);
              },
            ),
          ),
        );
        for (let j = 0; j < batch.length; j++) {
          if (sizes[j]! >= 0) yield { key: batch[j]!, size: sizes[j]! };
        }
      }
    }
  }

  async delete(keys: readonly string[], options: { signal?: AbortSignal } = {}): Promise<void> {
    for (let i = 0; i < keys.length; i += PARALLEL_FS_CALLS) {
      options.signal?.throwIfAborted();
      await Promise.all(
        keys.slice(i, i + PARALLEL_FS_CALLS).map((key) =>
          unlink(this.pathOf(key)).catch((error: unknown) => {
            if (!MISSING.has(codeOf(error) ?? '')) throw fault('delete', key, error);
          }),
        ),
      );
    }
  }
}
