/**
 * Publishing (DESIGN.md builder invariants 5 and 7), one code path for every WritableObjectStore:
 * read the current pointer and its manifest → build (incrementally from the manifest when it can, else in
 * full) and upload only objects the previous version does not reference → shards → version files and log
 * → pointer LAST → collect what expired versions referenced and no retained version does, from their
 * manifests. An incremental publish (a small edit) lists nothing; a full build (a first publish, a large
 * edit, a target without a readable manifest, and `repair`) lists the target's objects, which costs little
 * next to rendering everything, and heals what an interrupted publish or a damaged target left behind.
 *
 * A publish killed at any point leaves the previous pointer and all of its objects in place; running it
 * again completes it.
 */

import {
  OBJECT_ID_PATTERN,
  OBJECTS_DIR,
  objectKeyFor,
  POINTER_KEY,
  VERSIONS_DIR,
} from '../../store/layout.js';
import type { WritableObjectStore } from '../../store/objects/interface.js';
import { type IndexEntry, type Pointer, parsePointer, parseShard } from '../../store/pointer.js';
import {
  type PreparedCatalogue,
  planCatalogue,
  prepareCatalogue,
  type RenderedObject,
  smallKeys,
} from '../render/render.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import { advanceHistory, HISTORY_FILE, parseHistory, partitionHistory } from './history.js';
import { buildIncrementally } from './incremental.js';
import { decodeManifest, encodeManifest, type Manifest, manifestKey, moduleRows } from './manifest.js';
import { TaskPool } from './pool.js';
import { reusableModules, reuseKey } from './reuse.js';
import type { ObjectTable } from './shards.js';

export const DEFAULT_RETENTION_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_CONCURRENCY = 16;

/** Progress of long phases; the CLI shows a bar on a terminal. */
export interface PublishProgress {
  /** A step without a count (reading, planning, collecting). */
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
  /**
   * The builder's fingerprint (builder/publish/reuse.ts): modules whose source is unchanged since a current version
   * published by the same builder are taken over rather than serialised. Without it nothing is reused.
   */
  builder?: string;
  /** The source digests of the snapshot's modules, when loadSnapshot computed them already. */
  sourceDigests?: string[];
  /** The current version as {@link readCurrentVersion} read it just before (the CLI reads it to validate less). */
  current?: CurrentVersion;
  /** How long a superseded version stays readable (open cursors pin it). Default 24 h. */
  retentionMs?: number;
  /** Uploads and deletions in flight. Default 16. */
  concurrency?: number;
  /** Compute and report what would change; write nothing. */
  dryRun?: boolean;
  /**
   * List the target and heal it: upload every object of this version it lacks, and collect every object
   * under `o/` that no retained version references (orphans of abandoned publishes included).
   */
  repair?: boolean;
  /** Report every index key whose entry changes, and every object to upload (`--verbose`). */
  explain?: boolean;
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
  /** How the version was built: from the previous manifest, in full, or in full after listing (repair). */
  mode: 'incremental' | 'full' | 'repair';
  /** Why a publish with a previous version was not incremental. */
  fullBuildReason?: string;
  objects: { total: number; added: number; unchanged: number; removed: number };
  bytes: { total: number; added: number; removed: number };
  versionsRemoved: number;
  /** Modules taken over from the current version rather than serialised again (builder/publish/reuse.ts). */
  modulesReused: number;
  seconds: number;
  /** With `explain`: index keys whose entry changes (undefined when unknown, e.g. the first publish). */
  changes?: { key: string; before?: IndexEntry; after?: IndexEntry }[];
  /** With `explain`: objects uploaded (or, in a dry run, that would be). */
  uploads?: { objectId: string; size: number }[];
}

const VERSION_FILE = new RegExp(`^${VERSIONS_DIR}([A-Za-z0-9_-]{22})\\.(json|manifest|cache)$`);
const versionKey = (prefix: string, version: string) => `${prefix}${VERSIONS_DIR}${version}.json`;

/** Version files by version (`json`: the pointer copy, `manifest`, `cache`: a format-1 build cache). */
async function listVersionFiles(
  store: WritableObjectStore,
  prefix: string,
): Promise<Map<string, Set<string>>> {
  const files = new Map<string, Set<string>>();
  for await (const { key } of store.list(`${prefix}${VERSIONS_DIR}`)) {
    const match = VERSION_FILE.exec(key.slice(prefix.length));
    if (!match) continue;
    const kinds = files.get(match[1]!) ?? new Set<string>();
    kinds.add(match[2]!);
    files.set(match[1]!, kinds);
  }
  return files;
}

/** Every content-addressed object under `o/` with its size (a full listing: first publish and repair). */
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

async function read(store: WritableObjectStore, key: string): Promise<Buffer | undefined> {
  const result = await store.get(key);
  return result.status === 'ok' ? result.body : undefined;
}

/** What a build hands to the writing phase. */
interface Built {
  pointer: Pointer;
  pointerBytes: Buffer;
  manifest: Manifest;
  mode: PublishSummary['mode'];
  fullBuildReason?: string;
  changes?: PublishSummary['changes'];
}

interface Counts {
  objects: PublishSummary['objects'];
  bytes: PublishSummary['bytes'];
  uploads: { objectId: string; size: number }[] | undefined;
}

/** Upload what `exists` does not know, `concurrency` at a time; counts every object. */
async function uploadAll(
  options: PublishOptions,
  prefix: string,
  objects: Iterable<RenderedObject>,
  exists: (objectId: string) => boolean,
  counts: Counts,
  onEach?: () => void,
): Promise<void> {
  const pool = new TaskPool(options.concurrency ?? DEFAULT_CONCURRENCY);
  for (const { objectId, bytes } of objects) {
    if (exists(objectId)) {
      counts.objects.unchanged++;
    } else {
      counts.objects.added++;
      counts.bytes.added += bytes.byteLength;
      counts.uploads?.push({ objectId, size: bytes.byteLength });
      if (!options.dryRun) await pool.run(() => options.store.put(objectKeyFor(prefix, objectId), bytes));
    }
    onEach?.();
  }
  await pool.drain();
}

function manifestOf(
  prepared: PreparedCatalogue,
  pointer: Pointer,
  entries: number,
  small: Map<string, IndexEntry>,
  objects: ObjectTable,
): Manifest {
  const modules = new Map(moduleRows(prepared).map((row) => [row[0], row]));
  const { reuse } = prepared;
  const makers = new Map(prepared.makers.map(({ id, digest }) => [id, digest]));
  return {
    version: pointer.version,
    shardCount: pointer.shards.length,
    entries,
    modules,
    small,
    objects,
    reuse,
    makers,
  };
}

/** A full build: encode every job, upload what `exists` does not know. */
async function buildInFull(
  options: PublishOptions,
  prefix: string,
  prepared: PreparedCatalogue,
  exists: (objectId: string) => boolean,
  counts: Counts,
): Promise<Omit<Built, 'mode'> & { shards: Map<string, Buffer> }> {
  const { progress } = options;
  const plan = planCatalogue(prepared);
  progress?.start(options.dryRun ? 'rendering' : 'rendering and uploading', plan.jobs);
  try {
    await uploadAll(options, prefix, plan.objects(), exists, counts, () => progress?.update(plan.encoded));
  } finally {
    progress?.stop();
  }
  const result = plan.result();
  const shards = [...result.shards].map(([objectId, bytes]) => ({ objectId, bytes }));
  await uploadAll(options, prefix, shards, exists, counts);
  const small = new Map<string, IndexEntry>();
  for (const key of smallKeys(prepared)) small.set(key, result.entries.get(key)!);
  return {
    pointer: result.pointer,
    pointerBytes: result.pointerBytes,
    shards: result.shards,
    manifest: manifestOf(prepared, result.pointer, result.entries.size, small, result.objects),
  };
}

/** The version a publish replaces: the pointer as read, its version files, and its manifest. */
export interface CurrentVersion {
  pointerBytes: Buffer | undefined;
  /** Undefined when there is no pointer, or an unreadable one. */
  pointer: Pointer | undefined;
  versionFiles: Map<string, Set<string>>;
  manifest: Manifest | undefined;
}

/**
 * Read the current version of the target: pointer, version files, manifest.
 * @example const { manifest } = await readCurrentVersion(store, 'catalogue/');
 */
export async function readCurrentVersion(store: WritableObjectStore, prefix = ''): Promise<CurrentVersion> {
  const pointerBytes = await read(store, `${prefix}${POINTER_KEY}`);
  const pointer = pointerBytes && parsePointer(pointerBytes);
  const versionFiles = await listVersionFiles(store, prefix);
  const manifest =
    pointer && versionFiles.get(pointer.version)?.has('manifest')
      ? decodeManifest(await read(store, manifestKey(prefix, pointer.version)), pointer.version)
      : undefined;
  return { pointerBytes, pointer: pointer || undefined, versionFiles, manifest };
}

/**
 * Publish `snapshot` to `store` under `prefix`, or with `dryRun` report what that would change.
 * Store faults propagate (as DependencyError); nothing written before a fault is ever visible to readers.
 * @example
 * const summary = await publishCatalogue({ store: new DirectoryObjectStore('/srv/catalogue'), snapshot });
 * console.log(summary.mode, summary.objects.added, summary.bytes.added);
 */
export async function publishCatalogue(options: PublishOptions): Promise<PublishSummary> {
  const started = performance.now();
  const { store, progress } = options;
  const prefix = options.prefix ?? '';
  const dryRun = options.dryRun ?? false;
  const counts: Counts = {
    objects: { total: 0, added: 0, unchanged: 0, removed: 0 },
    bytes: { total: 0, added: 0, removed: 0 },
    uploads: options.explain ? [] : undefined,
  };

  progress?.note('reading the current version');
  const current = options.current ?? (await readCurrentVersion(store, prefix));
  const { pointerBytes, pointer: previous, versionFiles, manifest: previousManifest } = current;
  if (pointerBytes && !previous) {
    options.warn?.(`the pointer ${prefix}${POINTER_KEY} is unreadable or of an older format; replacing it`);
  }
  // Shards are immutable: one read each per publish (taking modules over and the incremental build may both
  // need the shard of the unfiltered id list).
  const shardReads = new Map<string, Promise<Buffer>>();
  const readShard = (shardId: string) => {
    let reading = shardReads.get(shardId);
    if (!reading) {
      reading = read(store, objectKeyFor(prefix, shardId)).then((bytes) => {
        if (!bytes) throw new Error(`index shard ${shardId} is missing from the target`);
        return bytes;
      });
      shardReads.set(shardId, reading);
    }
    return reading;
  };
  progress?.note('serialising records');
  const reuse = options.builder === undefined ? undefined : reuseKey(options.builder, options.snapshot.tags);
  const reusable =
    reuse && previous && previousManifest && !options.repair
      ? await reusableModules(previous, previousManifest, reuse, readShard, (objectId) =>
          read(store, objectKeyFor(prefix, objectId)),
        )
      : undefined;
  const prepared = prepareCatalogue(options.snapshot, {
    ...(reuse && { reuse }),
    ...(options.sourceDigests && { sourceDigests: options.sourceDigests }),
    ...(reusable && { reusable }),
  });

  let built: Built;
  let listed: Map<string, number> | undefined;
  let fullBuildReason: string | undefined;
  if (previous && previousManifest && !options.repair) {
    progress?.note('working out what the edit changes');
    const outcome = await buildIncrementally(
      prepared,
      { pointer: previous, manifest: previousManifest },
      readShard,
    );
    if (outcome.ok) {
      const { build } = outcome;
      await uploadAll({ ...options, dryRun }, prefix, build.uploads, () => false, counts);
      counts.objects.unchanged += build.objects.size - build.uploads.length;
      const changes = [...build.changes].map(([key, change]) => ({ key, ...change }));
      built = {
        pointer: build.shards.pointer,
        pointerBytes: build.shards.pointerBytes,
        manifest: manifestOf(prepared, build.shards.pointer, build.entries, build.small, build.objects),
        mode: 'incremental',
        ...(options.explain && { changes }),
      };
    } else {
      fullBuildReason = outcome.reason;
    }
  } else if (previous && !options.repair) {
    fullBuildReason = 'the current version has no readable manifest';
  }
  built ??= await (async () => {
    // A full build lists what the target holds (a first publish, a large edit, an older format, repair):
    // its cost is in proportion to the work anyway, and an interrupted or damaged target then heals:
    // only what is missing is uploaded, and every orphan is collected.
    progress?.note('listing what the target holds');
    const found = await listObjects(store, prefix);
    listed = found;
    const full = await buildInFull({ ...options, dryRun }, prefix, prepared, (id) => found.has(id), counts);
    const mode: Built['mode'] = options.repair ? 'repair' : 'full';
    let changes: PublishSummary['changes'];
    // A dry run has not written the new shards: read them from memory.
    if (options.explain && previous) {
      changes = await diffEntries(previous, full.pointer, async (id) => full.shards.get(id) ?? readShard(id));
    }
    const { shards: _, ...rest } = full;
    return { ...rest, mode, ...(fullBuildReason && { fullBuildReason }), ...(changes && { changes }) };
  })();
  counts.objects.total = built.manifest.objects.size;
  for (const { size } of built.manifest.objects.values()) counts.bytes.total += size;

  const { pointer } = built;
  const historyBytes = await read(store, `${prefix}${HISTORY_FILE}`);
  const now = (options.now ?? (() => new Date()))();
  const advanced = advanceHistory(
    parseHistory(historyBytes),
    previous?.version ?? null,
    pointer.version,
    now,
  );
  const { kept } = partitionHistory(advanced, now, options.retentionMs ?? DEFAULT_RETENTION_MS);
  const nextHistoryBytes = Buffer.from(`${JSON.stringify(kept, null, 1)}\n`);
  const pointerChanged = !pointerBytes?.equals(built.pointerBytes);

  if (!dryRun) {
    const json = { contentType: 'application/json' };
    const files = versionFiles.get(pointer.version);
    if (!files?.has('json')) await store.put(versionKey(prefix, pointer.version), built.pointerBytes, json);
    const manifestBytes = encodeManifest(built.manifest);
    const stored = files?.has('manifest')
      ? await read(store, manifestKey(prefix, pointer.version))
      : undefined;
    if (!stored?.equals(manifestBytes)) {
      await store.put(manifestKey(prefix, pointer.version), manifestBytes, {
        contentType: 'application/octet-stream',
      });
    }
    if (!historyBytes?.equals(nextHistoryBytes)) {
      await store.put(`${prefix}${HISTORY_FILE}`, nextHistoryBytes, json);
    }
    // The pointer LAST: until this write, readers see the previous version, whose objects are all in place.
    if (pointerChanged) await store.put(`${prefix}${POINTER_KEY}`, built.pointerBytes, json);
  }

  progress?.note(dryRun ? 'working out what collection would remove' : 'collecting unreferenced objects');
  const retained = new Set([...kept.versions.map((entry) => entry.version), pointer.version]);
  const known = new Map<string, Manifest>([[pointer.version, built.manifest]]);
  if (previous && previousManifest) known.set(previous.version, previousManifest);
  const garbage = await findGarbage(options, prefix, retained, known, versionFiles, listed, counts);
  if (!dryRun) {
    // Objects before version files: an interrupted collection leaves nothing a retained version needs,
    // and the expired manifests still name what is left to collect.
    await store.delete(garbage.objects);
    await store.delete(garbage.versionFiles);
  }

  return {
    dryRun,
    version: pointer.version,
    previousVersion: previous?.version ?? null,
    pointerChanged,
    mode: built.mode,
    ...(built.fullBuildReason && { fullBuildReason: built.fullBuildReason }),
    objects: counts.objects,
    bytes: counts.bytes,
    versionsRemoved: garbage.versionsRemoved,
    modulesReused: prepared.reused,
    seconds: (performance.now() - started) / 1000,
    ...(built.changes && { changes: built.changes }),
    ...(counts.uploads && { uploads: counts.uploads }),
  };
}

/** Every index key whose entry differs between two versions (reads every shard of both: `--verbose` only). */
async function diffEntries(
  previous: Pointer,
  next: Pointer,
  readShard: (shardId: string) => Promise<Buffer>,
): Promise<NonNullable<PublishSummary['changes']>> {
  const entriesOf = async (pointer: Pointer) => {
    const entries = new Map<string, IndexEntry>();
    for (const id of new Set(pointer.shards)) {
      const shard = parseShard(await readShard(id));
      for (const [key, entry] of Object.entries(shard ?? {})) entries.set(key, entry);
    }
    return entries;
  };
  const before = await entriesOf(previous);
  const after = await entriesOf(next);
  const same = (a: IndexEntry | undefined, b: IndexEntry | undefined) =>
    JSON.stringify(a) === JSON.stringify(b);
  const changes: NonNullable<PublishSummary['changes']> = [];
  for (const [key, entry] of after) {
    const old = before.get(key);
    if (!same(old, entry)) changes.push({ key, ...(old !== undefined && { before: old }), after: entry });
  }
  for (const [key, entry] of before) if (!after.has(key)) changes.push({ key, before: entry });
  return changes.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * What to delete: objects the versions leaving retention referenced and no retained version does (from
 * their manifests), or with `listed` (repair) every listed object no retained version references; then the
 * version files of the versions not retained. Collecting too little is safe, too much is not: when a
 * retained version's manifest cannot be read, no object is deleted and expired files stay for later.
 */
async function findGarbage(
  options: PublishOptions,
  prefix: string,
  retained: ReadonlySet<string>,
  known: ReadonlyMap<string, Manifest>,
  versionFiles: ReadonlyMap<string, ReadonlySet<string>>,
  listed: ReadonlyMap<string, number> | undefined,
  counts: Counts,
): Promise<{ objects: string[]; versionFiles: string[]; versionsRemoved: number }> {
  const manifestOf = async (version: string) =>
    known.get(version) ??
    (versionFiles.get(version)?.has('manifest')
      ? decodeManifest(await read(options.store, manifestKey(prefix, version)), version)
      : undefined);
  const expired = [...versionFiles.keys()].filter((version) => !retained.has(version));
  const nothing = { objects: [], versionFiles: [], versionsRemoved: 0 };
  if (expired.length === 0 && !listed) return nothing;

  const retainedTables: ObjectTable[] = [];
  for (const version of retained) {
    const manifest = await manifestOf(version);
    if (!manifest) {
      options.warn?.(
        `retained version ${version} has no readable manifest; nothing is collected until it expires`,
      );
      return nothing;
    }
    retainedTables.push(manifest.objects);
  }
  const referenced = (objectId: string) => retainedTables.some((table) => table.has(objectId));

  const sizes = new Map<string, number>();
  if (listed) {
    for (const [objectId, size] of listed) sizes.set(objectId, size);
  } else {
    let unknown = 0;
    for (const version of expired) {
      const manifest = await manifestOf(version);
      if (!manifest) {
        unknown++;
        continue;
      }
      for (const [objectId, { size }] of manifest.objects) sizes.set(objectId, size);
    }
    if (unknown > 0) {
      options.warn?.(
        `${unknown} expired version${unknown === 1 ? ' has' : 's have'} no manifest (an older format); ` +
          'their objects are left in place: `npm run catalogue -- repair` collects them',
      );
    }
  }
  const objects: string[] = [];
  for (const [objectId, size] of sizes) {
    if (referenced(objectId)) continue;
    objects.push(objectKeyFor(prefix, objectId));
    counts.objects.removed++;
    counts.bytes.removed += size;
  }
  const files = expired.flatMap((version) =>
    [...versionFiles.get(version)!].map((kind) => `${prefix}${VERSIONS_DIR}${version}.${kind}`),
  );
  return { objects, versionFiles: files, versionsRemoved: expired.length };
}
