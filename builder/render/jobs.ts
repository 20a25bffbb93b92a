/**
 * Jobs: every object of the API is one job, an index key (a list variant's variant key or a detail's detail
 * key, store/schema.ts) and the records it holds, in order. A full build (full.ts) encodes every job; an
 * incremental build (builder/publish/incremental.ts) only the jobs an edit touches. Encoding a job is pure:
 * the same records in the same order give the same bytes and object id.
 */
import { objectIdFor } from '../../store/layout.js';
import type { IndexEntry } from '../../store/pointer.js';
import {
  detailKey,
  FRAGMENTS,
  type ListEndpoint,
  type ModuleFilters,
  nameCollator,
  variantKey,
} from '../../store/schema.js';
import { encodePackedVariant, type PackedRecord, packRecord } from '../../store/segments.js';
import type { Module } from '../snapshot/snapshot.js';
import type { PreparedCatalogue } from './prepare.js';
import { idOrder, manufacturerDetailFragments, nameOrder } from './records.js';
import type { ModuleVariant } from './variants.js';

/** One object to encode: where it goes in the index and which records it holds, in order. */
export interface Job {
  indexKey: string;
  /** List entries carry a count and the first segment's end; details only the object id. */
  list: boolean;
  fragmentsPerRecord: number;
  /** The object's records are `pool[members[0]], pool[members[1]], …`. */
  pool: readonly PackedRecord[];
  members: readonly number[];
}

/** An object ready to be written: its content address and bytes. */
export interface RenderedObject {
  objectId: string;
  bytes: Buffer;
}

/** A job's object: its bytes, id and index entry. */
export interface EncodedJob extends RenderedObject {
  entry: IndexEntry;
}

/**
 * Encode one job.
 * @example encodeJob(moduleDetailJob(prepared, 0)).entry // → the module's object id
 */
export function encodeJob(job: Job): EncodedJob {
  const { bytes, segment0End, digests } = encodePackedVariant(job.pool, job.members, job.fragmentsPerRecord);
  const objectId = objectIdFor(bytes);
  if (!job.list) return { objectId, bytes, entry: objectId };
  const count = job.members.length;
  // A list of more than one segment records the digests of the ranges a first page and its cursor read.
  const entry: IndexEntry = digests
    ? [objectId, count, segment0End, digests.segment0, digests.pair0]
    : [objectId, count, segment0End];
  return { objectId, bytes, entry };
}

/** The object id an index entry names. */
export function entryObject(entry: IndexEntry): string {
  return typeof entry === 'string' ? entry : entry[0];
}

/**
 * The small lists: standards, tags and manufacturers, each by id and by name. Always encoded, by a full
 * build and by every incremental one (they are small, and an edit may change any of them).
 * @example smallListJobs(prepared).map((job) => job.indexKey) // → ['standards?sort=id', 'standards?sort=name', 'tags?sort=id', …]
 */
export function smallListJobs(prepared: PreparedCatalogue): Job[] {
  const { snapshot } = prepared;
  return [
    ...jobsInBothOrders('standards', snapshot.standards, FRAGMENTS.standard.length, prepared.packedStandards),
    ...jobsInBothOrders('tags', snapshot.tags, FRAGMENTS.tag.length, prepared.packedTags),
    ...jobsInBothOrders(
      'manufacturers',
      snapshot.manufacturers,
      FRAGMENTS.manufacturer.length,
      prepared.packedManufacturers,
    ),
  ];
}

function jobsInBothOrders<T extends { id: number; name: string }>(
  endpoint: Exclude<ListEndpoint, 'modules'>,
  records: readonly T[],
  fragmentsPerRecord: number,
  pool: readonly PackedRecord[],
): Job[] {
  if (records.length === 0) return []; // an empty list is absent from the index; the proxy answers []
  return [
    { members: idOrder(records), indexKey: variantKey(endpoint, {}, 'id') },
    { members: nameOrder(records, nameCollator), indexKey: variantKey(endpoint, {}, 'name') },
  ].map(({ members, indexKey }) => ({ indexKey, list: true, fragmentsPerRecord, pool, members }));
}

/**
 * The index keys whose entries a version's manifest keeps (`smallEntries`): the small lists' and every
 * manufacturer detail's. The next publish compares them instead of reading the shards that hold them.
 */
export function smallIndexKeys(prepared: PreparedCatalogue): string[] {
  return [
    ...smallListJobs(prepared).map((job) => job.indexKey),
    ...prepared.makers.map(({ id }) => detailKey('manufacturers', id)),
  ];
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
    indexKey: detailKey('manufacturers', maker.id),
    list: false,
    fragmentsPerRecord: FRAGMENTS.manufacturerDetail.length,
    pool: [packRecord(manufacturerDetailFragments(maker.record, modules))],
    members: [0],
  };
}

/** The detail job of the module at `position`. */
export function moduleDetailJob(prepared: PreparedCatalogue, position: number): Job {
  return {
    indexKey: detailKey('modules', prepared.snapshot.modules[position]!.id),
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

/** The two jobs (sort=id, sort=name) of a module list variant whose members are known in both orders. */
function moduleListJobs(
  idKey: string,
  filters: ModuleFilters,
  byId: readonly number[],
  byName: readonly number[],
  pool: readonly PackedRecord[],
): Job[] {
  return [
    { indexKey: idKey, members: byId },
    { indexKey: variantKey('modules', filters, 'name'), members: byName },
  ].map(({ indexKey, members }) => ({
    indexKey,
    list: true,
    fragmentsPerRecord: FRAGMENTS.module.length,
    pool,
    members,
  }));
}

/**
 * The two jobs (sort=id, sort=name) of the module list variant with `filters`, found by scanning the
 * modules; none when no module matches (the variant is then absent from the index).
 * @example variantJobs(prepared, { manufacturer_id: 3 }).map((job) => job.indexKey)
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
  return moduleListJobs(variantKey('modules', filters, 'id'), filters, byId, byName, prepared.packedModules);
}

/**
 * Every job of a full build, in a fixed order: small lists, manufacturer details, module details, every
 * module list variant (from render/variants.ts).
 */
export function* allJobs(
  prepared: PreparedCatalogue,
  variants: ReadonlyMap<string, ModuleVariant>,
): Generator<Job> {
  yield* smallListJobs(prepared);
  for (const maker of prepared.makers) yield manufacturerDetailJob(prepared, maker);
  for (const position of prepared.byId) yield moduleDetailJob(prepared, position);
  // Variants are keyed by their sort=id key already.
  for (const [idKey, variant] of variants) {
    yield* moduleListJobs(idKey, variant.filters, variant.byId, variant.byName, prepared.packedModules);
  }
}
