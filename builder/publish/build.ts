/**
 * Step 2 of a publish: assemble the next version. Every record is serialised once (or taken over from the
 * current version, reuse.ts); then the version is built incrementally from the current version's manifest
 * when it can be (incremental.ts: only the work an edit causes, nothing listed), else in full. A full build
 * (a first publish, a large edit, a target without a readable manifest, `repair`) lists the target's
 * objects, which costs little next to rendering everything, and heals what an interrupted publish or a
 * damaged target left behind: only what is missing is written, and every orphan is collected.
 *
 * Both ways give one shape, {@link NextVersion}: the objects the target may lack, then the version itself.
 * Nothing is written here; the write step (write.ts) consumes the objects.
 */

import { FORMAT_VERSION, objectKeyFor } from '../../store/layout.js';
import type { IndexEntry, Pointer } from '../../store/pointer.js';
import { parseShard } from '../../store/pointer.js';
import { renderInFull } from '../render/full.js';
import type { RenderedObject } from '../render/jobs.js';
import { smallIndexKeys } from '../render/jobs.js';
import { type PreparedCatalogue, prepareCatalogue } from '../render/prepare.js';
import { buildIncrementally, type IncrementalBuild } from './incremental.js';
import { type Manifest, manifestFor } from './manifest.js';
import { type CurrentVersion, listObjects, readObject, shardReader } from './read.js';
import { reusableModules, reuseKey } from './reuse.js';
import type { IndexChange, PublishOptions, PublishSummary } from './types.js';

/** The next version as a build assembled it. */
export interface NextVersion {
  prepared: PreparedCatalogue;
  mode: PublishSummary['mode'];
  /** Why a publish with a current version was not incremental. */
  fullBuildReason?: string;
  /** The target's objects under `o/` with their sizes, when the build listed them (full builds, repair). */
  listed?: ReadonlyMap<string, number>;
  /** Jobs to encode while the objects are pulled (a full build renders as it writes): for a progress bar. */
  render?: { readonly jobs: number; readonly encoded: number };
  /**
   * The version's objects the target may lack, each once, in a deterministic order; can be consumed once
   * (a full build encodes them as they are pulled, so memory stays bounded). Index shards come last.
   */
  objects(): Iterable<RenderedObject>;
  /** Whether the target holds the object already, so it is not written again. */
  has(objectId: string): boolean;
  /** The version, once {@link objects} has been consumed. */
  finish(): Promise<BuiltVersion>;
}

/** A version ready to be published: its pointer, its manifest, and (with `explain`) what changed. */
export interface BuiltVersion {
  pointer: Pointer;
  pointerBytes: Buffer;
  manifest: Manifest;
  /** Index keys whose entry changes; undefined when unknown (a first publish) or not asked for. */
  changes?: IndexChange[];
}

/**
 * Assemble the next version of the target from `options.snapshot` and the current version.
 * @example
 * const next = await buildNextVersion(options, current);
 * for (const { objectId, bytes } of next.objects()) if (!next.has(objectId)) await put(objectId, bytes);
 * const { pointerBytes, manifest } = await next.finish();
 */
export async function buildNextVersion(
  options: PublishOptions,
  current: CurrentVersion,
): Promise<NextVersion> {
  const { store, progress } = options;
  const prefix = options.prefix ?? '';
  const { pointer: previous, manifest } = current;
  const readShard = shardReader(store, prefix);

  progress?.note('serialising records');
  const reuse = options.builder === undefined ? undefined : reuseKey(options.builder, options.snapshot.tags);
  const reusable =
    reuse && previous && manifest && !options.repair
      ? await reusableModules(previous, manifest, reuse, readShard, (objectId) =>
          readObject(store, objectKeyFor(prefix, objectId)),
        )
      : undefined;
  const prepared = prepareCatalogue(options.snapshot, {
    ...(reuse && { reuse }),
    ...(options.sourceDigests && { sourceDigests: options.sourceDigests }),
    ...(reusable && { reusable }),
  });

  let fullBuildReason: string | undefined;
  if (previous && manifest && !options.repair) {
    progress?.note('working out what the edit changes');
    const outcome = await buildIncrementally(prepared, { pointer: previous, manifest }, readShard);
    if (outcome.ok) return incrementalVersion(prepared, outcome.build, options.explain ?? false);
    fullBuildReason = outcome.reason;
  } else if (previous && !options.repair) {
    fullBuildReason =
      previous.format === FORMAT_VERSION
        ? 'the current version has no readable manifest'
        : `the current version is of object format ${previous.format}; this builder writes format ${FORMAT_VERSION}`;
  }
  progress?.note('listing what the target holds');
  const listed = await listObjects(store, prefix);
  return fullVersion(prepared, listed, {
    mode: options.repair ? 'repair' : 'full',
    ...(fullBuildReason !== undefined && { fullBuildReason }),
    // A dry run has not written the new shards: the diff reads them from memory.
    ...(options.explain && previous && { diffFrom: { pointer: previous, readShard } }),
  });
}

function incrementalVersion(
  prepared: PreparedCatalogue,
  build: IncrementalBuild,
  explain: boolean,
): NextVersion {
  const { pointer, pointerBytes } = build.shards;
  return {
    prepared,
    mode: 'incremental',
    objects: () => build.uploads,
    // The uploads are exactly what the current version does not reference.
    has: () => false,
    finish: async () => ({
      pointer,
      pointerBytes,
      manifest: manifestFor(prepared, pointer, build.entries, build.smallEntries, build.objects),
      ...(explain && { changes: [...build.changes].map(([indexKey, change]) => ({ indexKey, ...change })) }),
    }),
  };
}

function fullVersion(
  prepared: PreparedCatalogue,
  listed: ReadonlyMap<string, number>,
  how: {
    mode: 'full' | 'repair';
    fullBuildReason?: string;
    diffFrom?: { pointer: Pointer; readShard: (shardId: string) => Promise<Buffer> };
  },
): NextVersion {
  const render = renderInFull(prepared);
  return {
    prepared,
    mode: how.mode,
    ...(how.fullBuildReason !== undefined && { fullBuildReason: how.fullBuildReason }),
    listed,
    render,
    *objects() {
      yield* render.objects();
      for (const [objectId, bytes] of render.result().shards) yield { objectId, bytes };
    },
    has: (objectId) => listed.has(objectId),
    async finish() {
      const { entries, objects, shards, pointer, pointerBytes } = render.result();
      const smallEntries = new Map<string, IndexEntry>();
      for (const key of smallIndexKeys(prepared)) smallEntries.set(key, entries.get(key)!);
      const manifest = manifestFor(prepared, pointer, entries.size, smallEntries, objects);
      const { diffFrom } = how;
      if (!diffFrom) return { pointer, pointerBytes, manifest };
      const changes = await diffEntries(
        diffFrom.pointer,
        pointer,
        async (id) => shards.get(id) ?? diffFrom.readShard(id),
      );
      return { pointer, pointerBytes, manifest, changes };
    },
  };
}

/** Every index key whose entry differs between two versions (reads every shard of both: `--verbose` only). */
async function diffEntries(
  previous: Pointer,
  next: Pointer,
  readShard: (shardId: string) => Promise<Buffer>,
): Promise<IndexChange[]> {
  const entriesOf = async (pointer: Pointer) => {
    const entries = new Map<string, IndexEntry>();
    for (const id of new Set(pointer.shards)) {
      const shard = parseShard(await readShard(id), pointer.format);
      for (const [key, entry] of Object.entries(shard ?? {})) entries.set(key, entry);
    }
    return entries;
  };
  const before = await entriesOf(previous);
  const after = await entriesOf(next);
  const same = (a: IndexEntry | undefined, b: IndexEntry | undefined) =>
    JSON.stringify(a) === JSON.stringify(b);
  const changes: IndexChange[] = [];
  for (const [key, entry] of after) {
    const old = before.get(key);
    if (!same(old, entry))
      changes.push({ indexKey: key, ...(old !== undefined && { before: old }), after: entry });
  }
  for (const [key, entry] of before) if (!after.has(key)) changes.push({ indexKey: key, before: entry });
  return changes.sort((a, b) => (a.indexKey < b.indexKey ? -1 : a.indexKey > b.indexKey ? 1 : 0));
}
