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
import type { Counts, PublishOptions } from './types.js';
import type { WrittenVersion } from './write.js';

/**
 * Delete (in a dry run: count) what the versions leaving retention referenced and no retained version does,
 * and what interrupted publishes uploaded in vain (`abandoned`, from their journals: leftovers.ts), then
 * those journals. Objects before version files: an interrupted collection leaves nothing a retained version
 * needs, and the expired manifests and the journals still name what is left to collect.
 * @returns how many versions were collected, and how many objects of interrupted publishes
 */
export async function collectGarbage(
  next: NextVersion,
  version: BuiltVersion,
  written: WrittenVersion,
  current: CurrentVersion,
  options: PublishOptions,
  counts: Counts,
  collect: { lock?: PublishLock | undefined; abandoned?: AbandonedUploads | undefined } = {},
): Promise<{ versionsRemoved: number; abandoned: { objects: number; bytes: number } }> {
  const { progress } = options;
  const { lock, abandoned } = collect;
  progress?.note(
    options.dryRun ? 'working out what collection would remove' : 'collecting unreferenced objects',
  );
  const retained = new Set([...written.kept.versions.map((entry) => entry.version), version.pointer.version]);
  const known = new Map<string, Manifest>([[version.pointer.version, version.manifest]]);
  if (current.pointer && current.manifest) known.set(current.pointer.version, current.manifest);
  const garbage = await findGarbage(options, retained, known, current, next.listed, counts, abandoned);
  if (!options.dryRun) {
    // Each batch only while this publish surely holds the target: no other one can need what it deletes.
    for (const keys of [garbage.objects, garbage.versionFiles, garbage.journals]) {
      for (let i = 0; i < keys.length; i += DELETE_BATCH) {
        await lock?.ensure();
        await options.store.delete(keys.slice(i, i + DELETE_BATCH));
      }
    }
  }
  return { versionsRemoved: garbage.versionsRemoved, abandoned: garbage.abandoned };
}

/** Keys per deletion batch (S3 deletes up to 1,000 keys a request). */
const DELETE_BATCH = 1000;

/**
 * What to delete: objects the versions leaving retention referenced and no retained version does (from
 * their manifests), or with `listed` every listed object no retained version references, and the objects
 * of `abandoned` no retained version references; then the version files of the versions not retained, and
 * the journals of `abandoned`.
 */
async function findGarbage(
  options: PublishOptions,
  retained: ReadonlySet<string>,
  known: ReadonlyMap<string, Manifest>,
  current: CurrentVersion,
  listed: ReadonlyMap<string, number> | undefined,
  counts: Counts,
  abandoned: AbandonedUploads | undefined,
): Promise<{
  objects: string[];
  versionFiles: string[];
  journals: string[];
  versionsRemoved: number;
  abandoned: { objects: number; bytes: number };
}> {
  const prefix = options.prefix ?? '';
  const { versionFiles } = current;
  const manifestOf = async (version: string) =>
    known.get(version) ??
    (versionFiles.get(version)?.has('manifest')
      ? decodeManifest(await readObject(options.store, manifestKey(prefix, version)), version)
      : undefined);
  const expired = [...versionFiles.keys()].filter((version) => !retained.has(version));
  const nothing = {
    objects: [],
    versionFiles: [],
    journals: [],
    versionsRemoved: 0,
    abandoned: { objects: 0, bytes: 0 },
  };
  if (expired.length === 0 && !listed && !abandoned) return nothing;

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
  const collected = { objects: 0, bytes: 0 };
  for (const [objectId, size] of abandoned?.objects ?? []) {
    if (sizes.has(objectId) || referenced(objectId)) continue;
    sizes.set(objectId, size);
    collected.objects++;
    collected.bytes += size;
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
  return {
    objects,
    versionFiles: files,
    journals: abandoned?.journals ?? [],
    versionsRemoved: expired.length,
    abandoned: collected,
  };
}
