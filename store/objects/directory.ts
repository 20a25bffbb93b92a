/** An object store in a local directory: `npm start` without S3, and publishing to a folder. */
import { type Dirent, rename as renameWithCallback, writeFile as writeFileWithCallback } from 'node:fs';
import { mkdir, open, readdir, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { DependencyError } from '../errors.js';
import type { GetOptions, GetOutcome, ListedObject, WritableObjectStore } from './interface.js';
import { clampRange } from './range.js';

/** In-flight writes are named so; `list` skips them, so a killed writer never exposes a partial object. */
const TEMPORARY_PREFIX = '.tmp-';
const MISSING = new Set(['ENOENT', 'ENOTDIR', 'EISDIR']);
/** Stats and unlinks in flight at once; enough to keep libuv's four threads busy. */
const PARALLEL_FS_CALLS = 32;

/** Temporary names are unique per process (pid) and per write (counter); no random bytes needed. */
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
  return new DependencyError('objects', `${action} ${key} failed: ${(error as Error).message}`, {
    cause: error,
  });
}

/**
 * Objects are files under `root`, one per key (`o/abc` → `<root>/o/abc`). Writes go to a temporary file in
 * the same directory and are renamed into place, so readers see the old bytes or the new, never a part.
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
      const etag = `"${info.size.toString(36)}-${info.mtimeNs.toString(36)}-${info.ino.toString(36)}"`;
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
    const directory = dirname(path);
    const name = path.slice(directory.length + 1);
    const temporary = join(directory, `${TEMPORARY_PREFIX}${name}-${process.pid}-${temporaryCounter++}`);
    try {
      options.signal?.throwIfAborted();
      if (!this.#createdDirectories.has(directory)) {
        await mkdir(directory, { recursive: true });
        this.#createdDirectories.add(directory);
      }
      // No fsync: atomic against a killed process (the page cache survives it), which is what a
      // publish must survive; durability across power loss is left to the filesystem.
      await writeNewFile(temporary, body);
      await renameFile(temporary, path);
    } catch (error) {
      await unlink(temporary).catch(() => {});
      throw fault('put', key, error);
    }
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
        if (entry.isDirectory()) {
          if (`${key}/`.startsWith(prefix) || prefix.startsWith(`${key}/`)) pending.push(`${key}/`);
        } else if (entry.isFile() && !entry.name.startsWith(TEMPORARY_PREFIX) && key.startsWith(prefix)) {
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
