/**
 * The manifest of a version (`<prefix>versions/<version>.manifest`): what the version references and what
 * its next publish compares with, so neither a publish nor garbage collection lists the target.
 *
 * - every object it references (data objects and index shards) with its reference count and size: the
 *   next publish uploads only objects not in it, and collection deletes what no retained manifest names;
 * - per module: its record digest and its filter values (manufacturer, hp, standard, tags): an edit's
 *   affected list variants are those of the changed modules, before and after; and the digest of its
 *   source record, with the builder and tags the version was written with (builder/publish/reuse.ts): the next
 *   publish by the same builder neither validates nor serialises a module whose source is unchanged;
 * - the entries of the small lists, which every publish re-renders and compares, and of the manufacturer
 *   details, with the digest of each manufacturer's own record: a publish re-renders the details of the
 *   manufacturers whose record or modules changed;
 * - the number of index entries, to know when the shard count would change.
 *
 * Layout (integers unsigned 32-bit little-endian): magic "CATM", manifest format, meta length, meta (JSON),
 * object count, objects (16-byte id, references, size), SHA-256 of all that. A missing, foreign or corrupt
 * manifest is ignored: the publish is then a full build, with identical results.
 */
import { createHash } from 'node:crypto';
import { FORMAT_VERSION, isReadableFormat, type ReadableFormat, VERSIONS_DIR } from '../../store/layout.js';
import type { IndexEntry, Pointer } from '../../store/pointer.js';
import { SEGMENT_SIZE } from '../../store/segments.js';
import { DIGEST_BYTES } from '../render/digests.js';
import type { PreparedCatalogue, ReuseKey } from '../render/prepare.js';
import type { ObjectTable } from '../render/shards.js';

const MAGIC = 0x4d544143; // "CATM" little-endian
/** Bump whenever the meaning of a field changes. */
const MANIFEST_FORMAT = 3;
const OBJECT_ROW = 16 + 4 + 4;
const CHECKSUM = 32;

/**
 * A module as the manifest remembers it: id, record digest (base64url), filter values, and the digest of its
 * source record (null when the build had no builder fingerprint, builder/publish/reuse.ts).
 */
export type ModuleRow = [
  id: number,
  digest: string,
  manufacturerId: number,
  hp: number,
  standard: number,
  tagIds: number[],
  source: string | null,
];

export interface Manifest {
  version: string;
  /**
   * The object format of the version (store/layout.ts). Only a manifest of FORMAT_VERSION is built on
   * (incremental builds, reuse); one of an older readable format still says what to collect.
   */
  format: ReadableFormat;
  shardCount: number;
  /** Index entries of the version (lists and details). */
  entries: number;
  /** By module id. */
  modules: Map<number, ModuleRow>;
  /** Entries of the small lists and the manufacturer details, by index key (render/jobs.ts smallIndexKeys). */
  smallEntries: Map<string, IndexEntry>;
  objects: ObjectTable;
  /** Null when the version was built without a builder fingerprint: nothing of it is reused. */
  reuse: ReuseKey | null;
  /** The digest of each manufacturer's own record (its list record), by id. */
  makers: Map<number, string>;
}

interface Meta {
  version: string;
  format: number;
  segment: number;
  shards: number;
  entries: number;
  modules: ModuleRow[];
  small: Record<string, IndexEntry>;
  reuse: ReuseKey | null;
  makers: [id: number, digest: string][];
}

export const manifestKey = (prefix: string, version: string) => `${prefix}${VERSIONS_DIR}${version}.manifest`;

/**
 * The module rows of a prepared snapshot, in id order.
 * @example moduleRows(prepared)[0] // → [101, 'q2…', 1, 8, 0, [1, 4]]
 */
export function moduleRows(prepared: PreparedCatalogue): ModuleRow[] {
  const { modules } = prepared.snapshot;
  return prepared.byId.map((position) => {
    const module = modules[position]!;
    const digest = prepared.moduleDigests.toString(
      'base64url',
      DIGEST_BYTES * position,
      DIGEST_BYTES * (position + 1),
    );
    const source = prepared.sourceDigests?.[position] ?? null;
    return [
      module.id,
      digest,
      module.manufacturer_id,
      module.hp,
      module.standard,
      [...module.tag_ids],
      source,
    ];
  });
}

/**
 * The manifest of the version a build assembled.
 * @example manifestFor(prepared, pointer, entries.size, smallEntries, objects).modules.size // → modules
 */
export function manifestFor(
  prepared: PreparedCatalogue,
  pointer: Pointer,
  entries: number,
  smallEntries: Map<string, IndexEntry>,
  objects: ObjectTable,
): Manifest {
  return {
    version: pointer.version,
    format: FORMAT_VERSION,
    shardCount: pointer.shards.length,
    entries,
    modules: new Map(moduleRows(prepared).map((row) => [row[0], row])),
    smallEntries,
    objects,
    reuse: prepared.reuse,
    makers: new Map(prepared.makers.map(({ id, digest }) => [id, digest])),
  };
}

/**
 * The manifest file's bytes.
 * @example decodeManifest(encodeManifest(manifest), manifest.version)?.objects.size // → manifest.objects.size
 */
export function encodeManifest(manifest: Manifest): Buffer {
  const meta: Meta = {
    version: manifest.version,
    format: manifest.format,
    segment: SEGMENT_SIZE,
    shards: manifest.shardCount,
    entries: manifest.entries,
    modules: [...manifest.modules.values()].sort((a, b) => a[0] - b[0]),
    small: Object.fromEntries([...manifest.smallEntries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    reuse: manifest.reuse,
    makers: [...manifest.makers].sort((a, b) => a[0] - b[0]),
  };
  const metaBytes = Buffer.from(JSON.stringify(meta));
  // Sorted, so the same version always gives the same bytes.
  const ids = [...manifest.objects.keys()].sort();
  const objectsAt = 12 + metaBytes.byteLength;
  const end = objectsAt + 4 + OBJECT_ROW * ids.length;
  const bytes = Buffer.alloc(end + CHECKSUM);
  bytes.writeUInt32LE(MAGIC, 0);
  bytes.writeUInt32LE(MANIFEST_FORMAT, 4);
  bytes.writeUInt32LE(metaBytes.byteLength, 8);
  metaBytes.copy(bytes, 12);
  bytes.writeUInt32LE(ids.length, objectsAt);
  let at = objectsAt + 4;
  for (const id of ids) {
    const { refs, size } = manifest.objects.get(id)!;
    bytes.write(id, at, 16, 'base64url');
    bytes.writeUInt32LE(refs, at + 16);
    bytes.writeUInt32LE(size, at + 20);
    at += OBJECT_ROW;
  }
  createHash('sha256').update(bytes.subarray(0, end)).digest().copy(bytes, end);
  return bytes;
}

/**
 * Read the manifest of `version`; `undefined` when it is absent, corrupt, or of another version or of a format
 * this code does not read.
 * @example decodeManifest(await read(manifestKey(prefix, v)), v) ?? fullBuild()
 */
export function decodeManifest(bytes: Buffer | undefined, version: string): Manifest | undefined {
  if (!bytes || bytes.byteLength < 16 + CHECKSUM) return undefined;
  const end = bytes.byteLength - CHECKSUM;
  const checksum = createHash('sha256').update(bytes.subarray(0, end)).digest();
  if (!checksum.equals(bytes.subarray(end))) return undefined;
  if (bytes.readUInt32LE(0) !== MAGIC || bytes.readUInt32LE(4) !== MANIFEST_FORMAT) return undefined;
  const metaLength = bytes.readUInt32LE(8);
  const objectsAt = 12 + metaLength;
  if (objectsAt + 4 > end) return undefined;
  let meta: Meta;
  try {
    meta = JSON.parse(bytes.toString('utf8', 12, objectsAt)) as Meta;
  } catch {
    return undefined;
  }
  if (
    meta.version !== version ||
    !isReadableFormat(meta.format) ||
    meta.segment !== SEGMENT_SIZE ||
    !Array.isArray(meta.modules) ||
    !Array.isArray(meta.makers)
  ) {
    return undefined;
  }
  const count = bytes.readUInt32LE(objectsAt);
  if (objectsAt + 4 + OBJECT_ROW * count !== end) return undefined;
  const objects: ObjectTable = new Map();
  for (let at = objectsAt + 4; at < end; at += OBJECT_ROW) {
    // 16 bytes always give a well-formed id, and the checksum above vouches for them.
    const id = bytes.toString('base64url', at, at + 16);
    objects.set(id, { refs: bytes.readUInt32LE(at + 16), size: bytes.readUInt32LE(at + 20) });
  }
  return {
    version,
    format: meta.format,
    shardCount: meta.shards,
    entries: meta.entries,
    modules: new Map(meta.modules.map((row) => [row[0], row])),
    smallEntries: new Map(Object.entries(meta.small)),
    objects,
    reuse: meta.reuse ?? null,
    makers: new Map(meta.makers),
  };
}
