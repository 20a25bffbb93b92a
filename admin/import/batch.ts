/**
 * Importing a batch of checked lines (admin/import/line.ts) into the keys table: what the table holds of them
 * already, whether every owner's ledger takes its imported keys, and the writes — each owner's ledger entries
 * first (admin/ledger.ts enterImported: what the cap counts), then each key item by a conditional PutItem that
 * never overwrites (admin/dynamo.ts createKey). Conditional puts, not BatchWriteItem: a batch write would put over
 * a key that another call wrote meanwhile; a put that finds the key there reports it instead. Every write is
 * idempotent (key ids derive from the hashes), so a batch cut anywhere is finished by running it again.
 * Shared by the file import of `npm run keys -- import` (file.ts) and the admin API's `POST /v1/keys/import`
 * (api.ts).
 */
import { type KeyRecord, keyAccepted } from '../../tables/keys.js';
import { AdminTableError, type AdminTables } from '../dynamo.js';
import { ContentionError } from '../errors.js';
import { enterImported, entryBytes } from '../ledger.js';
import { differences, type ImportLine } from './line.js';

/**
 * The most an import lets an owner's ledger hold, in bytes: the ledger is one DynamoDB item (400 KB at most,
 * its names and other attributes included). An entry is about 300 bytes: some 1,200 usable keys per owner.
 */
export const LEDGER_MAX_BYTES = 380_000;

/** How many DynamoDB writes a batch keeps in flight. */
const PARALLEL_WRITES = 24;

/** What became of a line's key: written now, there already as the line says, or there already but different. */
export type KeyOutcome =
  | { outcome: 'imported' | 'already_there'; keyId: string }
  | { outcome: 'conflict'; keyId: string; differs: string[] };

/**
 * At most `limit` tasks at once: `add` waits for room, `done` for every task; the first failure is thrown by
 * the next `add` and by `done`, and no task is started after it.
 * @example const pool = bounded(4); for (const batch of batches) await pool.add(() => write(batch)); await pool.done();
 */
export function bounded(limit: number): {
  add(task: () => Promise<void>): Promise<void>;
  done(): Promise<void>;
} {
  const running = new Set<Promise<void>>();
  let failed: { error: unknown } | undefined;
  return {
    async add(task) {
      while (running.size >= limit) await Promise.race(running);
      if (failed) throw failed.error;
      const promise: Promise<void> = task()
        .catch((error: unknown) => {
          failed ??= { error };
        })
        .finally(() => running.delete(promise));
      running.add(promise);
    },
    async done() {
      while (running.size > 0) await Promise.all(running);
      if (failed) throw failed.error;
    },
  };
}

/** Tries of a batch whose table calls failed for a while (throttling, a slow or busy DynamoDB, contention). */
const TRIES = 4;

/**
 * `task` again, after 1, 2 and 4 s, while it fails with what a retry may cure: DynamoDB throttling, a 5xx, no
 * answer by the call's deadline, other calls winning an owner's ledger. Every write of a batch is conditional
 * or idempotent, so a batch tried again writes nothing twice.
 */
export async function retried<T>(task: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await task();
    } catch (error) {
      const transient =
        (error instanceof AdminTableError && error.transient) || error instanceof ContentionError;
      if (!transient || attempt >= TRIES) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1000 * 2 ** (attempt - 1)));
    }
  }
}

/** Run `task` over `items`, at most `limit` at a time; the results in the items' order. */
async function inParallel<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Whether a line's key will count against its owner's cap: it has an owner and is usable (active, unexpired).
 * Those enter the owner's ledger; a revoked or expired key does not.
 */
export function counted(record: KeyRecord, now: Date): record is KeyRecord & { owner: string } {
  return record.owner !== undefined && keyAccepted(record, now.getTime());
}

/**
 * The line's key against the table: undefined when it is not there (to import), else there already, the same
 * (`already_there`) or different (`conflict`, by field name: the table is never overwritten).
 */
export function compared(stored: KeyRecord | undefined, line: ImportLine): KeyOutcome | undefined {
  if (!stored) return undefined;
  const differs = differences(stored, line);
  if (differs.length === 0) return { outcome: 'already_there', keyId: stored.keyId };
  return { outcome: 'conflict', keyId: stored.keyId, differs };
}

/** What the keys table holds of these lines' keys, by hash (a consistent BatchGetItem per 100). */
export function storedKeys(
  tables: AdminTables,
  lines: readonly ImportLine[],
): Promise<Map<string, KeyRecord>> {
  return tables.keysByHash(lines.map((line) => line.record.keyHash));
}

/** What an import brings to one owner's ledger. */
export interface OwnerLoad {
  /** Usable keys it adds. */
  keys: number;
  /** The bytes their entries take. */
  bytes: number;
}

/** Add `record` (a key to import that counts against its owner's cap) to the loads by owner. */
export function addLoad(loads: Map<string, OwnerLoad>, record: KeyRecord & { owner: string }): void {
  const load = loads.get(record.owner) ?? { keys: 0, bytes: 0 };
  load.keys++;
  load.bytes += entryBytes(record);
  loads.set(record.owner, load);
}

/** An owner's ledger after the import: the keys it will count, the bytes it will take. */
export interface OwnerAfter {
  owner: string;
  keys: number;
  bytes: number;
}

/**
 * Each owner's ledger as the import would leave it (read now: a BatchGetItem per 100 owners, each through
 * `tables()`: within a deadline of its own, or the call's). `tooBig`: the
 * owners whose ledger would not fit (their lines are refused); `overCap`: those that will hold more usable keys
 * than the cap (they come over whole; new keys for them are refused until they hold fewer).
 */
export async function ownersAfter(
  tables: () => AdminTables,
  loads: ReadonlyMap<string, OwnerLoad>,
  cap: number,
): Promise<{ tooBig: OwnerAfter[]; overCap: OwnerAfter[] }> {
  const tooBig: OwnerAfter[] = [];
  const overCap: OwnerAfter[] = [];
  const owners = [...loads.keys()];
  for (let offset = 0; offset < owners.length; offset += 100) {
    const ledgers = await tables().ledgers(owners.slice(offset, offset + 100));
    for (const owner of owners.slice(offset, offset + 100)) {
      const load = loads.get(owner)!;
      const ledger = ledgers.get(owner)?.entries ?? '{}';
      const after = {
        owner,
        keys: Object.keys(JSON.parse(ledger) as object).length + load.keys,
        bytes: Buffer.byteLength(ledger) + load.bytes,
      };
      if (after.bytes > LEDGER_MAX_BYTES) tooBig.push(after);
      else if (after.keys > cap) overCap.push(after);
    }
  }
  return { tooBig, overCap };
}

/**
 * Write the keys of `lines` (checked, not in the table when they were compared): the ledger entries of those
 * that count against their owner's cap first, an owner at a time (in parallel), then every key item. A key
 * whose entry an earlier, interrupted run left keeps that run's creation time when the line gives none.
 * `tables` gives the tables each write goes through: each within a deadline of its own (the file import), or
 * all within the call's (the API).
 * @example const outcomes = await writeKeys(tables, lines, new Date());
 */
export async function writeKeys(
  tables: () => AdminTables,
  lines: readonly ImportLine[],
  now: Date,
): Promise<KeyOutcome[]> {
  const byOwner = new Map<string, KeyRecord[]>();
  for (const { record } of lines) {
    if (counted(record, now)) byOwner.set(record.owner, [...(byOwner.get(record.owner) ?? []), record]);
  }
  const held = new Map<string, KeyRecord>();
  await inParallel([...byOwner], PARALLEL_WRITES, async ([owner, records]) => {
    for (const [keyId, record] of await enterImported(tables(), owner, records, now)) held.set(keyId, record);
  });
  return inParallel(lines, PARALLEL_WRITES, async (line) => {
    const first = held.get(line.record.keyId);
    const record =
      first && !line.createdGiven
        ? { ...line.record, created: first.created, imported: first.imported ?? line.record.imported! }
        : line.record;
    const written = await tables().createKey(record);
    if (written === 'created') return { outcome: 'imported', keyId: record.keyId };
    // Written meanwhile by another call (the same import run twice at once, or another key with this hash).
    return compared(written, line) ?? { outcome: 'imported', keyId: record.keyId };
  });
}
