/**
 * Step 4 of a publish: collect what no retained version needs. Superseded versions stay readable for the
 * retention period (open cursors pin them); once a version leaves retention, the objects its manifest names
 * that no retained version references are deleted, then its version files. A build that listed the target
 * (a full build, repair) considers every listed object, orphans of abandoned publishes included; any build
 * considers the objects interrupted publishes recorded in their journals (leftovers.ts).
 *
 * Collecting too little is safe, too much is not: when a retained version's manifest cannot be read, no
 * object is deleted and expired files stay for later.
 */
import { objectKeyFor, VERSIONS_DIR } from '../../store/layout.js';
import type { ObjectTable } from '../render/shards.js';
import type { BuiltVersion, NextVersion } from './build.js';
import type { AbandonedUploads } from './leftovers.js';
import type { PublishLock } from './lock.js';
import { decodeManifest, type Manifest, manifestKey } from './manifest.js';
import { type CurrentVersion, readObject } from './read.js';
import type { PublishOptions } from './types.js';
import type { WrittenVersion } from './write.js';

/** The run of one publish, as collection needs it: its store, prefix, warnings and progress, dry run or not. */
export type CollectionRun = Pick<PublishOptions, 'store' | 'prefix' | 'warn' | 'progress' | 'dryRun'>;

/** What collection is planned from. */
export interface CollectionInput {
  /** The versions kept: the new one and those still within retention (write.ts's publication log). */
  retained: ReadonlySet<string>;
  /** Manifests already in hand, by version (the new one, the current one): not read again. */
  known: ReadonlyMap<string, Manifest>;
  /** The version files the target holds, by version (read.ts). */
  versionFiles: CurrentVersion['versionFiles'];
  /** Every object of the target with its size, when the build listed it (a full build, repair). */
  listed?: ReadonlyMap<string, number> | undefined;
  /** What interrupted publishes uploaded, from their journals (leftovers.ts). */
  abandoned?: AbandonedUploads | undefined;
}

/** What collection deletes, in this order, and its tallies. */
export interface CollectionPlan {
  objects: string[];
  versionFiles: string[];
  journals: string[];
  /** The objects and bytes deleted. */
  removed: { objects: number; bytes: number };
  versionsRemoved: number;
  /** Of `removed`, what interrupted publishes uploaded in vain. */
  abandoned: { objects: number; bytes: number };
}

/** What collection did (in a dry run: would do). */
export type Collected = Pick<CollectionPlan, 'removed' | 'versionsRemoved' | 'abandoned'>;

/** The steps of the publish before collection, as it needs them. */
export interface CollectionSteps {
  next: NextVersion;
  version: BuiltVersion;
  written: WrittenVersion;
  current: CurrentVersion;
  lock?: PublishLock | undefined;
  abandoned?: AbandonedUploads | undefined;
}

/** Keys per deletion batch (S3 deletes up to 1,000 keys a request). */
const DELETE_BATCH = 1000;

/**
 * Delete (in a dry run: count) what the versions leaving retention referenced and no retained version does,
 * and what interrupted publishes uploaded in vain (`abandoned`, from their journals: leftovers.ts), then
 * those journals. Objects before version files: an interrupted collection leaves nothing a retained version
 * needs, and the expired manifests and the journals still name what is left to collect.
 * @returns the objects and bytes removed, how many versions were collected, and how many objects of
 *   interrupted publishes
 */
export async function collectGarbage(run: CollectionRun, steps: CollectionSteps): Promise<Collected> {
  const { next, version, written, current, lock } = steps;
  run.progress?.note(
    run.dryRun ? 'working out what collection would remove' : 'collecting unreferenced objects',
  );
  const retained = new Set([...written.kept.versions.map((entry) => entry.version), version.pointer.version]);
  const known = new Map<string, Manifest>([[version.pointer.version, version.manifest]]);
  if (current.pointer && current.manifest) known.set(current.pointer.version, current.manifest);
  const plan = await planCollection(run, {
    retained,
    known,
    versionFiles: current.versionFiles,
    listed: next.listed,
    abandoned: steps.abandoned,
  });
  if (!run.dryRun) {
    // Each batch only while this publish surely holds the target: no other one can need what it deletes.
    for (const keys of [plan.objects, plan.versionFiles, plan.journals]) {
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        await lock?.ensure();
        await run.store.delete(keys.slice(i, i + DELETE_BATCH));
      }
    }
  }
  return { removed: plan.removed, versionsRemoved: plan.versionsRemoved, abandoned: plan.abandoned };
}

/** A plan that deletes nothing. */
const NOTHING: CollectionPlan = {
  objects: [],
  versionFiles: [],
  journals: [],
  removed: { objects: 0, bytes: 0 },
  versionsRemoved: 0,
  abandoned: { objects: 0, bytes: 0 },
};

/**
 * What to delete (nothing is deleted here): objects the versions leaving retention referenced and no retained
 * version does (from their manifests), or with `listed` every listed object no retained version references,
 * and the objects of `abandoned` no retained version references; then the version files of the versions not
 * retained, and the journals of `abandoned`. Nothing at all when a retained version's manifest is unreadable.
 */
export async function planCollection(run: CollectionRun, input: CollectionInput): Promise<CollectionPlan> {
  const prefix = run.prefix ?? '';
  const expired = [...input.versionFiles.keys()].filter((version) => !input.retained.has(version));
  if (expired.length === 0 && !input.listed && !input.abandoned) return NOTHING;
  const manifestOf = manifestReader(run, input);
  const referenced = await retainedReferences(run, input.retained, manifestOf);
  if (!referenced) return NOTHING;
  const sizes = input.listed ? new Map(input.listed) : await expiredObjects(run, expired, manifestOf);
  const abandoned = addAbandoned(sizes, input.abandoned, referenced);
  const objects: string[] = [];
  const removed = { objects: 0, bytes: 0 };
  for (const [objectId, size] of sizes) {
    if (referenced(objectId)) continue;
    objects.push(objectKeyFor(prefix, objectId));
    removed.objects++;
    removed.bytes += size;
  }
  const versionFiles = expired.flatMap((version) =>
    [...input.versionFiles.get(version)!].map((kind) => `${prefix}${VERSIONS_DIR}${version}.${kind}`),
  );
  const journals = input.abandoned?.journals ?? [];
  return { objects, versionFiles, journals, removed, versionsRemoved: expired.length, abandoned };
}

type ManifestOf = (version: string) => Promise<Manifest | undefined>;

/** A version's manifest: in hand, or read from the target when it has one (undefined when unreadable). */
function manifestReader(run: CollectionRun, input: CollectionInput): ManifestOf {
  const prefix = run.prefix ?? '';
  return async (version) =>
    input.known.get(version) ??
    (input.versionFiles.get(version)?.has('manifest')
      ? decodeManifest(await readObject(run.store, manifestKey(prefix, version)), version)
      : undefined);
}

/**
 * Whether an object is referenced by a retained version; undefined (with a warning) when a retained version's
 * manifest cannot be read, since then nothing can be proven unreferenced.
 */
async function retainedReferences(
  run: CollectionRun,
  retained: ReadonlySet<string>,
  manifestOf: ManifestOf,
): Promise<((objectId: string) => boolean) | undefined> {
  const tables: ObjectTable[] = [];
  for (const version of retained) {
    const manifest = await manifestOf(version);
    if (!manifest) {
      run.warn?.(
        `retained version ${version} has no readable manifest; nothing is collected until it expires`,
      );
      return undefined;
    }
    tables.push(manifest.objects);
  }
  return (objectId) => tables.some((table) => table.has(objectId));
}

/** The objects the expired versions' manifests name, with their sizes; a version without one is left alone. */
async function expiredObjects(
  run: CollectionRun,
  expired: readonly string[],
  manifestOf: ManifestOf,
): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
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
    run.warn?.(
      `${unknown} expired version${unknown === 1 ? ' has' : 's have'} no manifest (an older format); ` +
        'their objects are left in place: `npm run catalogue -- repair` collects them',
    );
  }
  return sizes;
}

/** Add to `sizes` what interrupted publishes uploaded that nothing else names or retains; returns their tally. */
function addAbandoned(
  sizes: Map<string, number>,
  abandoned: AbandonedUploads | undefined,
  referenced: (objectId: string) => boolean,
): { objects: number; bytes: number } {
  const collected = { objects: 0, bytes: 0 };
  for (const [objectId, size] of abandoned?.objects ?? []) {
    if (sizes.has(objectId) || referenced(objectId)) continue;
    sizes.set(objectId, size);
    collected.objects++;
    collected.bytes += size;
  }
  return collected;
}
