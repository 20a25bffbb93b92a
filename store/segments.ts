/**
 * Segments: how a list variant's ordered records (or a detail's one record) are stored in one object.
 *
 * A list variant (one endpoint + filters + sort) is ONE object: its ordered records split into segments of
 * at most {@link SEGMENT_SIZE} records. Every record is stored as pre-serialised fragments (each top-level
 * field and each relation separately), so a page with any `limit`, `fields` or `include` is composed from
 * bytes of at most two adjacent segments (one ranged read), without parsing JSON. A detail object is a
 * single segment holding one record.
 *
 * Segment layout (all integers are unsigned 32-bit little-endian):
 *   0  magic "CAT1"
 *   4  n            records in this segment (1..SEGMENT_SIZE, 0 only for an empty variant, never stored)
 *   8  f            fragments per record (the resource's fragment schema length)
 *   12 total        records in the whole variant
 *   16 index        this segment's index in the variant (records index*SEGMENT_SIZE ...)
 *   20 next[3]      absolute byte offsets of segments index+1, index+2, index+3 (object length when absent)
 *   32 offsets[n*f+1] fragment start offsets relative to the body; the last one is the body length
 *   .. body         [digest] then fragment bytes, each fragment is `"key":<json value>`
 *
 * Integrity (format 3, store/layout.ts): every range the proxy reads has a digest recorded where the proxy
 * meets it before the read. A first page reads segment 0 (`[0, segment0End)`); a cursor page reads the pair
 * of segments `[start(k), end(k+1))` ({@link pairRange}). The index entry of a list of more than one segment
 * records the digests of segment 0 and of pair 0; and a segment with a successor begins its body with the
 * 16-byte digest of the NEXT pair, `[start(index+1), end(index+2))` — no fragment covers those bytes (the
 * first offset is 16; 0 when there is no digest), so a reader that knows nothing of them composes the same
 * pages. A verified segment therefore vouches for the range its page's cursor will read, and a cursor carries
 * that digest, bound by its HMAC. Details and lists of one segment carry no digest: their object id is one.
 */

import { hash } from 'node:crypto';
import { digest128, FORMAT_VERSION, type ReadableFormat } from './layout.js';

/** Records per segment; a page (at most this many records) spans at most two adjacent segments. */
export const SEGMENT_SIZE = 100;

const MAGIC = 0x31544143; // "CAT1" little-endian
const FIXED_HEADER = 32;
/** Bytes of the digest of the next pair at the start of a segment's body (store/layout.ts digest128). */
export const PAIR_DIGEST_BYTES = 16;

/**
 * The byte range a cursor page reads: the pair of segments `k` and `k + 1` (the object's end when `k` is the
 * last), given the starts of every segment and the object's length at `starts[segments]`.
 * @example pairRange([0, 100, 250, 300], 3, 1) // → [100, 300]
 */
export function pairRange(starts: readonly number[], segments: number, k: number): [number, number] {
  return [starts[k]!, starts[Math.min(k + 2, segments)]!];
}

/** One stored record: its fragments, each the bytes of `"key":<json>`. */
export type RecordFragments = readonly Uint8Array[];

/**
 * Serialise a variant's ordered records into one object (segments of {@link SEGMENT_SIZE}); also returns the
 * end offset of segment 0, which the index keeps to read a first page in one range.
 * @example encodeVariant([[fragment('id', '1')]], 1).segment0End // → 45
 */
export function encodeVariant(records: readonly RecordFragments[], fragmentsPerRecord: number) {
  return encodePackedVariant(
    records.map(packRecord),
    records.map((_, i) => i),
    fragmentsPerRecord,
  );
}

// The one encoder. Each record's fragments are packed once into one buffer with an offset table, so a
// segment is written with one copy per record instead of one per fragment, into one exact allocation; the
// builder packs every module once and encodes every variant from those packs.
/** A record's fragments back to back; `offsets[k]` is where fragment k starts, `offsets[f]` the length. */
export interface PackedRecord {
  bytes: Buffer;
  offsets: Uint32Array;
}

/**
 * Pack a record's fragments given as strings: one buffer, no buffer per fragment.
 * @example packStrings(['"id":1', '"name":"A"']).offsets // → [0, 6, 16]
 */
export function packStrings(fragments: readonly string[]): PackedRecord {
  const offsets = new Uint32Array(fragments.length + 1);
  const joined = fragments.join('');
  const bytes = Buffer.from(joined);
  // Mostly ASCII: then a fragment's byte length is its string length, and no fragment is measured twice.
  const ascii = bytes.byteLength === joined.length;
  let length = 0;
  for (let k = 0; k < fragments.length; k++) {
    offsets[k] = length;
    length += ascii ? fragments[k]!.length : Buffer.byteLength(fragments[k]!);
  }
  offsets[fragments.length] = length;
  return { bytes, offsets };
}

/**
 * Pack a record's fragments.
 * @example packRecord([Buffer.from('"id":1'), Buffer.from('"name":"A"')]).offsets // → [0, 6, 16]
 */
export function packRecord(fragments: RecordFragments): PackedRecord {
  const offsets = new Uint32Array(fragments.length + 1);
  let length = 0;
  fragments.forEach((fragment, k) => {
    offsets[k] = length;
    length += fragment.byteLength;
  });
  offsets[fragments.length] = length;
  const bytes = Buffer.allocUnsafe(length);
  fragments.forEach((fragment, k) => {
    bytes.set(fragment, offsets[k]!);
  });
  return { bytes, offsets };
}

/** A variant's object and what its index entry records about it. */
export interface EncodedVariant {
  bytes: Buffer;
  /** The end of segment 0: a first page's range is `[0, segment0End)`. */
  segment0End: number;
  /**
   * With more than one segment: the digests (digest128, base64url) of segment 0 and of pair 0
   * (`[0, end(1))`), which the index entry records. Absent for one segment: the object id is both.
   */
  digests?: { segment0: string; pair0: string };
}

/**
 * Encode the variant whose records are `pool[members[0]], pool[members[1]], …` (every record with
 * `fragmentsPerRecord` fragments). Byte-identical to `encodeVariant(members.map(i => fragmentsOf(pool[i])), f)`.
 * @example encodePackedVariant(packedModules, variant.byName, FRAGMENTS.module.length).segment0End
 */
export function encodePackedVariant(
  pool: readonly PackedRecord[],
  members: readonly number[],
  fragmentsPerRecord: number,
  format: ReadableFormat = FORMAT_VERSION,
): EncodedVariant {
  // Format 2 (what a deployed proxy may still meet, kept for the tests of that path) recorded no digests.
  const packing: Packing = { pool, members, f: fragmentsPerRecord, withDigests: format !== 2, starts: [] };
  packing.starts = segmentStarts(packing);
  const segmentCount = packing.starts.length - 1;
  const bytes = Buffer.allocUnsafe(packing.starts[segmentCount]!); // every byte is written below
  for (let s = 0; s < segmentCount; s++) writeSegment(bytes, packing, s);
  if (segmentCount === 1 || !packing.withDigests) return { bytes, segment0End: packing.starts[1]! };
  writePairDigests(bytes, packing);
  const [, pairEnd] = pairRange(packing.starts, segmentCount, 0);
  return {
    bytes,
    segment0End: packing.starts[1]!,
    digests: {
      segment0: digest128(bytes.subarray(0, packing.starts[1]!)),
      pair0: digest128(bytes.subarray(0, pairEnd)),
    },
  };
}

/** One variant being packed: its records (`pool[members[i]]`, `f` fragments each) and its segments' starts. */
interface Packing {
  pool: readonly PackedRecord[];
  members: readonly number[];
  f: number;
  /** Each segment but the last leaves room for the digest of the pair after it. */
  withDigests: boolean;
  /** Where each segment starts, then the object's length. */
  starts: number[];
}

/** The records of segment `s`: the first member's index and how many. */
function segmentSpan(packing: Packing, s: number): { first: number; n: number } {
  const first = s * SEGMENT_SIZE;
  return { first, n: Math.min(SEGMENT_SIZE, packing.members.length - first) };
}

/** The start of every segment and the object's length (throws on a record with the wrong fragment count). */
function segmentStarts(packing: Packing): number[] {
  const { pool, members, f, withDigests } = packing;
  const segmentCount = Math.max(1, Math.ceil(members.length / SEGMENT_SIZE));
  const starts = new Array<number>(segmentCount + 1);
  starts[0] = 0;
  for (let s = 0; s < segmentCount; s++) {
    const { first, n } = segmentSpan(packing, s);
    let body = 0;
    for (let r = first; r < first + n; r++) {
      const record = pool[members[r]!]!;
      if (record.offsets.length !== f + 1) throw new Error('record has the wrong number of fragments');
      body += record.bytes.byteLength;
    }
    const gap = withDigests && s + 1 < segmentCount ? PAIR_DIGEST_BYTES : 0;
    starts[s + 1] = starts[s]! + FIXED_HEADER + 4 * (n * f + 1) + gap + body;
  }
  return starts;
}

/** Segment `s` into `bytes`: its header, its fragment offsets and its records (the pair digest is left for later). */
function writeSegment(bytes: Buffer, packing: Packing, s: number): void {
  const { pool, members, f, withDigests, starts } = packing;
  const segmentCount = starts.length - 1;
  const { first, n } = segmentSpan(packing, s);
  const at = starts[s]!;
  bytes.writeUInt32LE(MAGIC, at);
  bytes.writeUInt32LE(n, at + 4);
  bytes.writeUInt32LE(f, at + 8);
  bytes.writeUInt32LE(members.length, at + 12);
  bytes.writeUInt32LE(s, at + 16);
  for (let k = 0; k < 3; k++)
    bytes.writeUInt32LE(starts[s + 1 + k] ?? starts[segmentCount]!, at + 20 + 4 * k);
  let slot = at + FIXED_HEADER;
  const bodyStart = slot + 4 * (n * f + 1);
  // The digest of the next pair goes here once the segments after this one are written (writePairDigests).
  let body = bodyStart + (withDigests && s + 1 < segmentCount ? PAIR_DIGEST_BYTES : 0);
  for (let r = first; r < first + n; r++) {
    const { bytes: recordBytes, offsets } = pool[members[r]!]!;
    const base = body - bodyStart;
    for (let k = 0; k < f; k++) {
      bytes.writeUInt32LE(base + offsets[k]!, slot);
      slot += 4;
    }
    bytes.set(recordBytes, body);
    body += recordBytes.byteLength;
  }
  bytes.writeUInt32LE(body - bodyStart, slot);
}

/** Each segment's digest of the pair after it, back to front: a pair holds the digests of the pairs after it. */
function writePairDigests(bytes: Buffer, packing: Packing): void {
  const { f, starts } = packing;
  const segmentCount = starts.length - 1;
  for (let s = segmentCount - 2; s >= 0; s--) {
    const { n } = segmentSpan(packing, s);
    const [from, to] = pairRange(starts, segmentCount, s + 1);
    digestInto(bytes.subarray(from, to), bytes, starts[s]! + FIXED_HEADER + 4 * (n * f + 1));
  }
}

/** Write the 16-byte digest of `data` into `target` at `at` (the bytes of {@link digest128}). */
function digestInto(data: Uint8Array, target: Buffer, at: number): void {
  hash('sha256', data, 'buffer').copy(target, at, 0, PAIR_DIGEST_BYTES);
}

/**
 * The records of a variant object, in order, as views into `bytes`: the inverse of
 * {@link encodePackedVariant} (a publish takes unchanged modules' records from the version it replaces).
 * Throws {@link FormatError} when `bytes` is not a well-formed variant of `fragmentsPerRecord` fragments.
 * @example decodePackedVariant(encodePackedVariant(pool, [2, 0], f).bytes, f) // → [pool[2], pool[0]] (equal bytes)
 */
export function decodePackedVariant(bytes: Buffer, fragmentsPerRecord: number): PackedRecord[] {
  const f = fragmentsPerRecord;
  const records: PackedRecord[] = [];
  let at = 0;
  let index = 0;
  while (at < bytes.byteLength) {
    const segment = decodeSegment(bytes, at);
    if (segment.index !== index || segment.fragmentsPerRecord !== f)
      throw new FormatError('segments out of order');
    const slots = at + FIXED_HEADER;
    const body = slots + 4 * (segment.count * f + 1);
    // One copy of the segment's offset table, rebased per record; each record's offsets are a view of it.
    const table = new Uint32Array(segment.count * f + 1);
    for (let slot = 0; slot < table.length; slot++) table[slot] = bytes.readUInt32LE(slots + 4 * slot);
    for (let r = 0; r < segment.count; r++) {
      const start = table[r * f]!;
      const end = table[(r + 1) * f]!;
      if (end < start) throw new FormatError('record offsets out of order');
      const offsets = new Uint32Array(f + 1);
      for (let k = 0; k <= f; k++) offsets[k] = table[r * f + k]! - start;
      records.push({ bytes: bytes.subarray(body + start, body + end), offsets });
    }
    at += segment.byteLength;
    index++;
  }
  if (records.length !== (index === 0 ? 0 : decodeSegment(bytes, 0).total))
    throw new FormatError('record count does not match the header');
  return records;
}

export class FormatError extends Error {
  override name = 'FormatError';
}

/** A decoded segment: views into the bytes it was read from; nothing is copied or parsed. */
export interface Segment {
  /** Absolute offset of the segment in its object. */
  start: number;
  index: number;
  count: number;
  total: number;
  fragmentsPerRecord: number;
  /** Absolute offsets of segments index+1..index+3 (object length when absent). */
  next: [number, number, number];
  /**
   * The digest (base64url) of the next pair `[next[0], next[2])`, the range a cursor to the next segment
   * reads; undefined when the segment records none (the last segment, or an object of format 2).
   */
  nextPairDigest: string | undefined;
  /** Fragment `k` of record `r` (0-based within this segment). */
  fragment(r: number, k: number): Buffer;
  /** Byte length of this segment. */
  byteLength: number;
}

/**
 * Decode the segment at `at` of `bytes`, where `bytes` holds the object from absolute offset `base`.
 * Throws {@link FormatError} on anything that is not a well-formed segment (a forged cursor, a wrong key).
 */
export function decodeSegment(bytes: Buffer, at: number, base = 0): Segment {
  if (at < 0 || at + FIXED_HEADER > bytes.byteLength) throw new FormatError('segment header out of range');
  if (bytes.readUInt32LE(at) !== MAGIC) throw new FormatError('not a segment');
  const count = bytes.readUInt32LE(at + 4);
  const f = bytes.readUInt32LE(at + 8);
  const total = bytes.readUInt32LE(at + 12);
  const index = bytes.readUInt32LE(at + 16);
  const next: [number, number, number] = [
    bytes.readUInt32LE(at + 20),
    bytes.readUInt32LE(at + 24),
    bytes.readUInt32LE(at + 28),
  ];
  if (count > SEGMENT_SIZE || f === 0 || f > 64) throw new FormatError('bad segment header');
  const slots = count * f + 1;
  const bodyStart = at + FIXED_HEADER + 4 * slots;
  if (bodyStart > bytes.byteLength) throw new FormatError('segment offsets out of range');
  const bodyLength = bytes.readUInt32LE(at + FIXED_HEADER + 4 * (slots - 1));
  if (bodyStart + bodyLength > bytes.byteLength) throw new FormatError('segment body out of range');
  const offsetAt = (slot: number) => bytes.readUInt32LE(at + FIXED_HEADER + 4 * slot);
  const gap = count === 0 ? 0 : offsetAt(0);
  if (gap !== 0 && (gap !== PAIR_DIGEST_BYTES || gap > bodyLength)) throw new FormatError('bad segment body');
  return {
    start: base + at,
    index,
    count,
    total,
    fragmentsPerRecord: f,
    next,
    nextPairDigest: gap === 0 ? undefined : bytes.toString('base64url', bodyStart, bodyStart + gap),
    byteLength: bodyStart + bodyLength - at,
    fragment(r, k) {
      const slot = r * f + k;
      return bytes.subarray(bodyStart + offsetAt(slot), bodyStart + offsetAt(slot + 1));
    },
  };
}

/** Serialise one fragment: `"key":<json>` with the value already stable-stringified by the caller. */
export function fragment(key: string, jsonValue: string): Buffer {
  return Buffer.from(`${JSON.stringify(key)}:${jsonValue}`);
}
