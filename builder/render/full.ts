/**
 * A full render: a validated snapshot → the complete precomputed API (docs/design.md#what-the-builder-guarantees, 1–3).
 * Pure and deterministic: the same snapshot always yields the same objects, object ids, shards and pointer.
 * Every job (jobs.ts) is encoded; identical objects are one object (content addressing).
 */
import type { CatalogueIndex, IndexEntry, Pointer } from '../../store/pointer.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import { allJobs, encodeJob, type RenderedObject, smallListJobs } from './jobs.js';
import { type PreparedCatalogue, prepareCatalogue } from './prepare.js';
import { buildShards, type ObjectTable } from './shards.js';
import { type ModuleVariant, moduleVariants } from './variants.js';

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

/**
 * A full render in progress: objects are encoded as they are pulled, so memory stays bounded.
 *
 * Its progress is counted in distinct data objects, not in jobs: a first publish spends its time writing
 * objects, one write each (at 25,000 modules: 79,569 objects from 328,427 jobs; a detail and a 1,000-record
 * list cost about the same to upload, while the three quarters of jobs that repeat an object cost almost
 * nothing). Counted in jobs, the share done ran far behind the share of time (7 % after a third of it).
 */
export interface FullRender {
  readonly prepared: PreparedCatalogue;
  /** Distinct data objects yielded so far (a progress count). */
  readonly encoded: number;
  /** Distinct data objects to yield: the progress total (counted before rendering, see {@link countObjects}). */
  readonly jobs: number;
  /** Every distinct data object once, in a deterministic order; can be consumed once. Shards are not here. */
  objects(): Generator<RenderedObject>;
  /** Entries, object table, shards and pointer; only after {@link objects} has been consumed fully. */
  result(): RenderedCatalogue;
}

/**
 * Start the full render of a validated snapshot (or of one already prepared).
 * @example
 * const render = renderInFull(snapshot);
 * for (const { objectId, bytes } of render.objects()) await store.put(`o/${objectId}`, bytes);
 * const { shards, pointerBytes } = render.result();
 */
export function renderInFull(snapshot: Snapshot | PreparedCatalogue): FullRender {
  const prepared = 'packedModules' in snapshot ? snapshot : prepareCatalogue(snapshot);
  const variants = moduleVariants(prepared.snapshot.modules, prepared.byId, prepared.byName);
  const entries = new Map<string, IndexEntry>();
  const objects: ObjectTable = new Map();
  let encoded = 0;
  let result: RenderedCatalogue | undefined;
  let started = false;
  const jobs = countObjects(prepared, variants);

  function* encodeAll(): Generator<RenderedObject> {
    if (started) throw new Error('the objects of a full render can be consumed once');
    started = true;
    for (const job of allJobs(prepared, variants)) {
      const { objectId, bytes, entry } = encodeJob(job);
      entries.set(job.indexKey, entry);
      const known = objects.get(objectId);
      if (known) {
        known.refs++; // content addressing: identical variants are one object
        continue;
      }
      objects.set(objectId, { refs: 1, size: bytes.byteLength });
      encoded++;
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
    objects: encodeAll,
    result() {
      if (!result) throw new Error('result() before every object was rendered');
      return result;
    },
  };
}

/**
 * How many distinct data objects the jobs of {@link allJobs} encode, found without encoding them: jobs over
 * the same kind of record with the same records in the same order have the same bytes (a module's detail and
 * a one-module list, a list whose id and name orders agree, variants with the same modules). Manufacturer
 * details name their manufacturer, so they are all distinct. About 0.1 s at 25,000 modules.
 * @example countObjects(prepared, moduleVariants(modules, prepared.byId, prepared.byName)) // → 79569 at 25,000 modules
 */
function countObjects(prepared: PreparedCatalogue, variants: ReadonlyMap<string, ModuleVariant>): number {
  const seen = new Set<string>();
  for (const job of smallListJobs(prepared))
    seen.add(`${job.indexKey.split('?')[0]}:${membersKey(job.members)}`);
  for (const position of prepared.byId) seen.add(String(position));
  for (const variant of variants.values()) {
    seen.add(membersKey(variant.byId));
    seen.add(membersKey(variant.byName));
  }
  return seen.size + prepared.makers.length;
}

/**
 * A key of a sequence of record positions: the position itself for one, else the length and a 64-bit hash
 * (two 32-bit multiplicative hashes). A collision would only make a progress total one too small.
 */
function membersKey(members: readonly number[]): string {
  if (members.length === 1) return String(members[0]);
  let a = 0x811c9dc5;
  let b = members.length;
  for (const member of members) {
    a = Math.imul(a ^ member, 0x01000193);
    b = Math.imul(b ^ member, 0x5bd1e995) ^ (b >>> 13);
  }
  return `${members.length}.${a >>> 0}.${b >>> 0}`;
}

/**
 * Render a validated snapshot completely in memory: the logical index, the pointer, and every distinct
 * object by id (shards included). For large catalogues prefer {@link renderInFull}.
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
  const render = renderInFull(snapshot);
  const objects = new Map<string, Buffer>();
  for (const { objectId, bytes } of render.objects()) objects.set(objectId, bytes);
  const { entries, shards, pointer, pointerBytes } = render.result();
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
