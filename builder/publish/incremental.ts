/**
 * An incremental build: the next version from the previous one's manifest and only the work an edit causes.
 *
 * A module list variant's object depends only on its members' records and their order, so a variant that
 * contains no changed module (before or after the edit) is unchanged. The modules whose record digest or
 * filter values differ from the manifest — added and removed ones included — name every variant that can
 * have changed: the subsets of their (manufacturer, hp, standard) × (no tag | one of their tags), with the
 * values they had before and have now. Only those variants, the changed modules' details, the small lists
 * (always re-rendered) and the details of the manufacturers whose record or modules changed are encoded;
 * only the shards holding their keys are read and rewritten. The result is byte-identical to a full build of
 * the same snapshot (a test compares them); when an edit touches many modules, or the shard count would change, a full build is the
 * cheaper path and the caller takes it.
 */

import { type IndexEntry, type Pointer, shardCountFor, shardOf } from '../../store/pointer.js';
import { detailKey, type ModuleFilters, variantKey } from '../../store/schema.js';
import {
  type EncodedJob,
  encodeJob,
  entryObject,
  type Job,
  manufacturerDetailJob,
  moduleDetailJob,
  type RenderedObject,
  smallListJobs,
  variantJobs,
} from '../render/jobs.js';
import type { PreparedCatalogue } from '../render/prepare.js';
import { type ObjectTable, patchShards, readShards, type ShardSet } from '../render/shards.js';
import { type Manifest, type ModuleRow, moduleRows } from './manifest.js';

/** Above this share of changed modules a full build is cheaper than scanning per variant. */
const MAX_CHANGED_SHARE = 0.02;
const MIN_CHANGED_LIMIT = 64;

/** What an edit changes, assembled from the previous version's manifest and the shards it touches. */
export interface IncrementalBuild {
  /** Index keys whose entry changed: before (absent when added) and after (absent when removed). */
  changes: Map<string, { before?: IndexEntry; after?: IndexEntry }>;
  /** Data objects and shards the previous version does not reference: the only uploads. */
  uploads: RenderedObject[];
  /** Every object the new version references. */
  objects: ObjectTable;
  shards: ShardSet;
  /** Index entries of the new version. */
  entries: number;
  /** Entries of the small lists and manufacturer details, for its manifest. */
  smallEntries: Map<string, IndexEntry>;
}

export type IncrementalOutcome = { ok: true; build: IncrementalBuild } | { ok: false; reason: string };

/** The filter sets a module with `row`'s values belongs to (8 subsets × no tag or one of its tags). */
function filterSets(row: ModuleRow): ModuleFilters[] {
  const [, , manufacturerId, hp, standard, tagIds] = row;
  const sets: ModuleFilters[] = [];
  for (const tag of [undefined, ...tagIds]) {
    for (let subset = 0; subset < 8; subset++) {
      const filters: ModuleFilters = {};
      if (subset & 1) filters.manufacturer_id = manufacturerId;
      if (subset & 2) filters.hp = hp;
      if (subset & 4) filters.standard = standard;
      if (tag !== undefined) filters.tag = tag;
      sets.push(filters);
    }
  }
  return sets;
}

const sameRow = (a: ModuleRow, b: ModuleRow) =>
  a[1] === b[1] &&
  a[2] === b[2] &&
  a[3] === b[3] &&
  a[4] === b[4] &&
  a[5].length === b[5].length &&
  a[5].every((tag, i) => tag === b[5][i]);

const sameEntry = (a: IndexEntry | undefined, b: IndexEntry | undefined) =>
  a === b || (Array.isArray(a) && Array.isArray(b) && a[0] === b[0] && a[1] === b[1] && a[2] === b[2]);

/**
 * Build the next version from `previous` (its pointer and manifest); `readShard` reads a shard of it.
 * @example
 * const outcome = await buildIncrementally(prepareCatalogue(snapshot), { pointer, manifest }, readShard);
 * if (outcome.ok) for (const { objectId, bytes } of outcome.build.uploads) await put(objectId, bytes);
 */
export async function buildIncrementally(
  prepared: PreparedCatalogue,
  previous: { pointer: Pointer; manifest: Manifest },
  readShard: (shardId: string) => Promise<Buffer>,
): Promise<IncrementalOutcome> {
  const { manifest, pointer } = previous;
  if (manifest.shardCount !== pointer.shards.length)
    return { ok: false, reason: 'the manifest does not match the pointer' };
  const modules = changedModules(prepared, manifest);
  if ('reason' in modules) return { ok: false, reason: modules.reason };
  const { encoded, smallEntries } = encodeChanges(prepared, manifest, modules);
  // The previous entries of every key we touch come from its shards: read only those.
  const shards = await readShards(pointer, encoded.keys(), readShard);
  const indexed = indexChanges(previous, shards, encoded);
  const { changes, entries } = indexed;
  if (shardCountFor(entries) !== pointer.shards.length) {
    return { ok: false, reason: `the index grows to ${entries} entries, which changes its shard count` };
  }
  const { objects, uploads, shardSet } = objectChanges(previous, shards, encoded, indexed);
  return {
    ok: true,
    build: { changes, uploads, objects, shards: shardSet, entries, smallEntries },
  };
}

/** The modules of the manifest that changed or went; a reason for a full build when too many did. */
function changedModules(
  prepared: PreparedCatalogue,
  manifest: Manifest,
): { changedRows: ModuleRow[]; goneRows: ModuleRow[] } | { reason: string } {
  const rows = moduleRows(prepared);
  const changedRows: ModuleRow[] = [];
  const seen = new Set<number>();
  for (const row of rows) {
    seen.add(row[0]);
    const before = manifest.modules.get(row[0]);
    if (!before || !sameRow(before, row)) changedRows.push(row);
  }
  const goneRows = [...manifest.modules.values()].filter((row) => !seen.has(row[0]));
  const limit = Math.max(MIN_CHANGED_LIMIT, Math.ceil(MAX_CHANGED_SHARE * rows.length));
  if (changedRows.length + goneRows.length > limit) {
    return { reason: `${changedRows.length + goneRows.length} modules changed` };
  }

  return { changedRows, goneRows };
}

/** What to encode, by index key (null: the key goes), and the small entries of the next version. */
function encodeChanges(
  prepared: PreparedCatalogue,
  manifest: Manifest,
  { changedRows, goneRows }: { changedRows: ModuleRow[]; goneRows: ModuleRow[] },
): { encoded: Map<string, EncodedJob | null>; smallEntries: Map<string, IndexEntry> } {
  const encoded = new Map<string, EncodedJob | null>();
  const encode = (job: Job) => {
    encoded.set(job.indexKey, encodeJob(job));
  };
  const smallEntries = new Map<string, IndexEntry>();
  const renderSmall = (job: Job) => {
    const result = encodeJob(job);
    smallEntries.set(job.indexKey, result.entry);
    if (!sameEntry(manifest.smallEntries.get(job.indexKey), result.entry)) encoded.set(job.indexKey, result);
  };
  for (const job of smallListJobs(prepared)) renderSmall(job);
  // A manufacturer's detail changes with its own record or with one of its modules (before or after).
  const touched = new Set<number>();
  for (const row of [...changedRows, ...goneRows]) {
    touched.add(row[2]);
    const before = manifest.modules.get(row[0]);
    if (before) touched.add(before[2]);
  }
  for (const maker of prepared.makers) {
    const key = detailKey('manufacturers', maker.id);
    const previous = manifest.smallEntries.get(key);
    if (previous !== undefined && !touched.has(maker.id) && manifest.makers.get(maker.id) === maker.digest) {
      smallEntries.set(key, previous);
    } else renderSmall(manufacturerDetailJob(prepared, maker));
  }
  for (const key of manifest.smallEntries.keys()) if (!smallEntries.has(key)) encoded.set(key, null);

  const positionById = new Map(prepared.snapshot.modules.map((module, position) => [module.id, position]));
  for (const row of changedRows) encode(moduleDetailJob(prepared, positionById.get(row[0])!));
  for (const row of goneRows) encoded.set(detailKey('modules', row[0]), null);

  const variants = new Map<string, ModuleFilters>();
  for (const row of [...changedRows, ...goneRows, ...changedRows.map((r) => manifest.modules.get(r[0]))]) {
    if (!row) continue;
    for (const filters of filterSets(row)) variants.set(variantKey('modules', filters, 'id'), filters);
  }
  for (const filters of variants.values()) {
    const pair = variantJobs(prepared, filters);
    if (pair.length === 0) {
      encoded.set(variantKey('modules', filters, 'id'), null);
      encoded.set(variantKey('modules', filters, 'name'), null);
    } else for (const job of pair) encode(job);
  }

  return { encoded, smallEntries };
}

type ShardEntries = Awaited<ReturnType<typeof readShards>>;

/** The index entries that change (before and after), the patch to the shards, and the entries' count after. */
function indexChanges(
  { pointer, manifest }: { pointer: Pointer; manifest: Manifest },
  shards: ShardEntries,
  encoded: ReadonlyMap<string, EncodedJob | null>,
): {
  changes: Map<string, { before?: IndexEntry; after?: IndexEntry }>;
  patch: Map<string, IndexEntry | null>;
  entries: number;
} {
  const count = pointer.shards.length;
  const before = (key: string) => shards.get(shardOf(key, count))?.get(key);
  const changes = new Map<string, { before?: IndexEntry; after?: IndexEntry }>();
  const patch = new Map<string, IndexEntry | null>();
  let entries = manifest.entries;
  for (const [key, result] of encoded) {
    const old = before(key);
    const next = result === null ? undefined : result.entry;
    if (sameEntry(old, next)) continue;
    changes.set(key, {
      ...(old !== undefined && { before: old }),
      ...(next !== undefined && { after: next }),
    });
    patch.set(key, next ?? null);
    if (old === undefined) entries++;
    if (next === undefined) entries--;
  }
  return { changes, patch, entries };
}

/**
 * The next version's object table (the previous one, each object's references released and retained as the
 * index changes), its patched shards, and the objects to upload.
 */
function objectChanges(
  { pointer, manifest }: { pointer: Pointer; manifest: Manifest },
  shards: ShardEntries,
  encoded: ReadonlyMap<string, EncodedJob | null>,
  { changes, patch }: ReturnType<typeof indexChanges>,
): { objects: ObjectTable; uploads: RenderedObject[]; shardSet: ShardSet } {
  const objects: ObjectTable = new Map();
  for (const [id, row] of manifest.objects) objects.set(id, { ...row });
  const release = (id: string) => {
    const row = objects.get(id);
    if (!row) throw new Error(`the manifest of ${manifest.version} does not list ${id}, which it references`);
    if (--row.refs === 0) objects.delete(id);
  };
  const retain = (id: string, size: number) => {
    const row = objects.get(id);
    if (row) row.refs++;
    else objects.set(id, { refs: 1, size });
  };
  const bytesOf = new Map<string, Buffer>();
  for (const [key, { before: old, after: next }] of changes) {
    if (old !== undefined) release(entryObject(old));
    if (next !== undefined) {
      const result = encoded.get(key)!;
      retain(result.objectId, result.bytes.byteLength);
      bytesOf.set(result.objectId, result.bytes);
    }
  }
  const shardSet = patchShards(pointer, shards, patch);
  pointer.shards.forEach((id, slot) => {
    const next = shardSet.pointer.shards[slot]!;
    if (next === id) return;
    release(id);
    const bytes = shardSet.bytes.get(next)!;
    retain(next, bytes.byteLength);
    bytesOf.set(next, bytes);
  });
  const uploads: RenderedObject[] = [];
  for (const [objectId, bytes] of bytesOf) {
    if (!manifest.objects.has(objectId) && objects.has(objectId)) uploads.push({ objectId, bytes });
  }
  return { objects, uploads, shardSet };
}
