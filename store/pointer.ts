/**
 * The index as published: a small pointer (`current.json`) naming content-addressed shards, each holding the
 * index entries whose key hashes to it. Written by the builder, read by the proxy one shard at a time.
 */
import { hash } from 'node:crypto';
import {
  FORMAT_VERSION,
  isReadableFormat,
  OBJECT_ID_PATTERN,
  objectIdFor,
  type ReadableFormat,
} from './layout.js';

/**
 * One list variant: its object, record count and the end offset of segment 0 (a first page's range). A list
 * of more than one segment (more than SEGMENT_SIZE records) also records the digests of segment 0 and of
 * pair 0, the ranges a first page and its cursor read (store/segments.ts); a list of one segment needs
 * none, its object id is the digest of both. (Format 2 recorded no digests.)
 */
export type ListEntry =
  | [objectId: string, count: number, segment0End: number]
  | [objectId: string, count: number, segment0End: number, segment0Digest: string, pair0Digest: string];
/** What an index key names: a list variant's entry, or a detail's object id. */
export type IndexEntry = ListEntry | string;

/**
 * The logical index of a version: every list variant with at least one record by variant key (store/schema.ts), and
 * detail objects by record id (decimal string). It is published split into shards ({@link shardOf}); only
 * the builder and tests ever hold all of it.
 */
export interface CatalogueIndex {
  lists: Record<string, ListEntry>;
  modules: Record<string, string>;
  manufacturers: Record<string, string>;
}

/**
 * The pointer (`current.json`, written last): the version and the object ids of its index shards. Small
 * (22 characters a shard) whatever the catalogue's size, so every container reads it cheaply.
 */
export interface Pointer {
  /** {@link FORMAT_VERSION} as the builder writes it; a proxy also reads the previous format. */
  format: ReadableFormat;
  /** Content hash of the pointer without this field; names the version. */
  version: string;
  /** Object ids of the shards; index key `k` lives in shard `shardOf(k, shards.length)`. */
  shards: string[];
}

/** Average index entries a shard is sized for; a shard of ~1,000 entries is ~90 KB of JSON. */
export const SHARD_ENTRIES = 1024;

/**
 * The number of shards for an index of `entries` keys: a power of two, so a catalogue's shards keep their
 * names across publishes until its size doubles or halves. Depends on the entry count only (determinism).
 * @example shardCountFor(2000) === 2
 * @example shardCountFor(330_000) === 512
 */
export function shardCountFor(entries: number): number {
  let count = 1;
  while (count * SHARD_ENTRIES < entries) count *= 2;
  return count;
}

/**
 * What places an index key in a shard: the first 32 bits of its SHA-256 (its shard is this modulo the count).
 * @example shardHash('modules?sort=id') % 1 === 0
 */
export function shardHash(key: string): number {
  return hash('sha256', key, 'buffer').readUInt32BE(0);
}

/**
 * The shard of an index key: {@link shardHash} modulo the shard count.
 * @example shardOf('modules?sort=id', 1) === 0
 */
export function shardOf(key: string, shardCount: number): number {
  return shardHash(key) % shardCount;
}

/** Shards and pointers are JSON; their keys are sorted, so equal content is equal bytes. */
const entryJson = (entry: IndexEntry) =>
  typeof entry === 'string'
    ? JSON.stringify(entry)
    : entry.length === 3
      ? `[${JSON.stringify(entry[0])},${entry[1]},${entry[2]}]`
      : `[${JSON.stringify(entry[0])},${entry[1]},${entry[2]},${JSON.stringify(entry[3])},${JSON.stringify(entry[4])}]`;

/**
 * The bytes of a shard holding `entries`: `{"entries":{…},"format":3}` with keys in code-unit order.
 * @example encodeShard(new Map([['modules/1', 'AAAAAAAAAAAAAAAAAAAAAA']])).toString()
 *   // → '{"entries":{"modules/1":"AAAAAAAAAAAAAAAAAAAAAA"},"format":3}'
 */
export function encodeShard(
  entries: ReadonlyMap<string, IndexEntry>,
  format: ReadableFormat = FORMAT_VERSION,
): Buffer {
  const keys = [...entries.keys()].sort();
  const parts = new Array<string>(keys.length);
  for (let i = 0; i < keys.length; i++) {
    parts[i] = `${JSON.stringify(keys[i])}:${entryJson(entries.get(keys[i]!)!)}`;
  }
  return Buffer.from(`{"entries":{${parts.join(',')}},"format":${format}}`);
}

/**
 * A shard's entries, or `undefined` when `bytes` are not a shard of `format` (the format of the pointer that
 * names it; by default the one the builder writes).
 */
export function parseShard(
  bytes: Buffer,
  format: ReadableFormat = FORMAT_VERSION,
): Record<string, IndexEntry> | undefined {
  let value: { entries?: unknown; format?: unknown } | null;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (value?.format !== format || !isPlainObject(value.entries)) return undefined;
  return value.entries as Record<string, IndexEntry>;
}

/**
 * The pointer naming `shards`, and its bytes; the version hashes the bytes without the version.
 * @example encodePointer(['AAAAAAAAAAAAAAAAAAAAAA']).pointer.version // → 22 base64url characters
 */
export function encodePointer(
  shards: readonly string[],
  format: ReadableFormat = FORMAT_VERSION,
): { pointer: Pointer; bytes: Buffer } {
  const body = `{"format":${format},"shards":[${shards.map((id) => JSON.stringify(id)).join(',')}]`;
  const version = objectIdFor(Buffer.from(`${body}}`));
  return {
    pointer: { format, version, shards: [...shards] },
    bytes: Buffer.from(`${body},"version":${JSON.stringify(version)}}`),
  };
}

/**
 * What a pointer object holds: a pointer whose bytes are exactly what {@link encodePointer} writes for it
 * (so its version, the hash of its content, checks out), or why not — `malformed` (torn, damaged, not a
 * pointer at all: a fault of the store) or `unsupported-format` (a well-formed pointer of a format this code
 * does not read: the builder and the proxy are of different releases).
 * @example readPointer(encodePointer(['AAAAAAAAAAAAAAAAAAAAAA']).bytes) // → { ok: true, pointer }
 */
export function readPointer(
  bytes: Buffer,
): { ok: true; pointer: Pointer } | { ok: false; reason: 'malformed' | 'unsupported-format' } {
  let value: Partial<Pointer> | null;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  if (isPlainObject(value) && typeof value.format === 'number' && !isReadableFormat(value.format)) {
    return { ok: false, reason: 'unsupported-format' };
  }
  const pointer = wellFormedPointer(value);
  if (!pointer || !encodePointer(pointer.shards, pointer.format).bytes.equals(bytes)) {
    return { ok: false, reason: 'malformed' };
  }
  return { ok: true, pointer };
}

/**
 * The pointer, when `bytes` hold an intact one of a format this code reads (a torn, damaged or foreign one
 * gives `undefined`; {@link readPointer} says which).
 */
export function parsePointer(bytes: Buffer): Pointer | undefined {
  const reading = readPointer(bytes);
  return reading.ok ? reading.pointer : undefined;
}

function wellFormedPointer(value: Partial<Pointer> | null): Pointer | undefined {
  if (
    !isPlainObject(value) ||
    !isReadableFormat(value?.format) ||
    typeof value.version !== 'string' ||
    !OBJECT_ID_PATTERN.test(value.version) ||
    !Array.isArray(value.shards) ||
    value.shards.length === 0 ||
    (value.shards.length & (value.shards.length - 1)) !== 0 ||
    !value.shards.every((id) => typeof id === 'string' && OBJECT_ID_PATTERN.test(id))
  ) {
    return undefined;
  }
  return value as Pointer;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
