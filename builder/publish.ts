/**
 * Publishing (DESIGN.md builder invariant 5), one code path for every WritableObjectStore:
 * list what exists → render and upload only new objects → version file and log → pointer LAST → collect
 * what no retained version references. A publish killed at any point leaves the previous pointer and all of
 * its objects in place; running it again completes it.
 */
import {
  type CatalogueIndex,
  OBJECT_ID_PATTERN,
  OBJECTS_DIR,
  objectKeyFor,
  POINTER_KEY,
  VERSIONS_DIR,
} from '../proxy/format.js';
import type { WritableObjectStore } from '../proxy/objects/interface.js';
import { type BuildCache, decodeCache, encodeCache } from './cache.js';
import { advanceHistory, HISTORY_FILE, parseHistory, partitionHistory } from './history.js';
import { TaskPool } from './pool.js';
import { planCatalogue } from './render.js';
import type { Snapshot } from './snapshot.js';

export const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_CONCURRENCY = 16;

/** Progress of long phases; the CLI shows a bar on a terminal. */
export interface PublishProgress {
  /** A step without a count (listing, planning, collecting). */
  note(step: string): void;
  start(phase: string, total: number): void;
  update(done: number): void;
  stop(): void;
}

export interface PublishOptions {
  store: WritableObjectStore;
  /** Key prefix, '' or ending in '/'. */
  prefix?: string;
  /** A validated snapshot. */
  snapshot: Snapshot;
  /** How long a superseded version stays readable (open cursors pin it). Default 24 h. */
  retentionMs?: number;
  /** Uploads and deletions in flight. Default 16. */
  concurrency?: number;
  /** Compute and report what would change; write nothing. */
  dryRun?: boolean;
  /** The clock for the publication log and retention (tests inject one). */
  now?: () => Date;
  progress?: PublishProgress;
  warn?: (message: string) => void;
}

export interface PublishSummary {
  dryRun: boolean;
  version: string;
  previousVersion: string | null;
  /** The pointer was (or, in a dry run, would be) replaced. */
  pointerChanged: boolean;
  objects: { total: number; added: number; unchanged: number; removed: number };
  bytes: { total: number; added: number; removed: number };
  versionsRemoved: number;
  seconds: number;
}

const VERSION_FILE = new RegExp(`^${VERSIONS_DIR}([A-Za-z0-9_-]{22})\\.(json|cache)$`);
const versionKey = (prefix: string, version: string) => `${prefix}${VERSIONS_DIR}${version}.json`;
const cacheKey = (prefix: string, version: string) => `${prefix}${VERSIONS_DIR}${version}.cache`;

async function listObjects(store: WritableObjectStore, prefix: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  const from = prefix.length + OBJECTS_DIR.length;
  for await (const { key, size } of store.list(`${prefix}${OBJECTS_DIR}`)) {
    const objectId = key.slice(from);
    // Only our content-addressed objects are candidates for collection; anything else is left alone.
    if (OBJECT_ID_PATTERN.test(objectId)) sizes.set(objectId, size);
  }
  return sizes;
}

/** The versions with an index file, and those with a build cache file. */
async function listVersionFiles(
  store: WritableObjectStore,
  prefix: string,
): Promise<{ indexes: Set<string>; caches: Set<string> }> {
  const indexes = new Set<string>();
  const caches = new Set<string>();
  for await (const { key } of store.list(`${prefix}${VERSIONS_DIR}`)) {
    const match = VERSION_FILE.exec(key.slice(prefix.length));
    if (match) (match[2] === 'json' ? indexes : caches).add(match[1]!);
  }
  return { indexes, caches };
}

async function read(store: WritableObjectStore, key: string): Promise<Buffer | undefined> {
  const result = await store.get(key);
  return result.status === 'ok' ? result.body : undefined;
}

function parseIndex(bytes: Buffer | undefined): CatalogueIndex | undefined {
  if (!bytes) return undefined;
  try {
    const index = JSON.parse(bytes.toString('utf8')) as CatalogueIndex;
    return typeof index.version === 'string' && OBJECT_ID_PATTERN.test(index.version) ? index : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every object id an index references.
 * @example objectIdsOf(renderCatalogue(snapshot).index).size // → distinct objects of that version
 */
export function objectIdsOf(index: CatalogueIndex): Set<string> {
  const ids = new Set<string>();
  for (const [objectId] of Object.values(index.lists)) ids.add(objectId);
  for (const objectId of Object.values(index.modules)) ids.add(objectId);
  for (const objectId of Object.values(index.manufacturers)) ids.add(objectId);
  return ids;
}

/** Remove from `candidates` every object id `index` references. */
function dropReferenced(index: CatalogueIndex, candidates: Set<string>): void {
  if (candidates.size === 0) return;
  for (const key in index.lists) candidates.delete(index.lists[key]![0]);
  for (const key in index.modules) candidates.delete(index.modules[key]!);
  for (const key in index.manufacturers) candidates.delete(index.manufacturers[key]!);
}

interface Counts {
  objects: PublishSummary['objects'];
  bytes: PublishSummary['bytes'];
}

/**
 * Render every object and upload those the target lacks; returns the index and the build cache once all
 * uploads are done. Objects whose input the previous build's cache knows, and which the target holds, are
 * neither encoded nor uploaded.
 */
async function uploadObjects(
  options: PublishOptions,
  prefix: string,
  existing: ReadonlyMap<string, number>,
  previousCache: BuildCache | undefined,
  counts: Counts,
) {
  const { store, progress, dryRun } = options;
  const plan = planCatalogue(options.snapshot, {
    cache: previousCache,
    exists: (objectId) => existing.has(objectId),
  });
  const pool = new TaskPool(options.concurrency ?? DEFAULT_CONCURRENCY);
  progress?.start(dryRun ? 'rendering' : 'rendering and uploading', plan.encodes);
  try {
    for (const { objectId, bytes } of plan.objects()) {
      counts.objects.total++;
      counts.bytes.total += bytes.byteLength;
      if (existing.has(objectId)) {
        counts.objects.unchanged++;
      } else {
        counts.objects.added++;
        counts.bytes.added += bytes.byteLength;
        if (!dryRun) await pool.run(() => store.put(objectKeyFor(prefix, objectId), bytes));
      }
      progress?.update(plan.encoded);
    }
    await pool.drain();
  } finally {
    progress?.stop();
  }
  // A reused object is one the target holds (see `exists` above): unchanged.
  counts.objects.total += plan.reused.objects;
  counts.objects.unchanged += plan.reused.objects;
  counts.bytes.total += plan.reused.bytes;
  return { ...plan.index(), cache: plan.cache(), objectIds: plan.objectIds() };
}

/**
 * The object keys and version files that no retained version references. Retained: the new version and
 * every version current or superseded less than the retention period ago (the log says which).
 */
async function findGarbage(
  options: PublishOptions,
  prefix: string,
  retained: ReadonlySet<string>,
  known: ReadonlyMap<string, CatalogueIndex>,
  current: { version: string; ids: ReadonlySet<string> },
  existing: ReadonlyMap<string, number>,
  versionFiles: { indexes: ReadonlySet<string>; caches: ReadonlySet<string> },
  counts: Counts,
): Promise<{ objects: string[]; versions: string[] }> {
  const indexes = new Map(known);
  let complete = true;
  for (const version of retained) {
    if (indexes.has(version)) continue;
    const retainedIndex = parseIndex(await read(options.store, versionKey(prefix, version)));
    if (retainedIndex) indexes.set(version, retainedIndex);
    else complete = false;
  }
  const objects: string[] = [];
  if (complete) {
    // Candidates: what the new version does not use (usually few); then drop those another retained
    // version references. Cheaper than a set of every id of every retained index (~300k entries each).
    const candidates = new Set<string>();
    for (const objectId of existing.keys()) if (!current.ids.has(objectId)) candidates.add(objectId);
    for (const version of retained) {
      if (version !== current.version) dropReferenced(indexes.get(version)!, candidates);
    }
    for (const objectId of candidates) {
      objects.push(objectKeyFor(prefix, objectId));
      counts.objects.removed++;
      counts.bytes.removed += existing.get(objectId)!;
    }
  } else {
    // Collecting too little is safe, too much is not: without a retained index its objects are unknown.
    options.warn?.('a retained version file is missing or unreadable; objects are not collected this time');
  }
  const versions = [...versionFiles.indexes]
    .filter((version) => !retained.has(version))
    .map((version) => versionKey(prefix, version));
  // A build cache goes with its version (or alone, if its index file is gone).
  const caches = [...versionFiles.caches]
    .filter((version) => !retained.has(version))
    .map((version) => cacheKey(prefix, version));
  return { objects, versions: [...caches, ...versions] };
}

/**
 * Publish `snapshot` to `store` under `prefix`, or with `dryRun` report what that would change.
 * Store faults propagate (as DependencyError); nothing written before a fault is ever visible to readers.
 * @example
 * const summary = await publishCatalogue({ store: new DirectoryObjectStore('/srv/catalogue'), snapshot });
 * console.log(summary.objects.added, summary.bytes.added);
 */
export async function publishCatalogue(options: PublishOptions): Promise<PublishSummary> {
  const started = performance.now();
  const { store, progress } = options;
  const prefix = options.prefix ?? '';
  const dryRun = options.dryRun ?? false;
  const counts: Counts = {
    objects: { total: 0, added: 0, unchanged: 0, removed: 0 },
    bytes: { total: 0, added: 0, removed: 0 },
  };

  progress?.note('listing what the target holds');
  const existing = await listObjects(store, prefix);
  const versionFiles = await listVersionFiles(store, prefix);
  const pointerBytes = await read(store, `${prefix}${POINTER_KEY}`);
  const previous = parseIndex(pointerBytes);
  if (pointerBytes && !previous)
    options.warn?.(`the pointer ${prefix}${POINTER_KEY} is unreadable; replacing it`);
  // The current version's build cache, if any; a missing or unreadable one only means encoding everything.
  let previousCacheBytes: Buffer | undefined;
  if (previous && versionFiles.caches.has(previous.version)) {
    previousCacheBytes = await read(store, cacheKey(prefix, previous.version));
  }
  const previousCache = previous && decodeCache(previousCacheBytes, previous.version);

  // Objects first: each is immutable and content-addressed, so an object already present has these bytes.
  progress?.note('planning variants');
  const { index, indexBytes, cache, objectIds } = await uploadObjects(
    { ...options, dryRun },
    prefix,
    existing,
    previousCache,
    counts,
  );
  const historyBytes = await read(store, `${prefix}${HISTORY_FILE}`);
  const now = (options.now ?? (() => new Date()))();
  const advanced = advanceHistory(parseHistory(historyBytes), previous?.version ?? null, index.version, now);
  const { kept } = partitionHistory(advanced, now, options.retentionMs ?? DEFAULT_RETENTION_MS);
  const nextHistoryBytes = Buffer.from(`${JSON.stringify(kept, null, 1)}\n`);
  const pointerChanged = !pointerBytes?.equals(indexBytes);

  if (!dryRun) {
    const json = { contentType: 'application/json' };
    if (!versionFiles.indexes.has(index.version)) {
      await store.put(versionKey(prefix, index.version), indexBytes, json);
    }
    const cacheBytes = encodeCache(index.version, cache);
    const storedCache =
      previous?.version === index.version
        ? previousCacheBytes
        : versionFiles.caches.has(index.version)
          ? await read(store, cacheKey(prefix, index.version))
          : undefined;
    if (!storedCache?.equals(cacheBytes)) {
      await store.put(cacheKey(prefix, index.version), cacheBytes, {
        contentType: 'application/octet-stream',
      });
    }
    if (!historyBytes?.equals(nextHistoryBytes)) {
      await store.put(`${prefix}${HISTORY_FILE}`, nextHistoryBytes, json);
    }
    // The pointer LAST: until this write, readers see the previous version, whose objects are all in place.
    if (pointerChanged) await store.put(`${prefix}${POINTER_KEY}`, indexBytes, json);
  }

  progress?.note(dryRun ? 'working out what collection would remove' : 'collecting unreferenced objects');
  const retained = new Set([...kept.versions.map((entry) => entry.version), index.version]);
  const known = new Map([[index.version, index]]);
  if (previous) known.set(previous.version, previous);
  const current = { version: index.version, ids: objectIds };
  const garbage = await findGarbage(
    options,
    prefix,
    retained,
    known,
    current,
    existing,
    versionFiles,
    counts,
  );
  if (!dryRun) {
    // Objects before version files: an interrupted collection leaves nothing a retained version needs.
    await store.delete(garbage.objects);
    await store.delete(garbage.versions);
  }

  return {
    dryRun,
    version: index.version,
    previousVersion: previous?.version ?? null,
    pointerChanged,
    ...counts,
    versionsRemoved: garbage.versions.filter((key) => key.endsWith('.json')).length,
    seconds: (performance.now() - started) / 1000,
  };
}
