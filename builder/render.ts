/**
 * Rendering: a validated snapshot → the complete precomputed API (DESIGN.md builder invariants 1–3).
 * Pure and deterministic: the same snapshot always yields the same objects, object ids and index bytes.
 */
import {
  type CatalogueIndex,
  FRAGMENTS,
  type ListEndpoint,
  type ListEntry,
  nameCollator,
  objectIdFor,
  type RecordFragments,
  variantKey,
} from '../proxy/format.js';
import { type BuildCache, type CacheEntry, inputKey, recordDigests } from './cache.js';
import { encodePackedVariant, type PackedRecord, packRecord } from './encode.js';
import { indexWithVersion } from './index-json.js';
import {
  idOrder,
  manufacturerDetailFragments,
  manufacturerFragments,
  moduleFragments,
  nameOrder,
  standardFragments,
  tagFragments,
} from './records.js';
import type { Snapshot } from './snapshot.js';
import { moduleVariants } from './variants.js';

export interface RenderedObject {
  objectId: string;
  bytes: Buffer;
}

export interface RenderedIndex {
  index: CatalogueIndex;
  /** The index as published (`versions/<version>.json` and the pointer). */
  indexBytes: Buffer;
}

/** A render in progress: fragments and variants are computed, objects are encoded as they are pulled. */
export interface CataloguePlan {
  /** Objects to encode, identical ones counted separately (a progress total). */
  readonly encodes: number;
  /** Objects encoded (or found in the cache) so far. */
  readonly encoded: number;
  /**
   * Every distinct object once, in a deterministic order, except those reused from the cache (counted in
   * {@link reused}). Can be consumed once.
   */
  objects(): Generator<RenderedObject>;
  /** Distinct objects taken from the cache without encoding, and their bytes. */
  readonly reused: { objects: number; bytes: number };
  /** The index; only after {@link objects} has been consumed fully. */
  index(): RenderedIndex;
  /** The build cache of this render (every object of the index); only after {@link objects}. */
  cache(): BuildCache;
  /** Every object id the index references (yielded or reused); only after {@link objects}. */
  objectIds(): ReadonlySet<string>;
}

export interface PlanOptions {
  /** A previous build's cache: an object whose input key it holds is not encoded again… */
  cache?: BuildCache;
  /** …provided the target holds that object (then {@link CataloguePlan.objects} does not yield it). */
  exists?: (objectId: string) => boolean;
}

interface Job {
  /** Where the object goes in the index. */
  place: { list: string } | { module: number } | { manufacturer: number };
  fragmentsPerRecord: number;
  /** The object's records are `pool[members[0]], pool[members[1]], …`. */
  pool: readonly PackedRecord[];
  members: readonly number[];
}

function listJobs<T extends { id: number; name: string }>(
  endpoint: Exclude<ListEndpoint, 'modules'>,
  records: readonly T[],
  fragmentsPerRecord: number,
  fragmentsOf: (record: T) => RecordFragments,
): Job[] {
  if (records.length === 0) return []; // an empty list is absent from the index; the proxy answers []
  const pool = records.map((record) => packRecord(fragmentsOf(record)));
  return [
    { order: idOrder(records), sort: 'id' as const },
    { order: nameOrder(records, nameCollator), sort: 'name' as const },
  ].map(({ order, sort }) => ({
    place: { list: variantKey(endpoint, {}, sort) },
    fragmentsPerRecord,
    pool,
    members: order,
  }));
}

/**
 * Prepare the render of a validated snapshot. The returned plan encodes objects lazily, so a publisher can
 * upload each one and let it go: memory stays bounded by the fragments, not by the total bytes.
 * @example
 * const plan = planCatalogue(snapshot);
 * for (const { objectId, bytes } of plan.objects()) await store.put(`o/${objectId}`, bytes);
 * const { index, indexBytes } = plan.index();
 */
export function planCatalogue(snapshot: Snapshot, options: PlanOptions = {}): CataloguePlan {
  const { modules, manufacturers } = snapshot;
  const tagsById = new Map(snapshot.tags.map((tag) => [tag.id, tag]));
  const moduleRecords = modules.map((module) => moduleFragments(module, tagsById));
  const packedModules = moduleRecords.map((record) => packRecord(record.fragments));
  const modulesById = idOrder(modules);
  const modulesByName = nameOrder(modules, nameCollator);

  const jobs: Job[] = [];
  jobs.push(...listJobs('standards', snapshot.standards, FRAGMENTS.standard.length, standardFragments));
  jobs.push(...listJobs('tags', snapshot.tags, FRAGMENTS.tag.length, tagFragments));
  jobs.push(
    ...listJobs('manufacturers', manufacturers, FRAGMENTS.manufacturer.length, manufacturerFragments),
  );

  const topLevelsByMaker = new Map<number, string[]>();
  for (const position of modulesById) {
    const module = modules[position]!;
    let list = topLevelsByMaker.get(module.manufacturer_id);
    if (!list) {
      list = [];
      topLevelsByMaker.set(module.manufacturer_id, list);
    }
    list.push(moduleRecords[position]!.topLevel);
  }
  for (const position of idOrder(manufacturers)) {
    const manufacturer = manufacturers[position]!;
    const detail = manufacturerDetailFragments(manufacturer, topLevelsByMaker.get(manufacturer.id) ?? []);
    jobs.push({
      place: { manufacturer: manufacturer.id },
      fragmentsPerRecord: FRAGMENTS.manufacturerDetail.length,
      pool: [packRecord(detail)],
      members: [0],
    });
  }
  for (const position of modulesById) {
    jobs.push({
      place: { module: modules[position]!.id },
      fragmentsPerRecord: FRAGMENTS.module.length,
      pool: packedModules,
      members: [position],
    });
  }
  for (const [idKey, variant] of moduleVariants(modules, modulesById, modulesByName)) {
    for (const [key, order] of [
      [idKey, variant.byId],
      [variantKey('modules', variant.filters, 'name'), variant.byName],
    ] as const) {
      jobs.push({
        place: { list: key },
        fragmentsPerRecord: FRAGMENTS.module.length,
        pool: packedModules,
        members: order,
      });
    }
  }

  const lists: Record<string, ListEntry> = {};
  const moduleDetails: Record<string, string> = {};
  const manufacturerDetails: Record<string, string> = {};
  let encoded = 0;
  let finished = false;
  let started = false;
  const reused = { objects: 0, bytes: 0 };
  const emitted = new Set<string>();
  const nextCache: BuildCache = new Map();
  const { cache: previousCache, exists } = options;

  function* objects(): Generator<RenderedObject> {
    if (started) throw new Error('the objects of a plan can be consumed once');
    started = true;
    const digests = new Map<readonly PackedRecord[], Buffer>();
    for (const job of jobs) {
      let poolDigests = digests.get(job.pool);
      if (!poolDigests) {
        poolDigests = recordDigests(job.pool);
        digests.set(job.pool, poolDigests);
      }
      // The input key names the encoding's input exactly, so an equal key means equal bytes: variants
      // with the same members (in this build or the cached one) are encoded once.
      const key = inputKey(poolDigests, job.members, job.fragmentsPerRecord);
      let entry: CacheEntry | undefined = nextCache.get(key);
      let bytes: Buffer | undefined;
      if (!entry) {
        const cached = previousCache?.get(key);
        if (cached && exists?.(cached.objectId)) entry = cached;
        else {
          const encoding = encodePackedVariant(job.pool, job.members, job.fragmentsPerRecord);
          bytes = encoding.bytes;
          entry = {
            objectId: objectIdFor(bytes),
            segment0End: encoding.segment0End,
            byteLength: bytes.byteLength,
          };
        }
        nextCache.set(key, entry);
      }
      const { objectId } = entry;
      if ('list' in job.place) lists[job.place.list] = [objectId, job.members.length, entry.segment0End];
      else if ('module' in job.place) moduleDetails[job.place.module] = objectId;
      else manufacturerDetails[job.place.manufacturer] = objectId;
      encoded++;
      if (emitted.has(objectId)) continue; // content addressing: identical variants are one object
      emitted.add(objectId);
      if (bytes) yield { objectId, bytes };
      else {
        reused.objects++;
        reused.bytes += entry.byteLength;
      }
    }
    finished = true;
  }

  return {
    encodes: jobs.length,
    get encoded() {
      return encoded;
    },
    objects,
    reused,
    index() {
      if (!finished) throw new Error('index() before every object was rendered');
      return indexWithVersion(lists, moduleDetails, manufacturerDetails);
    },
    cache() {
      if (!finished) throw new Error('cache() before every object was rendered');
      return nextCache;
    },
    objectIds() {
      if (!finished) throw new Error('objectIds() before every object was rendered');
      return emitted;
    },
  };
}

/**
 * Render a validated snapshot completely in memory: the index and every distinct object by id.
 * For large catalogues prefer {@link planCatalogue}, which does not hold all the bytes at once.
 * @example
 * const { index, objects } = renderCatalogue(snapshot);
 * objects.get(index.lists['modules?sort=id']![0]); // → the bytes of the default module list
 */
export function renderCatalogue(snapshot: Snapshot): RenderedIndex & { objects: Map<string, Buffer> } {
  const plan = planCatalogue(snapshot);
  const objects = new Map<string, Buffer>();
  for (const { objectId, bytes } of plan.objects()) objects.set(objectId, bytes);
  return { ...plan.index(), objects };
}
