/**
 * Rendering: a validated snapshot → the complete precomputed API (DESIGN.md builder invariants 1–3).
 * Pure and deterministic: the same snapshot always yields the same objects, object ids, shards and pointer.
 *
 * Every object is one job: an index key (a list variant's {@link variantKey} or a detail's
 * {@link detailKey}) and the records it holds, in order. {@link prepareCatalogue} serialises every record
 * once; {@link planCatalogue} (a full build) encodes every job, and builder/publish/incremental.ts encodes only the
 * jobs an edit touches.
 */

import { objectIdFor } from '../../store/layout.js';
import type { CatalogueIndex, IndexEntry, Pointer } from '../../store/pointer.js';
import {
  detailKey,
  FRAGMENTS,
  type ListEndpoint,
  type ModuleFilters,
  nameCollator,
  variantKey,
} from '../../store/schema.js';
import { encodePackedVariant, type PackedRecord, packRecord } from '../../store/segments.js';
import type { ReuseKey } from '../publish/manifest.js';
import { type ReusableModule, sourceDigests } from '../publish/reuse.js';
import { buildShards, type ObjectTable } from '../publish/shards.js';
import type { Module, Snapshot } from '../snapshot/snapshot.js';
import { DIGEST_BYTES, recordDigest, writeRecordDigest } from './digests.js';
import {
  idOrder,
  manufacturerDetailFragments,
  manufacturerFragments,
  moduleFragments,
  nameOrder,
  standardFragments,
  tagFragments,
  tagJsonById,
} from './records.js';
import { type ModuleVariant, moduleVariants } from './variants.js';

export interface RenderedObject {
  objectId: string;
  bytes: Buffer;
}

/** One object to encode: where it goes in the index and which records it holds, in order. */
export interface Job {
  key: string;
  /** List entries carry a count and the first segment's end; details only the object id. */
  list: boolean;
  fragmentsPerRecord: number;
  /** The object's records are `pool[members[0]], pool[members[1]], …`. */
  pool: readonly PackedRecord[];
  members: readonly number[];
}

/** A snapshot with every record serialised once, and what an incremental build compares. */
export interface PreparedCatalogue {
  snapshot: Snapshot;
  /** Packed fragments of each module, by position in `snapshot.modules`. */
  packedModules: PackedRecord[];
  /** 16-byte digest of each packed module (position `p` at `16 * p`): equal digests, equal records. */
  moduleDigests: Buffer;
  /** Module positions in id order and in name order. */
  byId: number[];
  byName: number[];
  /** Lists of standards, tags and manufacturers: small, always encoded. */
  listJobs: Job[];
  /**
   * Manufacturers in id order, each with the digest of its own record (its detail's fields besides
   * `modules`) and the positions of its modules in id order: an incremental build renders the details of
   * the manufacturers an edit touches ({@link manufacturerDetailJob}), a full build all of them.
   */
  makers: { id: number; digest: string; record: PackedRecord; modules: number[] }[];
  /** Digest of each module's source record (builder/publish/reuse.ts); null without a builder fingerprint. */
  sourceDigests: string[] | null;
  reuse: ReuseKey | null;
  /** Modules whose bytes were taken over from the current version rather than serialised. */
  reused: number;
}

export interface PrepareOptions {
  /**
   * The reuse key of this build (builder/publish/reuse.ts reuseKey: the builder's fingerprint and the tags): record
   * source digests and the key in the manifest, for the next publish. Without it nothing is recorded.
   */
  reuse?: ReuseKey;
  /** The source digests of the snapshot's modules, when already computed (by loadSnapshot). */
  sourceDigests?: string[];
  /** Modules of the current version to take over when their source is unchanged, by id. */
  reusable?: ReadonlyMap<number, ReusableModule>;
}

/**
 * Serialise every record of a validated snapshot once.
 * @example prepareCatalogue(snapshot).listJobs.length // → 6: standards, tags, manufacturers by id and by name
 */
export function prepareCatalogue(snapshot: Snapshot, options: PrepareOptions = {}): PreparedCatalogue {
  const { modules, manufacturers } = snapshot;
  const { reuse, reusable } = options;
  const sources = reuse === undefined ? null : (options.sourceDigests ?? sourceDigests(modules));
  const tagJson = tagJsonById(snapshot.tags);
  const packedModules: PackedRecord[] = new Array(modules.length);
  const moduleDigests = Buffer.alloc(DIGEST_BYTES * modules.length);
  let reused = 0;
  modules.forEach((module, position) => {
    const previous = reusable?.get(module.id);
    if (previous && sources && previous.row[6] === sources[position]) {
      packedModules[position] = previous.packed;
      moduleDigests.write(previous.row[1], DIGEST_BYTES * position, DIGEST_BYTES, 'base64url');
      reused++;
    } else {
      packedModules[position] = moduleFragments(module, tagJson);
      writeRecordDigest(packedModules[position]!, moduleDigests, position);
    }
  });
  const byId = idOrder(modules);
  const byName = nameOrder(modules, nameCollator);

  const manufacturerPool = manufacturers.map((manufacturer) =>
    packRecord(manufacturerFragments(manufacturer)),
  );
  const lists: Job[] = [
    ...listJobs(
      'standards',
      snapshot.standards,
      FRAGMENTS.standard.length,
      snapshot.standards.map((standard) => packRecord(standardFragments(standard))),
    ),
    ...listJobs(
      'tags',
      snapshot.tags,
      FRAGMENTS.tag.length,
      snapshot.tags.map((tag) => packRecord(tagFragments(tag))),
    ),
    ...listJobs('manufacturers', manufacturers, FRAGMENTS.manufacturer.length, manufacturerPool),
  ];
  const modulesByMaker = new Map<number, number[]>();
  for (const position of byId) {
    const makerId = modules[position]!.manufacturer_id;
    let list = modulesByMaker.get(makerId);
    if (!list) {
      list = [];
      modulesByMaker.set(makerId, list);
    }
    list.push(position);
  }
  const makers = idOrder(manufacturers).map((position) => {
    const { id } = manufacturers[position]!;
    const record = manufacturerPool[position]!;
    return { id, digest: recordDigest(record), record, modules: modulesByMaker.get(id) ?? [] };
  });
  return {
    snapshot,
    packedModules,
    moduleDigests,
    byId,
    byName,
    listJobs: lists,
    makers,
    sourceDigests: sources,
    reuse: reuse ?? null,
    reused,
  };
}

function listJobs<T extends { id: number; name: string }>(
  endpoint: Exclude<ListEndpoint, 'modules'>,
  records: readonly T[],
  fragmentsPerRecord: number,
  pool: readonly PackedRecord[],
): Job[] {
  if (records.length === 0) return []; // an empty list is absent from the index; the proxy answers []
  return [
    { members: idOrder(records), key: variantKey(endpoint, {}, 'id') },
    { members: nameOrder(records, nameCollator), key: variantKey(endpoint, {}, 'name') },
  ].map(({ members, key }) => ({ key, list: true, fragmentsPerRecord, pool, members }));
}

/**
 * The detail job of a manufacturer of {@link PreparedCatalogue.makers}: its own fields, then `modules`.
 * @example encodeJob(manufacturerDetailJob(prepared, prepared.makers[0])).entry // → the detail's object id
 */
export function manufacturerDetailJob(
  prepared: PreparedCatalogue,
  maker: PreparedCatalogue['makers'][number],
): Job {
  const modules = maker.modules.map((position) => prepared.packedModules[position]!);
  return {
    key: detailKey('manufacturers', maker.id),
    list: false,
    fragmentsPerRecord: FRAGMENTS.manufacturerDetail.length,
    pool: [packRecord(manufacturerDetailFragments(maker.record, modules))],
    members: [0],
  };
}

/** Index keys of the small jobs: the lists of standards, tags and manufacturers, and manufacturer details. */
export function smallKeys(prepared: PreparedCatalogue): string[] {
  return [
    ...prepared.listJobs.map((job) => job.key),
    ...prepared.makers.map(({ id }) => detailKey('manufacturers', id)),
  ];
}

/** The detail job of the module at `position`. */
export function moduleDetailJob(prepared: PreparedCatalogue, position: number): Job {
  return {
    key: detailKey('modules', prepared.snapshot.modules[position]!.id),
    list: false,
    fragmentsPerRecord: FRAGMENTS.module.length,
    pool: prepared.packedModules,
    members: [position],
  };
}

function matches(module: Module, filters: ModuleFilters): boolean {
  return (
    (filters.manufacturer_id === undefined || module.manufacturer_id === filters.manufacturer_id) &&
    (filters.hp === undefined || module.hp === filters.hp) &&
    (filters.standard === undefined || module.standard === filters.standard) &&
    (filters.tag === undefined || module.tag_ids.includes(filters.tag))
  );
}

/**
 * The two jobs (sort=id, sort=name) of the module list variant with `filters`, found by scanning the
 * modules; none when no module matches (the variant is then absent from the index).
 * @example variantJobs(prepared, { manufacturer_id: 3 }).map((job) => job.key)
 *   // → ['modules?manufacturer_id=3&sort=id', 'modules?manufacturer_id=3&sort=name']
 */
export function variantJobs(prepared: PreparedCatalogue, filters: ModuleFilters): Job[] {
  const { modules } = prepared.snapshot;
  const member = new Uint8Array(modules.length);
  const byId: number[] = [];
  for (const position of prepared.byId) {
    if (matches(modules[position]!, filters)) {
      member[position] = 1;
      byId.push(position);
    }
  }
  if (byId.length === 0) return [];
  const byName = prepared.byName.filter((position) => member[position] === 1);
  return [
    { key: variantKey('modules', filters, 'id'), members: byId },
    { key: variantKey('modules', filters, 'name'), members: byName },
  ].map(({ key, members }) => ({
    key,
    list: true,
    fragmentsPerRecord: FRAGMENTS.module.length,
    pool: prepared.packedModules,
    members,
  }));
}

/** Every job of a full build: small lists and details, module details, every module list variant. */
function* allJobs(prepared: PreparedCatalogue, variants: Map<string, ModuleVariant>): Generator<Job> {
  yield* prepared.listJobs;
  for (const maker of prepared.makers) yield manufacturerDetailJob(prepared, maker);
  for (const position of prepared.byId) yield moduleDetailJob(prepared, position);
  for (const [idKey, variant] of variants) {
    for (const [key, members] of [
      [idKey, variant.byId],
      [variantKey('modules', variant.filters, 'name'), variant.byName],
    ] as const) {
      yield {
        key,
        list: true,
        fragmentsPerRecord: FRAGMENTS.module.length,
        pool: prepared.packedModules,
        members,
      };
    }
  }
}

/** A job's object: its bytes, id and index entry. */
export interface EncodedJob {
  objectId: string;
  bytes: Buffer;
  entry: IndexEntry;
}

/**
 * Encode one job.
 * @example encodeJob(moduleDetailJob(prepared, 0)).entry // → the module's object id
 */
export function encodeJob(job: Job): EncodedJob {
  const { bytes, segment0End } = encodePackedVariant(job.pool, job.members, job.fragmentsPerRecord);
  const objectId = objectIdFor(bytes);
  return { objectId, bytes, entry: job.list ? [objectId, job.members.length, segment0End] : objectId };
}

/** The object id an index entry names. */
export function entryObject(entry: IndexEntry): string {
  return typeof entry === 'string' ? entry : entry[0];
}

/** What a full build has produced once its objects are consumed. */
export interface RenderedCatalogue {
  /** Every index key's entry. */
  entries: Map<string, IndexEntry>;
  /** Every object the version references (data objects and shards): references and byte length. */
  objects: ObjectTable;
  /** The shards' bytes by object id (also in {@link objects}). */
  shards: Map<string, Buffer>;
  pointer: Pointer;
  pointerBytes: Buffer;
}

/** A full render in progress: objects are encoded as they are pulled, so memory stays bounded. */
export interface CataloguePlan {
  readonly prepared: PreparedCatalogue;
  /** Jobs encoded so far (a progress count; identical objects are counted each time). */
  readonly encoded: number;
  /** Jobs to encode. */
  readonly jobs: number;
  /** Every distinct data object once, in a deterministic order; can be consumed once. Shards are not here. */
  objects(): Generator<RenderedObject>;
  /** Entries, object table, shards and pointer; only after {@link objects} has been consumed fully. */
  result(): RenderedCatalogue;
}

/**
 * Prepare the full render of a validated snapshot.
 * @example
 * const plan = planCatalogue(snapshot);
 * for (const { objectId, bytes } of plan.objects()) await store.put(`o/${objectId}`, bytes);
 * const { shards, pointerBytes } = plan.result();
 */
export function planCatalogue(snapshot: Snapshot | PreparedCatalogue): CataloguePlan {
  const prepared = 'listJobs' in snapshot ? snapshot : prepareCatalogue(snapshot);
  const variants = moduleVariants(prepared.snapshot.modules, prepared.byId, prepared.byName);
  const entries = new Map<string, IndexEntry>();
  const objects: ObjectTable = new Map();
  let encoded = 0;
  let result: RenderedCatalogue | undefined;
  let started = false;
  const jobs =
    prepared.listJobs.length + prepared.makers.length + prepared.snapshot.modules.length + 2 * variants.size;

  function* generate(): Generator<RenderedObject> {
    if (started) throw new Error('the objects of a plan can be consumed once');
    started = true;
    for (const job of allJobs(prepared, variants)) {
      const { objectId, bytes, entry } = encodeJob(job);
      entries.set(job.key, entry);
      encoded++;
      const known = objects.get(objectId);
      if (known) {
        known.refs++; // content addressing: identical variants are one object
        continue;
      }
      objects.set(objectId, { refs: 1, size: bytes.byteLength });
      yield { objectId, bytes };
    }
    const shards = buildShards(entries);
    for (const [shardId, bytes] of shards.bytes) {
      const known = objects.get(shardId);
      if (known) known.refs++;
      else objects.set(shardId, { refs: 1, size: bytes.byteLength });
    }
    result = {
      entries,
      objects,
      shards: shards.bytes,
      pointer: shards.pointer,
      pointerBytes: shards.pointerBytes,
    };
  }

  return {
    prepared,
    get encoded() {
      return encoded;
    },
    jobs,
    objects: generate,
    result() {
      if (!result) throw new Error('result() before every object was rendered');
      return result;
    },
  };
}

/**
 * Render a validated snapshot completely in memory: the logical index, the pointer, and every distinct
 * object by id (shards included). For large catalogues prefer {@link planCatalogue}.
 * @example
 * const { index, pointerBytes, objects } = renderCatalogue(snapshot);
 * objects.get(index.lists['modules?sort=id']![0]); // → the bytes of the default module list
 */
export function renderCatalogue(snapshot: Snapshot): {
  index: CatalogueIndex;
  pointer: Pointer;
  pointerBytes: Buffer;
  objects: Map<string, Buffer>;
} {
  const plan = planCatalogue(snapshot);
  const objects = new Map<string, Buffer>();
  for (const { objectId, bytes } of plan.objects()) objects.set(objectId, bytes);
  const { entries, shards, pointer, pointerBytes } = plan.result();
  for (const [shardId, bytes] of shards) objects.set(shardId, bytes);
  return { index: logicalIndex(entries), pointer, pointerBytes, objects };
}

/**
 * The entries as the logical {@link CatalogueIndex} (tests, benchmarks).
 * @example logicalIndex(new Map([['modules/1', 'AAAAAAAAAAAAAAAAAAAAAA']])).modules['1'] // → 'AAAAAAAAAAAAAAAAAAAAAA'
 */
export function logicalIndex(entries: ReadonlyMap<string, IndexEntry>): CatalogueIndex {
  const index: CatalogueIndex = { lists: {}, modules: {}, manufacturers: {} };
  for (const [key, entry] of entries) {
    if (typeof entry !== 'string') index.lists[key] = entry;
    else if (key.startsWith('modules/')) index.modules[key.slice('modules/'.length)] = entry;
    else index.manufacturers[key.slice('manufacturers/'.length)] = entry;
  }
  return index;
}
