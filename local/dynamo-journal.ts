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
 * applies is appended to `journal.jsonl` in the data directory before dynalite answers (one `write(2)` per
 * operation, no fsync — LevelDB's own default), one JSON line per operation: `["key",value]` for a put,
 * `["key"]` for a delete. A start reads the journal (the last line may be cut by a crash: it is dropped) and
 * writes it anew with only the live items; so does a running server once the journal has grown past
 * `compactBytes` and twice its live size, so the file stays within a few times the live data. A data directory
 * of an earlier version (LevelDB) is read once with dynalite's own LevelDB binding, written as a journal, and
 * its LevelDB files removed.
 *
 * Hooked into dynalite where it creates its store (`db.create`, looked up on the shared CommonJS module object
 * at call time): a dynalite started with a `journal` option gets an in-memory store loaded from it, whose
 * writes go to it. Everything above the store — the protocol, validation, expressions, conditions, locking — is
 * dynalite's.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

export const JOURNAL_FILE = 'journal.jsonl';

/** Below this the journal is never compacted while serving (a start always compacts it). */
export const COMPACT_BYTES = 8 * 2 ** 20;

type Callback = (error?: Error | null) => void;
interface Operation {
  type: 'put' | 'del';
  key: string;
  value?: unknown;
}

/** What a journal line encodes, as JSON text: the value already stringified. */
function line(key: string, json: string | undefined): string {
  return json === undefined ? `[${JSON.stringify(key)}]\n` : `[${JSON.stringify(key)},${json}]\n`;
}

/** The live items of a journal's text: the last operation on each key wins; a cut last line is dropped. */
export function replay(text: string): Map<string, string> {
  const live = new Map<string, string>();
  const lines = text.split('\n');
  // A file that does not end with a newline ends with a line cut short by a crash.
  lines.pop();
  for (const raw of lines) {
    if (!raw) continue;
    const entry = JSON.parse(raw) as [string, unknown?];
    if (entry.length === 1) live.delete(entry[0]);
    else live.set(entry[0], JSON.stringify(entry[1]));
  }
  return live;
}

export class Journal {
  readonly #file: string;
  readonly #compactBytes: number;
  /** The live items, as the JSON text of their values: what a compaction writes. */
  readonly #live: Map<string, string>;
  #liveBytes = 0;
  #fileBytes = 0;
  #fd: number | undefined;
  /** Settles once the store created on this journal holds its items (a failed load must fail the start). */
  loading: Promise<void> = Promise.resolve();

  private constructor(directory: string, live: Map<string, string>, compactBytes: number) {
    this.#file = join(directory, JOURNAL_FILE);
    this.#live = live;
    this.#compactBytes = compactBytes;
    for (const [key, json] of live) this.#liveBytes += line(key, json).length;
    this.compact();
  }

  /**
   * The journal of `directory`, compacted: read from `journal.jsonl`, or from the LevelDB of an earlier
   * version (then removed), or empty.
   */
  static async open(directory: string, options: { compactBytes?: number } = {}): Promise<Journal> {
    const file = join(directory, JOURNAL_FILE);
    let live: Map<string, string>;
    if (existsSync(file)) live = replay(readFileSync(file, 'utf8'));
    else if (existsSync(join(directory, 'CURRENT'))) live = await readLevelDb(directory);
    else live = new Map();
    const journal = new Journal(directory, live, options.compactBytes ?? COMPACT_BYTES);
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

  /** Append applied operations (one write), and compact when the file has outgrown its live items. */
  record(operations: readonly Operation[]): void {
    if (this.#fd === undefined) throw new Error('the local DynamoDB journal is closed');
    let text = '';
    for (const { type, key, value } of operations) {
      const before = this.#live.get(key);
      if (before !== undefined) this.#liveBytes -= line(key, before).length;
      if (type === 'del') {
        this.#live.delete(key);
        text += line(key, undefined);
      } else {
        const json = JSON.stringify(value);
        this.#live.set(key, json);
        const entry = line(key, json);
        this.#liveBytes += entry.length;
        text += entry;
      }
    }
    this.#fileBytes += writeSync(this.#fd, text);
    if (this.#fileBytes > Math.max(this.#compactBytes, 2 * this.#liveBytes)) this.compact();
  }

  /** Write the live items to a new file and put it in place of the journal (atomic rename). */
  compact(): void {
    const next = `${this.#file}.next`;
    let text = '';
    for (const [key, json] of this.#live) text += line(key, json);
    const fd = openSync(next, 'w');
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(next, this.#file);
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = openSync(this.#file, 'a');
    this.#fileBytes = Buffer.byteLength(text);
  }

  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }
}

/** dynalite's own modules, from its own place (its LevelDB binding is the one that wrote the old format). */
const dynaliteRequire = () => createRequire(createRequire(import.meta.url).resolve('dynalite'));

interface LevelDb {
  open(): Promise<void>;
  iterator(): AsyncIterable<[string, string]> & { close(): Promise<void> };
  close(): Promise<void>;
}

/** Every entry of an earlier version's LevelDB, values as their JSON text. */
async function readLevelDb(directory: string): Promise<Map<string, string>> {
  const { Level } = dynaliteRequire()('level') as {
    Level: new (path: string, options: object) => LevelDb;
  };
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
export interface Store {
  getTable(
    name: string,
    checkStatus: boolean,
    callback: (error: Error | null, table?: unknown) => void,
  ): void;
  db: {
    get(key: string, callback: (error: Error | null, value?: unknown) => void): void;
    put(key: string, value: unknown, callback: Callback): void;
    del(key: string, callback: Callback): void;
    batch(operations: Operation[], callback: Callback): void;
  };
}

/** Each write of `store` that succeeds goes to `journal` before its caller hears of it. */
function journalWrites(store: Store, journal: Journal): void {
  const { db } = store;
  const put = db.put.bind(db);
  const del = db.del.bind(db);
  const batch = db.batch.bind(db);
  const after = (operations: Operation[], callback: Callback) => (error?: Error | null) => {
    if (!error) {
      try {
        journal.record(operations);
      } catch (failure) {
        callback(failure as Error);
        return;
      }
    }
    callback(error);
  };
  db.put = (key, value, callback) => put(key, value, after([{ type: 'put', key, value }], callback));
  db.del = (key, callback) => del(key, after([{ type: 'del', key }], callback));
  db.batch = (operations, callback) => batch(operations, after(operations, callback));
}

const INSTALLED = Symbol.for('catalogue-read-api.dynamo-journal');

/**
 * Make dynalite's `db.create` honour a `journal` option: an in-memory store, loaded from the journal, that
 * journals its writes (idempotent; before dynalite's first server is created).
 */
export function installJournaledStore(): void {
  const db = dynaliteRequire()('./db') as {
    create(options: Record<string, unknown>): Store;
    [INSTALLED]?: true;
  };
  if (db[INSTALLED]) return;
  const create = db.create;
  db.create = (options) => {
    const journal = options?.journal;
    if (!(journal instanceof Journal)) return create(options);
    const { path: _onDisk, ...inMemory } = options;
    const store = create(inMemory);
    // Queued before any request's operation (the store opens deferred, in order).
    const loaded = [...journal.entries()].map(
      ([key, json]): Operation => ({ type: 'put', key, value: JSON.parse(json) }),
    );
    journal.loading = new Promise<void>((resolve, reject) =>
      store.db.batch(loaded, (error) => (error ? reject(error) : resolve())),
    );
    journalWrites(store, journal);
    (options.onStore as ((store: Store) => void) | undefined)?.(store);
    return store;
  };
  db[INSTALLED] = true;
}
