/**
 * Step 4 of a publish: collect what no retained version needs. Superseded versions stay readable for the
 * retention period (open cursors pin them); once a version leaves retention, the objects its manifest names
 * that no retained version references are deleted, then its version files. A build that listed the target
 * (a full build, repair) considers every listed object, orphans of abandoned publishes included.
 *
 * Collecting too little is safe, too much is not: when a retained version's manifest cannot be read, no
 * object is deleted and expired files stay for later.
 */
import { objectKeyFor, VERSIONS_DIR } from '../../store/layout.js';
import type { ObjectTable } from '../render/shards.js';
import type { BuiltVersion, NextVersion } from './build.js';
import { decodeManifest, type Manifest, manifestKey } from './manifest.js';
import { type CurrentVersion, readObject } from './read.js';
import type { Counts, PublishOptions } from './types.js';
import type { WrittenVersion } from './write.js';

/**
 * Delete (in a dry run: count) what the versions leaving retention referenced and no retained version does.
 * Objects before version files: an interrupted collection leaves nothing a retained version needs, and the
 * expired manifests still name what is left to collect.
 * @returns how many versions were collected
 */
export async function collectGarbage(
  next: NextVersion,
  version: BuiltVersion,
  written: WrittenVersion,
  current: CurrentVersion,
  options: PublishOptions,
  counts: Counts,
): Promise<number> {
  const { progress } = options;
  progress?.note(
    options.dryRun ? 'working out what collection would remove' : 'collecting unreferenced objects',
  );
  const retained = new Set([...written.kept.versions.map((entry) => entry.version), version.pointer.version]);
  const known = new Map<string, Manifest>([[version.pointer.version, version.manifest]]);
  if (current.pointer && current.manifest) known.set(current.pointer.version, current.manifest);
  const garbage = await findGarbage(options, retained, known, current.versionFiles, next.listed, counts);
  if (!options.dryRun) {
    await options.store.delete(garbage.objects);
    await options.store.delete(garbage.versionFiles);
  }
  return garbage.versionsRemoved;
}

/**
 * What to delete: objects the versions leaving retention referenced and no retained version does (from
 * their manifests), or with `listed` every listed object no retained version references; then the version
 * files of the versions not retained.
 */
async function findGarbage(
  options: PublishOptions,
  retained: ReadonlySet<string>,
  known: ReadonlyMap<string, Manifest>,
  versionFiles: ReadonlyMap<string, ReadonlySet<string>>,
  listed: ReadonlyMap<string, number> | undefined,
  counts: Counts,
): Promise<{ objects: string[]; versionFiles: string[]; versionsRemoved: number }> {
  const prefix = options.prefix ?? '';
  const manifestOf = async (version: string) =>
    known.get(version) ??
    (versionFiles.get(version)?.has('manifest')
      ? decodeManifest(await readObject(options.store, manifestKey(prefix, version)), version)
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
