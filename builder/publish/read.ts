/**
 * Step 1 of a publish: read the version it replaces — the pointer, the version files, and the manifest that
 * says what the version references — without listing the target's objects. And the reads the other steps
 * share: objects, shards (once each), and the full listing a full build or a repair makes.
 */

import {
  FORMAT_VERSION,
  OBJECT_ID_PATTERN,
  OBJECTS_DIR,
  objectKeyFor,
  POINTER_KEY,
  VERSIONS_DIR,
} from '../../store/layout.js';
import type { WritableObjectStore } from '../../store/objects/interface.js';
import { type Pointer, parsePointer } from '../../store/pointer.js';
import { decodeManifest, type Manifest, manifestKey } from './manifest.js';

/** The version a publish replaces: the pointer as read, its version files, and its manifest. */
export interface CurrentVersion {
  pointerBytes: Buffer | undefined;
  /** The pointer object's ETag as read: the pointer is replaced only while it is still this one. */
  pointerEtag: string | undefined;
  /** Undefined when there is no pointer, or an unreadable one (it may be of an older readable format). */
  pointer: Pointer | undefined;
  /** Version files by version (`json`: the pointer copy, `manifest`, `cache`: a format-1 build cache). */
  versionFiles: Map<string, Set<string>>;
  /** The current version's manifest, when it is of the format this builder writes (else it is rebuilt). */
  manifest: Manifest | undefined;
  /** Keys of upload journals (leftovers.ts) of publishes that did not finish, with the owner of each. */
  journals: { key: string; owner: string }[];
}

const VERSION_FILE = new RegExp(`^${VERSIONS_DIR}([A-Za-z0-9_-]{22})\\.(json|manifest|cache)$`);
const JOURNAL_FILE = new RegExp(`^${VERSIONS_DIR}pending-([0-9a-f-]{36})-\\d+\\.json$`);

/** The key of a version's copy of its pointer. */
export const versionKey = (prefix: string, version: string) => `${prefix}${VERSIONS_DIR}${version}.json`;

/** The bytes of the object at `objectKey`, or undefined when there is none. */
export async function readObject(store: WritableObjectStore, objectKey: string): Promise<Buffer | undefined> {
  const result = await store.get(objectKey);
  return result.ok ? result.body : undefined;
}

/**
 * Read the current version of the target: pointer, version files, manifest.
 * @example const { manifest } = await readCurrentVersion(store, 'catalogue/');
 */
export async function readCurrentVersion(store: WritableObjectStore, prefix = ''): Promise<CurrentVersion> {
  const read = await store.get(`${prefix}${POINTER_KEY}`);
  const pointerBytes = read.ok ? read.body : undefined;
  const pointer = pointerBytes && parsePointer(pointerBytes);
  const { versionFiles, journals } = await listVersionFiles(store, prefix);
  const manifest =
    pointer?.format === FORMAT_VERSION && versionFiles.get(pointer.version)?.has('manifest')
      ? decodeManifest(await readObject(store, manifestKey(prefix, pointer.version)), pointer.version)
      : undefined;
  return {
    pointerBytes,
    pointerEtag: read.ok ? read.etag : undefined,
    pointer: pointer || undefined,
    versionFiles,
    manifest,
    journals,
  };
}

async function listVersionFiles(
  store: WritableObjectStore,
  prefix: string,
): Promise<Pick<CurrentVersion, 'versionFiles' | 'journals'>> {
  const versionFiles = new Map<string, Set<string>>();
  const journals: CurrentVersion['journals'] = [];
  for await (const { key } of store.list(`${prefix}${VERSIONS_DIR}`)) {
    const name = key.slice(prefix.length);
    const journal = JOURNAL_FILE.exec(name);
    if (journal) journals.push({ key, owner: journal[1]! });
    const match = VERSION_FILE.exec(name);
    if (!match) continue;
    const kinds = versionFiles.get(match[1]!) ?? new Set<string>();
    kinds.add(match[2]!);
    versionFiles.set(match[1]!, kinds);
  }
  return { versionFiles, journals };
}

/** Every content-addressed object under `o/` with its size (a full listing: full builds and repair). */
export async function listObjects(store: WritableObjectStore, prefix: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  const from = prefix.length + OBJECTS_DIR.length;
  for await (const { key, size } of store.list(`${prefix}${OBJECTS_DIR}`)) {
    const objectId = key.slice(from);
    // Only our content-addressed objects are candidates for collection; anything else is left alone.
    if (OBJECT_ID_PATTERN.test(objectId)) sizes.set(objectId, size);
  }
  return sizes;
}

/**
 * A reader of index shards that reads each shard once per publish (taking modules over and the incremental
 * build may both need the shard of the unfiltered id list). Shards are immutable, so this is safe.
 */
export function shardReader(
  store: WritableObjectStore,
  prefix: string,
): (shardId: string) => Promise<Buffer> {
  const reads = new Map<string, Promise<Buffer>>();
  return (shardId) => {
    let reading = reads.get(shardId);
    if (!reading) {
      reading = readObject(store, objectKeyFor(prefix, shardId)).then((bytes) => {
        if (!bytes) throw new Error(`index shard ${shardId} is missing from the target`);
        return bytes;
      });
      reads.set(shardId, reading);
    }
    return reading;
  };
}
