/**
 * The build cache (`<prefix>versions/<version>.cache`): for every object of a published version, the hash
 * of its INPUT (fragment count and the ordered digests of its records' packed bytes) and what encoding it
 * gave (object id, first segment's end, byte length). The next publish computes each variant's input key,
 * which is far cheaper than encoding it, and reuses the entry of an unchanged variant whose object the
 * target holds: an edit of one module re-encodes only the ~50 objects that contain it.
 *
 * It is only an accelerator: a missing, foreign or corrupt file (checksum, header, version) is ignored and
 * everything is encoded, with identical results. It is written before the pointer and collected with its
 * version file.
 */
import { createHash } from 'node:crypto';
import { FORMAT_VERSION, OBJECT_ID_PATTERN, SEGMENT_SIZE } from '../proxy/format.js';
import type { PackedRecord } from './encode.js';

/** Bump whenever encode.ts could give different bytes for the same input. */
const CACHE_FORMAT = 1;
const MAGIC = 0x43544143; // "CATC" little-endian
const HEADER = 4 * 4 + 22 + 4; // magic, cache format, object format, segment size, version, entry count
const ENTRY = 16 + 16 + 4 + 4; // input key, object id, segment0End, byteLength
const CHECKSUM = 32;
const DIGEST = 16;

export interface CacheEntry {
  objectId: string;
  segment0End: number;
  byteLength: number;
}

/** Input key (16 bytes as a latin1 string: one cheap string per variant) → the object its encoding gave. */
export type BuildCache = Map<string, CacheEntry>;

/**
 * 16-byte digests of packed records, back to back (record i at `16 * i`): offsets, then bytes.
 * @example recordDigests([packRecord(fragments)]).byteLength // → 16
 */
export function recordDigests(pool: readonly PackedRecord[]): Buffer {
  const digests = Buffer.alloc(DIGEST * pool.length); // never pooled: aligned for inputKey's word view
  for (let i = 0; i < pool.length; i++) {
    const { bytes, offsets } = pool[i]!;
    const hash = createHash('sha256');
    hash.update(new Uint8Array(offsets.buffer, offsets.byteOffset, offsets.byteLength));
    hash.update(bytes);
    hash.digest().copy(digests, DIGEST * i, 0, DIGEST);
  }
  return digests;
}

let scratch = new Uint32Array(2 + 4 * 1024);

/**
 * The input key of the object whose records are `pool[members[0]], …` (digests from {@link recordDigests}).
 * @example inputKey(recordDigests(pool), [2, 0], 7).length // → 16
 */
export function inputKey(digests: Buffer, members: readonly number[], fragmentsPerRecord: number): string {
  // Words, not Buffer.copy: a 25k-module build keys ~330k variants with ~600k members.
  const words = new Uint32Array(digests.buffer, digests.byteOffset, digests.byteLength / 4);
  const length = 2 + 4 * members.length;
  if (scratch.length < length) scratch = new Uint32Array(Math.max(length, 2 * scratch.length));
  const header = new DataView(scratch.buffer);
  header.setUint32(0, fragmentsPerRecord, true); // little-endian: keys are the same on every machine
  header.setUint32(4, members.length, true);
  let at = 2;
  for (const member of members) {
    const from = 4 * member;
    scratch[at] = words[from]!;
    scratch[at + 1] = words[from + 1]!;
    scratch[at + 2] = words[from + 2]!;
    scratch[at + 3] = words[from + 3]!;
    at += 4;
  }
  const input = new Uint8Array(scratch.buffer, 0, 4 * length);
  return createHash('sha256').update(input).digest().toString('latin1', 0, DIGEST);
}

/**
 * The cache file of `version`, entries in insertion order (deterministic for a given snapshot).
 * @example decodeCache(encodeCache(version, cache), version)?.size // → cache.size
 */
export function encodeCache(version: string, cache: BuildCache): Buffer {
  const bytes = Buffer.alloc(HEADER + ENTRY * cache.size + CHECKSUM);
  bytes.writeUInt32LE(MAGIC, 0);
  bytes.writeUInt32LE(CACHE_FORMAT, 4);
  bytes.writeUInt32LE(FORMAT_VERSION, 8);
  bytes.writeUInt32LE(SEGMENT_SIZE, 12);
  bytes.write(version, 16, 22, 'latin1');
  bytes.writeUInt32LE(cache.size, 38);
  let at = HEADER;
  for (const [key, { objectId, segment0End, byteLength }] of cache) {
    bytes.write(key, at, DIGEST, 'latin1');
    Buffer.from(objectId, 'base64url').copy(bytes, at + 16);
    bytes.writeUInt32LE(segment0End, at + 32);
    bytes.writeUInt32LE(byteLength, at + 36);
    at += ENTRY;
  }
  createHash('sha256').update(bytes.subarray(0, at)).digest().copy(bytes, at);
  return bytes;
}

/**
 * Read the cache file of `version`; undefined when it is absent, corrupt, of another format or version.
 * @example decodeCache(await read(`versions/${v}.cache`), v) ?? new Map()
 */
export function decodeCache(bytes: Buffer | undefined, version: string): BuildCache | undefined {
  if (!bytes || bytes.byteLength < HEADER + CHECKSUM) return undefined;
  const count = bytes.readUInt32LE(38);
  const end = HEADER + ENTRY * count;
  if (bytes.byteLength !== end + CHECKSUM) return undefined;
  const checksum = createHash('sha256').update(bytes.subarray(0, end)).digest();
  if (!checksum.equals(bytes.subarray(end))) return undefined;
  if (
    bytes.readUInt32LE(0) !== MAGIC ||
    bytes.readUInt32LE(4) !== CACHE_FORMAT ||
    bytes.readUInt32LE(8) !== FORMAT_VERSION ||
    bytes.readUInt32LE(12) !== SEGMENT_SIZE ||
    bytes.toString('latin1', 16, 38) !== version
  ) {
    return undefined;
  }
  const cache: BuildCache = new Map();
  for (let at = HEADER; at < end; at += ENTRY) {
    const objectId = bytes.toString('base64url', at + 16, at + 32);
    if (!OBJECT_ID_PATTERN.test(objectId)) return undefined;
    cache.set(bytes.toString('latin1', at, at + 16), {
      objectId,
      segment0End: bytes.readUInt32LE(at + 32),
      byteLength: bytes.readUInt32LE(at + 36),
    });
  }
  return cache;
}
