/**
 * The index as published: entries split into content-addressed shards ({@link shardOf}), and the small
 * pointer naming them. A full build shards every entry; an incremental one rewrites only the shards whose
 * entries changed, so unchanged shards keep their names (and the proxy's cached copies stay valid).
 */

import { objectIdFor } from '../../store/layout.js';
import {
  encodePointer,
  encodeShard,
  type IndexEntry,
  type Pointer,
  parseShard,
  shardCountFor,
  shardOf,
} from '../../store/pointer.js';

/** Objects a version references: how many index slots (entries, pointer slots) name each, and its size. */
export type ObjectTable = Map<string, { refs: number; size: number }>;

export interface ShardSet {
  pointer: Pointer;
  pointerBytes: Buffer;
  /** Bytes of the shards this set wrote, by object id (every shard for a full build). */
  bytes: Map<string, Buffer>;
}

/**
 * Shard every entry of an index.
 * @example buildShards(entries).pointer.shards.length === shardCountFor(entries.size)
 */
export function buildShards(entries: ReadonlyMap<string, IndexEntry>): ShardSet {
  const count = shardCountFor(entries.size);
  const buckets = Array.from({ length: count }, () => new Map<string, IndexEntry>());
  for (const [key, entry] of entries) buckets[shardOf(key, count)]!.set(key, entry);
  const ids: string[] = [];
  const bytes = new Map<string, Buffer>();
  for (const bucket of buckets) {
    const shard = encodeShard(bucket);
    const id = objectIdFor(shard);
    ids.push(id);
    bytes.set(id, shard);
  }
  const pointer = encodePointer(ids);
  return { pointer: pointer.pointer, pointerBytes: pointer.bytes, bytes };
}

/** The shards of `pointer` that hold `keys`, read and parsed, by shard slot. */
export async function readShards(
  pointer: Pointer,
  keys: Iterable<string>,
  read: (shardId: string) => Promise<Buffer>,
): Promise<Map<number, Map<string, IndexEntry>>> {
  const count = pointer.shards.length;
  const slots = new Set<number>();
  for (const key of keys) slots.add(shardOf(key, count));
  const shards = new Map<number, Map<string, IndexEntry>>();
  await Promise.all(
    [...slots].map(async (slot) => {
      const id = pointer.shards[slot]!;
      const entries = parseShard(await read(id), pointer.format);
      if (!entries) throw new Error(`index shard ${id} of version ${pointer.version} is not readable`);
      shards.set(slot, new Map(Object.entries(entries)));
    }),
  );
  return shards;
}

/**
 * Apply `changes` (a key's new entry, or `null` to remove it) to the shards that hold them (from
 * {@link readShards}); shards no change touches keep their ids.
 */
export function patchShards(
  pointer: Pointer,
  shards: ReadonlyMap<number, Map<string, IndexEntry>>,
  changes: ReadonlyMap<string, IndexEntry | null>,
): ShardSet {
  const count = pointer.shards.length;
  for (const [key, entry] of changes) {
    const shard = shards.get(shardOf(key, count));
    if (!shard) throw new Error(`the shard of ${key} was not read`);
    if (entry === null) shard.delete(key);
    else shard.set(key, entry);
  }
  const ids = [...pointer.shards];
  const bytes = new Map<string, Buffer>();
  for (const [slot, entries] of shards) {
    const shard = encodeShard(entries);
    const id = objectIdFor(shard);
    if (id === ids[slot]) continue;
    ids[slot] = id;
    bytes.set(id, shard);
  }
  const next = encodePointer(ids);
  return { pointer: next.pointer, pointerBytes: next.bytes, bytes };
}
