/**
 * The published object format: the one contract between the builder (writer) and the proxy (reader).
 *
 * Layout under a prefix (a local directory or `s3://bucket/prefix/`):
 *   current.json                the pointer ({@link Pointer}): the live version and its index shards (written last)
 *   versions/<version>.json     an immutable copy of each published pointer
 *   versions/<version>.manifest what the version references (objects, module digests): the next publish and
 *                               garbage collection read it instead of listing the target
 *   versions/log.json           when each retained version became current and was superseded
 *   o/<objectId>                content-addressed immutable objects: list variants, details, index shards
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
 *   .. body         fragment bytes, each fragment is `"key":<json value>`
 */
import { createHmac, hash, timingSafeEqual } from 'node:crypto';

export const FORMAT_VERSION = 2;
export const SEGMENT_SIZE = 100;
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;
export const POINTER_KEY = 'current.json';
export const OBJECTS_DIR = 'o/';
export const VERSIONS_DIR = 'versions/';
export const LICENSE_URL = 'https://creativecommons.org/licenses/by/4.0/';

/** Module top-level fields, in the order they appear in every record. `id` is always first. */
export const MODULE_FIELDS = [
  'id',
  'name',
  'manufacturer_id',
  'hp',
  'standard',
  'depth_mm',
  'power_12v_ma',
  'power_m12v_ma',
  'power_5v_ma',
  'description',
] as const;
/** Module relations available with `include`, in record order after the fields. */
export const MODULE_RELATIONS = ['ins', 'outs', 'tags', 'panels'] as const;
export const MANUFACTURER_FIELDS = ['id', 'name', 'country'] as const;
export const MANUFACTURER_RELATIONS = ['modules'] as const;
export const STANDARD_FIELDS = ['id', 'name', 'height_mm'] as const;
export const TAG_FIELDS = ['id', 'name', 'type'] as const;
export const TAG_TYPES = [
  'nature',
  'character',
  'voice',
  'source',
  'filter',
  'modulation',
  'effect',
  'sequencing',
  'utility',
  'blank',
] as const;
export const JACK_SIGNALS = ['audio', 'cv', 'pitch', 'gate', 'trigger', 'clock', 'other'] as const;

export type ModuleField = (typeof MODULE_FIELDS)[number];
export type ModuleRelation = (typeof MODULE_RELATIONS)[number];
export type TagType = (typeof TAG_TYPES)[number];
export type JackSignal = (typeof JACK_SIGNALS)[number];

/** Fragment schema per record kind: the order of fragments inside every stored record. */
export const FRAGMENTS = {
  module: [...MODULE_FIELDS, ...MODULE_RELATIONS],
  manufacturer: [...MANUFACTURER_FIELDS],
  manufacturerDetail: [...MANUFACTURER_FIELDS, ...MANUFACTURER_RELATIONS],
  standard: [...STANDARD_FIELDS],
  tag: [...TAG_FIELDS],
} as const;
export type RecordKind = keyof typeof FRAGMENTS;

export type ListEndpoint = 'modules' | 'manufacturers' | 'standards' | 'tags';
export type SortOrder = 'id' | 'name';
export const MODULE_FILTERS = ['hp', 'manufacturer_id', 'standard', 'tag'] as const;
export type ModuleFilter = (typeof MODULE_FILTERS)[number];
export type ModuleFilters = Partial<Record<ModuleFilter, number>>;

/**
 * Canonical name of a list variant: endpoint, filters in alphabetical order, sort always explicit
 * (an omitted sort is `id`).
 * @example variantKey('modules', { tag: 5, hp: 4 }, 'name') === 'modules?hp=4&sort=name&tag=5'
 * @example variantKey('tags', {}, 'id') === 'tags?sort=id'
 */
export function variantKey(endpoint: ListEndpoint, filters: ModuleFilters, sort: SortOrder): string {
  const params: [string, string][] = [['sort', sort]];
  for (const name of MODULE_FILTERS) {
    const value = filters[name];
    if (value !== undefined) params.push([name, String(value)]);
  }
  params.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  return `${endpoint}?${params.map(([k, v]) => `${k}=${v}`).join('&')}`;
}

/** Name order of DESIGN.md §2: natural, case- and accent-insensitive; callers break ties by id. */
export const nameCollator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

/** Sort records by `sort`, ties (and `id` order) by id ascending. Returns a new array. */
export function sortRecords<T extends { id: number; name: string }>(
  records: readonly T[],
  sort: SortOrder,
): T[] {
  const copy = [...records];
  if (sort === 'id') return copy.sort((a, b) => a.id - b.id);
  return copy.sort((a, b) => nameCollator.compare(a.name, b.name) || a.id - b.id);
}

// ---------------------------------------------------------------------------------------------------------
// The index: a small pointer naming content-addressed shards

/** One list variant: its object, record count and the end offset of segment 0 (a first page's range). */
export type ListEntry = [objectId: string, count: number, segment0End: number];
/** What an index key names: a list variant's entry, or a detail's object id. */
export type IndexEntry = ListEntry | string;

/**
 * The logical index of a version: every list variant with at least one record by {@link variantKey}, and
 * detail objects by record id (decimal string). It is published split into shards ({@link shardOf}); only
 * the builder and tests ever hold all of it.
 */
export interface CatalogueIndex {
  lists: Record<string, ListEntry>;
  modules: Record<string, string>;
  manufacturers: Record<string, string>;
}

/**
 * The index key of a detail; list variants use their {@link variantKey}. The two never collide (`/` vs `?`).
 * @example detailKey('modules', 101) === 'modules/101'
 */
export function detailKey(resource: 'modules' | 'manufacturers', id: number | string): string {
  return `${resource}/${id}`;
}

/**
 * The pointer (`current.json`, written last): the version and the object ids of its index shards. Small
 * (22 characters a shard) whatever the catalogue's size, so every container reads it cheaply.
 */
export interface Pointer {
  format: typeof FORMAT_VERSION;
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
  typeof entry === 'string' ? JSON.stringify(entry) : `[${JSON.stringify(entry[0])},${entry[1]},${entry[2]}]`;

/**
 * The bytes of a shard holding `entries`: `{"entries":{…},"format":2}` with keys in code-unit order.
 * @example encodeShard(new Map([['modules/1', 'AAAAAAAAAAAAAAAAAAAAAA']])).toString()
 *   // → '{"entries":{"modules/1":"AAAAAAAAAAAAAAAAAAAAAA"},"format":2}'
 */
export function encodeShard(entries: ReadonlyMap<string, IndexEntry>): Buffer {
  const keys = [...entries.keys()].sort();
  const parts = new Array<string>(keys.length);
  for (let i = 0; i < keys.length; i++) {
    parts[i] = `${JSON.stringify(keys[i])}:${entryJson(entries.get(keys[i]!)!)}`;
  }
  return Buffer.from(`{"entries":{${parts.join(',')}},"format":${FORMAT_VERSION}}`);
}

/** A shard's entries, or `undefined` when `bytes` are not a shard of this format. */
export function parseShard(bytes: Buffer): Record<string, IndexEntry> | undefined {
  let value: { entries?: unknown; format?: unknown } | null;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (value?.format !== FORMAT_VERSION || !isPlainObject(value.entries)) return undefined;
  return value.entries as Record<string, IndexEntry>;
}

/**
 * The pointer naming `shards`, and its bytes; the version hashes the bytes without the version.
 * @example encodePointer(['AAAAAAAAAAAAAAAAAAAAAA']).pointer.version // → 22 base64url characters
 */
export function encodePointer(shards: readonly string[]): { pointer: Pointer; bytes: Buffer } {
  const body = `{"format":${FORMAT_VERSION},"shards":[${shards.map((id) => JSON.stringify(id)).join(',')}]`;
  const version = objectIdFor(Buffer.from(`${body}}`));
  return {
    pointer: { format: FORMAT_VERSION, version, shards: [...shards] },
    bytes: Buffer.from(`${body},"version":${JSON.stringify(version)}}`),
  };
}

/** The pointer, when `bytes` hold one of {@link FORMAT_VERSION} (a torn or foreign one gives `undefined`). */
export function parsePointer(bytes: Buffer): Pointer | undefined {
  let value: Partial<Pointer> | null;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
  if (
    !isPlainObject(value) ||
    value?.format !== FORMAT_VERSION ||
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

/**
 * The first 128 bits of the SHA-256 of `data`, base64url (22 characters): object ids, ETags, the builder's
 * record digests.
 */
export function digest128(data: string | Uint8Array): string {
  return hash('sha256', data, 'buffer').subarray(0, 16).toString('base64url');
}

/** Object id: the 128-bit digest of the object's bytes. */
export function objectIdFor(bytes: Uint8Array): string {
  return digest128(bytes);
}
export const OBJECT_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;

export function objectKeyFor(prefix: string, objectId: string): string {
  return `${prefix}${OBJECTS_DIR}${objectId}`;
}

// ---------------------------------------------------------------------------------------------------------
// Segments

const MAGIC = 0x31544143; // "CAT1" little-endian
const FIXED_HEADER = 32;

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

/**
 * Encode the variant whose records are `pool[members[0]], pool[members[1]], …` (every record with
 * `fragmentsPerRecord` fragments). Byte-identical to `encodeVariant(members.map(i => fragmentsOf(pool[i])), f)`.
 * @example encodePackedVariant(packedModules, variant.byName, FRAGMENTS.module.length).segment0End
 */
export function encodePackedVariant(
  pool: readonly PackedRecord[],
  members: readonly number[],
  fragmentsPerRecord: number,
): { bytes: Buffer; segment0End: number } {
  const f = fragmentsPerRecord;
  const total = members.length;
  const segmentCount = Math.max(1, Math.ceil(total / SEGMENT_SIZE));
  const starts = new Array<number>(segmentCount + 1);
  starts[0] = 0;
  for (let s = 0; s < segmentCount; s++) {
    const first = s * SEGMENT_SIZE;
    const n = Math.min(SEGMENT_SIZE, total - first);
    let body = 0;
    for (let r = first; r < first + n; r++) {
      const record = pool[members[r]!]!;
      if (record.offsets.length !== f + 1) throw new Error('record has the wrong number of fragments');
      body += record.bytes.byteLength;
    }
    starts[s + 1] = starts[s]! + FIXED_HEADER + 4 * (n * f + 1) + body;
  }
  const length = starts[segmentCount]!;
  const bytes = Buffer.allocUnsafe(length); // every byte is written below
  for (let s = 0; s < segmentCount; s++) {
    const first = s * SEGMENT_SIZE;
    const n = Math.min(SEGMENT_SIZE, total - first);
    const at = starts[s]!;
    bytes.writeUInt32LE(MAGIC, at);
    bytes.writeUInt32LE(n, at + 4);
    bytes.writeUInt32LE(f, at + 8);
    bytes.writeUInt32LE(total, at + 12);
    bytes.writeUInt32LE(s, at + 16);
    for (let k = 0; k < 3; k++) bytes.writeUInt32LE(starts[s + 1 + k] ?? length, at + 20 + 4 * k);
    let slot = at + FIXED_HEADER;
    let body = slot + 4 * (n * f + 1);
    const bodyStart = body;
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
  return { bytes, segment0End: starts[1]! };
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
  return {
    start: base + at,
    index,
    count,
    total,
    fragmentsPerRecord: f,
    next,
    byteLength: bodyStart + bodyLength - at,
    fragment(r, k) {
      const slot = r * f + k;
      return bytes.subarray(bodyStart + offsetAt(slot), bodyStart + offsetAt(slot + 1));
    },
  };
}

// ---------------------------------------------------------------------------------------------------------
// Composition (request time): bytes only, no JSON parsing.

const OPEN = Buffer.from('{');
const CLOSE = Buffer.from('}');
const COMMA = Buffer.from(',');

/**
 * Push the bytes of record `r` of `segment` to `out`, keeping the fragments whose bit is set in `mask`
 * (bit k = fragment k of the record kind's schema), in schema order.
 */
export function pushRecord(out: Uint8Array[], segment: Segment, r: number, mask: number): void {
  out.push(OPEN);
  let first = true;
  for (let k = 0; k < segment.fragmentsPerRecord; k++) {
    if ((mask & (1 << k)) === 0) continue;
    if (!first) out.push(COMMA);
    out.push(segment.fragment(r, k));
    first = false;
  }
  out.push(CLOSE);
}

/** Mask of every fragment of a record kind. */
export function fullMask(kind: RecordKind): number {
  return (1 << FRAGMENTS[kind].length) - 1;
}

/** Mask for module fields/include: `id` always, `fields` (all when undefined), the included relations. */
export function moduleMask(
  fields: readonly ModuleField[] | undefined,
  include: readonly ModuleRelation[],
): number {
  let mask = 1; // id
  const schema = FRAGMENTS.module as readonly string[];
  for (const name of fields ?? MODULE_FIELDS) mask |= 1 << schema.indexOf(name);
  for (const name of include) mask |= 1 << schema.indexOf(name);
  return mask;
}

/** Serialise one fragment: `"key":<json>` with the value already stable-stringified by the caller. */
export function fragment(key: string, jsonValue: string): Buffer {
  return Buffer.from(`${JSON.stringify(key)}:${jsonValue}`);
}

// ---------------------------------------------------------------------------------------------------------
// Cursors: opaque base64url; bound by an HMAC to the variant key; pin the variant's object.

export interface CursorState {
  objectId: string;
  /** Record offset of the page the cursor asks for. */
  offset: number;
  /** Absolute byte range [rangeStart, rangeEnd) of the object holding the segments of that page. */
  rangeStart: number;
  rangeEnd: number;
}

const CURSOR_VERSION = 1;
const CURSOR_MAC_BYTES = 16;
const CURSOR_BYTES = 1 + 16 + 12 + CURSOR_MAC_BYTES;

function cursorMac(secret: string, payload: Buffer, variant: string): Buffer {
  return createHmac('sha256', secret).update(payload).update(variant).digest().subarray(0, CURSOR_MAC_BYTES);
}

export function encodeCursor(state: CursorState, variant: string, secret: string): string {
  const payload = Buffer.alloc(CURSOR_BYTES - CURSOR_MAC_BYTES);
  payload.writeUInt8(CURSOR_VERSION, 0);
  Buffer.from(state.objectId, 'base64url').copy(payload, 1);
  payload.writeUInt32LE(state.offset, 17);
  payload.writeUInt32LE(state.rangeStart, 21);
  payload.writeUInt32LE(state.rangeEnd, 25);
  return Buffer.concat([payload, cursorMac(secret, payload, variant)]).toString('base64url');
}

/** Decode a cursor for `variant`; `undefined` when it is malformed, altered or made for another variant. */
export function decodeCursor(cursor: string, variant: string, secret: string): CursorState | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.byteLength !== CURSOR_BYTES || bytes.toString('base64url') !== cursor) return undefined;
  const payload = bytes.subarray(0, CURSOR_BYTES - CURSOR_MAC_BYTES);
  const mac = bytes.subarray(CURSOR_BYTES - CURSOR_MAC_BYTES);
  if (!timingSafeEqual(mac, cursorMac(secret, payload, variant))) return undefined;
  if (payload.readUInt8(0) !== CURSOR_VERSION) return undefined;
  const state = {
    objectId: payload.subarray(1, 17).toString('base64url'),
    offset: payload.readUInt32LE(17),
    rangeStart: payload.readUInt32LE(21),
    rangeEnd: payload.readUInt32LE(25),
  };
  if (state.offset === 0 || state.rangeEnd <= state.rangeStart) return undefined;
  return state;
}

// ---------------------------------------------------------------------------------------------------------
// ETags: strong, and they change exactly when the bytes of the representation change.

/**
 * ETag of a representation that is not pinned by a cursor (a first page, a detail, an empty list): a hash of
 * its bytes, so a consumer keeps its 304s across publishes that leave those bytes alone — also for sparse
 * views (`fields`, partial `include`) whose unselected fragments changed.
 */
export function etagOfBytes(bytes: Uint8Array): string {
  return `"${digest128(bytes)}"`;
}

/**
 * ETag of a cursor page: a hash of what selects its bytes (the pinned immutable object, offset, limit, fragment
 * mask, the variant and the cursor secret's fingerprint). The bytes of a cursor's URL never change, so this is
 * a strong validator, and it is known without reading the object: a 304 for a cursor page costs no read.
 */
export function etagFor(parts: readonly (string | number)[]): string {
  return `"${digest128(parts.join('\u0000'))}"`;
}
