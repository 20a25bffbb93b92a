/**
 * The local DynamoDB's storage: dynalite's own in-memory store (memory-level), made durable by a journal of
 * ours, instead of LevelDB on disk.
 *
 * Why: on LevelDB every metering write cost two reads and a write through LevelDB's native binding and thread
 * pool (the table's description and the item, then the item), and the data directory and the process grew
 * under load and only partly came back (the counters' LevelDB reached 214 MB after 95 minutes of rounds, the
 * process 309 → 521 MB idle): LevelDB keeps every version of a rewritten item until its compactions catch up.
 * In memory a read or a write is a lookup in a sorted tree, and only the live items are held.
 *
 * Durable as LevelDB was (keys and counters survive a restart, a crash, kill -9): every write that dynalite
 * applies is appended to `journal.jsonl` in the data directory before it is applied (one `write(2)` per
 * operation, no fsync — LevelDB's own default), one JSON line per operation: `["key",value]` for a put,
 * `["key"]` for a delete. A start reads the journal (the last line may be cut by a crash: it is dropped) and
 * writes it anew with only the live items; so does a running server once the journal has grown past
 * `compactBytes` and twice its live size, so the file stays within a few times the live data. On a full disk a
 * write the journal cannot append whole fails unapplied (dynalite answers 500; the request path's meter and
 * the admin API answer 503) and the file is cut back to its last whole line; a compaction that has no room
 * leaves the journal as it is, at a start too, so the local DynamoDB starts and serves on a full disk. A data directory
 * of an earlier version (LevelDB) is read once with dynalite's own LevelDB binding, written as a journal, and
 * its LevelDB files removed.
 *
 * Hooked into dynalite where it creates its store (`db.create`, reached through internals.ts, the one seam, on the shared CommonJS module object
 * at call time): a dynalite started with a `journal` option gets an in-memory store loaded from it, whose
 * writes go to it. Everything above the store — the protocol, validation, expressions, conditions, locking — is
 * dynalite's.
 */
import {
  closeSync,
  existsSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { type DynaliteStore, dynaliteDb, dynaliteLevel, levelMethods } from './internals.js';

export const JOURNAL_FILE = 'journal.jsonl';

/** Below this the journal is never compacted while serving (a start always compacts it). */
export const COMPACT_BYTES = 8 * 2 ** 20;

type Callback = (error: Error | null, value?: unknown) => void;
interface Operation {
  type: 'put' | 'del';
  key: string;
  value?: unknown;
}
/** An operation as the journal records it: a put's value as its JSON text. */
interface Entry {
  key: string;
  /** Absent for a delete. */
  json?: string | undefined;
}

/** What a journal line encodes, as JSON text: the value already stringified. */
function line(key: string, json: string | undefined): string {
  return json === undefined ? `[${JSON.stringify(key)}]\n` : `[${JSON.stringify(key)},${json}]\n`;
}

/**
 * The live items of a journal's text: the last operation on each key wins; a cut last line is dropped, and so
 * is a line an earlier version cut short on a full disk and wrote the next one after (it was never whole).
 */
export function replay(text: string): Map<string, string> {
  const live = new Map<string, string>();
  const lines = text.split('\n');
  // A file that does not end with a newline ends with a line cut short by a crash.
  lines.pop();
  for (const raw of lines) {
    if (!raw) continue;
    let entry: [string, unknown?];
    try {
      entry = JSON.parse(raw) as [string, unknown?];
    } catch {
      continue;
    }
    if (entry.length === 1) live.delete(entry[0]);
    else live.set(entry[0], JSON.stringify(entry[1]));
  }
  return live;
}

/** The length in bytes of a file's whole lines (up to its last newline). */
function wholeLines(file: string): number {
  const bytes = existsSync(file) ? readFileSync(file) : Buffer.alloc(0);
  return bytes.lastIndexOf(0x0a) + 1;
}

/**
 * What marks a journal for the hook below, across copies of this module: the hook is installed once on dynalite's
 * shared CommonJS module, and a test runner that evaluates this module again per suite (vitest, isolate: false)
 * hands it journals of another copy's class, which `instanceof` would not recognise (the store then made without
 * the journal, and without `onStore`).
 */
const JOURNAL = Symbol.for('catalogue-read-api.dynamo-journal.journal');

export class Journal {
  readonly [JOURNAL] = true;
  readonly #file: string;
  readonly #compactBytes: number;
  /** The live items, as the JSON text of their values: what a compaction writes. */
  readonly #live: Map<string, string>;
  #liveBytes = 0;
  #fileBytes = 0;
  #fd: number | undefined;
  /** Settles once the store created on this journal holds its items (a failed load must fail the start). */
  loading: Promise<void> = Promise.resolve();

  private constructor(
    directory: string,
    live: Map<string, string>,
    options: { compactBytes: number; fromFile: boolean },
  ) {
    this.#file = join(directory, JOURNAL_FILE);
    this.#live = live;
    this.#compactBytes = options.compactBytes;
    for (const [key, json] of live) this.#liveBytes += line(key, json).length;
    try {
      this.compact();
    } catch (error) {
      // No room for the compacted file (a full disk): a journal read from its file goes on as it is, ended at its
      // last whole line; one read from LevelDB must be written first (LevelDB is removed after).
      if (!options.fromFile) throw error;
      this.#fd = openSync(this.#file, 'a');
      this.#fileBytes = wholeLines(this.#file);
      ftruncateSync(this.#fd, this.#fileBytes);
    }
  }

  /**
   * The journal of `directory`, compacted: read from `journal.jsonl`, or from the LevelDB of an earlier
   * version (then removed), or empty; a directory that does not exist yet is made, as LevelDB made it.
   */
  static async open(directory: string, options: { compactBytes?: number } = {}): Promise<Journal> {
    mkdirSync(directory, { recursive: true });
    const file = join(directory, JOURNAL_FILE);
    let live: Map<string, string>;
    const fromFile = existsSync(file);
    if (fromFile) live = replay(readFileSync(file, 'utf8'));
    else if (existsSync(join(directory, 'CURRENT'))) live = await readLevelDb(directory);
    else live = new Map();
    const compactBytes = options.compactBytes ?? COMPACT_BYTES;
    const journal = new Journal(directory, live, { compactBytes, fromFile: fromFile || live.size === 0 });
    removeLevelDb(directory);
    return journal;
  }

  /** The live items (key → value), to load into a store. */
  entries(): IterableIterator<[string, string]> {
    return this.#live.entries();
  }

  /** Bytes of the journal file now, and of its live items (what a compaction would leave). */
  get size(): { file: number; live: number } {
    return { file: this.#fileBytes, live: this.#liveBytes };
  }

  /**
   * Append operations (one write) before they are applied, and compact when the file has outgrown its live
   * items. Throws when they cannot be written whole (a full disk): the file is cut back to where it was, and
   * the operations are not applied — the caller answers an error, as DynamoDB never acknowledges a write it
   * did not keep.
   */
  record(entries: readonly Entry[]): void {
    if (this.#fd === undefined) throw new Error('the local DynamoDB journal is closed');
    const text = entries.map(({ key, json }) => line(key, json)).join('');
    this.#append(text);
    for (const { key, json } of entries) {
      const before = this.#live.get(key);
      if (before !== undefined) this.#liveBytes -= line(key, before).length;
      if (json === undefined) this.#live.delete(key);
      else {
        this.#live.set(key, json);
        this.#liveBytes += line(key, json).length;
      }
    }
    if (this.#fileBytes > Math.max(this.#compactBytes, 2 * this.#liveBytes)) this.compact();
  }

  /** Write `text` at the end of the journal, every byte, or cut the file back to where it was and throw. */
  #append(text: string): void {
    const bytes = Buffer.from(text);
    let written = 0;
    try {
      while (written < bytes.length) written += writeSync(this.#fd!, bytes, written);
    } catch (error) {
      // A part written would run into the next line: cut it off, so the journal stays whole lines.
      if (written > 0) ftruncateSync(this.#fd!, this.#fileBytes);
      const { code } = error as { code?: string };
      const message = `the local DynamoDB's journal ${this.#file} could not be written (${code ?? String(error)}): the write is not applied`;
      // With a status and a body, dynalite answers it as DynamoDB answers its own faults, 500
      // InternalServerError (which clients retry); any other error it throws, and that would end the process.
      throw Object.assign(new Error(message), {
        code,
        cause: error,
        statusCode: 500,
        body: { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message },
      });
    }
    this.#fileBytes += bytes.length;
  }

  /**
   * Write the live items to a new file and put it in place of the journal (atomic rename). On a full disk the
   * journal stays as it is (whole lines), and grows on until a later compaction has room.
   */
  compact(): void {
    const next = `${this.#file}.next`;
    let text = '';
    for (const [key, json] of this.#live) text += line(key, json);
    // Not synced: a sync here waits for the file system's whole journal on a busy disk (seconds, measured),
    // holding every request; a process killed at any point leaves the old file or the new one, whole.
    try {
      const fd = openSync(next, 'w');
      try {
        writeSync(fd, text);
      } finally {
        closeSync(fd);
      }
      renameSync(next, this.#file);
    } catch (error) {
      rmSync(next, { force: true });
      if (this.#fd === undefined) throw error;
      return;
    }
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = openSync(this.#file, 'a');
    this.#fileBytes = Buffer.byteLength(text);
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** Every entry of an earlier version's LevelDB, values as their JSON text. */
async function readLevelDb(directory: string): Promise<Map<string, string>> {
  // dynalite's own LevelDB binding: the one that wrote the old format.
  const Level = dynaliteLevel();
  const db = new Level(directory, { keyEncoding: 'utf8', valueEncoding: 'utf8', createIfMissing: false });
  await db.open();
  const live = new Map<string, string>();
  try {
    for await (const [key, value] of db.iterator()) live.set(key, value);
  } finally {
    await db.close();
  }
  return live;
}

/** LevelDB's files (an earlier version's store, once read into the journal). */
function removeLevelDb(directory: string): void {
  for (const name of readdirSync(directory)) {
    if (/^(CURRENT|LOCK|LOG|LOG\.old|MANIFEST-\d+|\d+\.(ldb|log|sst))$/.test(name)) {
      rmSync(join(directory, name), { force: true });
    }
  }
}

/** What of dynalite's store the local stack uses: its table lookup and its (journaled) database. */
export type Store = DynaliteStore;

/** What a write puts in the journal: its key and, for a put, its value's JSON. */
function entriesOf(operations: readonly Operation[]): Entry[] {
  return operations.map(({ type, key, value }) => ({
    key,
    json: type === 'del' ? undefined : JSON.stringify(value),
  }));
}

/** The operations as the store writes them: each put's value as the JSON text the journal records (encoded once). */
const asWritten = (operations: readonly Operation[], entries: readonly Entry[]) =>
  operations.map((operation, i) =>
    operation.type === 'del' ? operation : { ...operation, value: entries[i]!.json, valueEncoding: 'utf8' },
  );

/**
 * The store's reads and writes, called back as soon as they are done — in a microtask, not after a turn of
 * the event loop as dynalite's own wrapper does (`setImmediate`): a metering write holds its item's lock from
 * its read to its write, and with a store that answers at once each turn of the loop in between (every other
 * request's parsing and validation) was time the lock was held, so writes to one item queued a turn apiece.
 * Each write goes to `journal` before it is applied; one the journal cannot keep fails, unapplied.
 */
function directCallbacks(store: Store, journal: Journal): void {
  const { db } = store;
  const level = levelMethods(db);
  const settle = (operation: () => Promise<unknown>, callback: Callback | undefined, written?: Entry[]) => {
    // A write is journaled before it is applied: one the journal cannot keep (a full disk) is not applied.
    const done = Promise.resolve().then(() => {
      if (written) journal.record(written);
      return operation();
    });
    if (typeof callback !== 'function') return done;
    // Called outside the promise: an error thrown by the callback is uncaught, as under dynalite's wrapper.
    done.then(
      (value) => queueMicrotask(() => callback(null, value)),
      (error: Error) => queueMicrotask(() => callback(error)),
    );
    return undefined;
  };
  db.get = (key, callback) => settle(() => level.get.call(db, key), callback);
  db.put = (key, value, callback) => {
    const entries = entriesOf([{ type: 'put', key, value }]);
    return settle(
      () => level.put.call(db, key, entries[0]!.json, { valueEncoding: 'utf8' }),
      callback,
      entries,
    );
  };
  db.del = (key, callback) =>
    settle(() => level.del.call(db, key), callback, entriesOf([{ type: 'del', key }]));
  db.batch = (operations, callback) => {
    const entries = entriesOf(operations);
    return settle(() => level.batch.call(db, asWritten(operations, entries)), callback, entries);
  };
}

const INSTALLED = Symbol.for('catalogue-read-api.dynamo-journal');

const isJournal = (value: unknown): value is Journal =>
  typeof value === 'object' && value !== null && (value as { [JOURNAL]?: unknown })[JOURNAL] === true;

/**
 * Make dynalite's `db.create` honour a `journal` option: an in-memory store, loaded from the journal, that
 * journals its writes (idempotent; before dynalite's first server is created).
 */
export function installJournaledStore(): void {
  const db = dynaliteDb() as ReturnType<typeof dynaliteDb> & { [INSTALLED]?: true };
  if (db[INSTALLED]) return;
  const create = db.create;
  db.create = (options) => {
    const journal = options?.journal;
    if (!isJournal(journal)) return create(options);
    const { path: _onDisk, ...inMemory } = options;
    const store = create(inMemory);
    // Queued before any request's operation (the store opens deferred, in order).
    const loaded = [...journal.entries()].map(
      ([key, json]): Operation => ({ type: 'put', key, value: JSON.parse(json) }),
    );
    journal.loading = new Promise<void>((resolve, reject) =>
      store.db.batch(loaded, (error) => (error ? reject(error) : resolve())),
    );
    directCallbacks(store, journal);
    (options.onStore as ((store: Store) => void) | undefined)?.(store);
    return store;
  };
  db[INSTALLED] = true;
}
