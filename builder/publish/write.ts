/**
 * Step 3 of a publish: write the next version. Immutable objects first (only those the target lacks), then
 * the version's files (its pointer copy, its manifest, the publication log), then the pointer LAST: until
 * that write, readers see the previous version, whose objects are all in place. A publish killed at any
 * point leaves the previous pointer and all of its objects in place; running it again completes it.
 */
import { objectKeyFor, POINTER_KEY } from '../../store/layout.js';
import type { BuiltVersion, NextVersion } from './build.js';
import { advanceHistory, HISTORY_FILE, type History, parseHistory, partitionHistory } from './history.js';
import { encodeManifest, manifestKey } from './manifest.js';
import { TaskPool } from './pool.js';
import { type CurrentVersion, readObject, versionKey } from './read.js';
import { type Counts, DEFAULT_CONCURRENCY, DEFAULT_RETENTION_MS, type PublishOptions } from './types.js';

/**
 * Write every object of `next` the target lacks, `concurrency` at a time, and count them all (a dry run
 * counts what it would write). A full build renders as it writes: its progress is shown here.
 */
export async function writeObjects(
  next: NextVersion,
  options: PublishOptions,
  counts: Counts,
): Promise<void> {
  const { store, progress, dryRun } = options;
  const prefix = options.prefix ?? '';
  const pool = new TaskPool(options.concurrency ?? DEFAULT_CONCURRENCY);
  const { render } = next;
  if (render) progress?.start(dryRun ? 'rendering' : 'rendering and uploading', render.jobs);
  try {
    for (const { objectId, bytes } of next.objects()) {
      if (!next.has(objectId)) {
        counts.objects.added++;
        counts.bytes.added += bytes.byteLength;
        counts.uploads?.push({ objectId, size: bytes.byteLength });
        if (!dryRun) await pool.run(() => store.put(objectKeyFor(prefix, objectId), bytes));
      }
      if (render) progress?.update(render.encoded);
    }
    await pool.drain();
  } finally {
    if (render) progress?.stop();
  }
}

/** What writing the version decided: whether the pointer moves, and which versions stay retained. */
export interface WrittenVersion {
  pointerChanged: boolean;
  /** The publication log after this publish: the retained superseded versions. */
  kept: History;
}

/**
 * Write the version's files and, last, the pointer (a dry run writes nothing but decides the same).
 * @example const { pointerChanged } = await writeVersion(version, current, options);
 */
export async function writeVersion(
  version: BuiltVersion,
  current: CurrentVersion,
  options: PublishOptions,
): Promise<WrittenVersion> {
  const { store } = options;
  const prefix = options.prefix ?? '';
  const { pointer, pointerBytes } = version;
  const historyBytes = await readObject(store, `${prefix}${HISTORY_FILE}`);
  const now = (options.now ?? (() => new Date()))();
  const advanced = advanceHistory(
    parseHistory(historyBytes),
    current.pointer?.version ?? null,
    pointer.version,
    now,
  );
  const { kept } = partitionHistory(advanced, now, options.retentionMs ?? DEFAULT_RETENTION_MS);
  const nextHistoryBytes = Buffer.from(`${JSON.stringify(kept, null, 1)}\n`);
  const pointerChanged = !current.pointerBytes?.equals(pointerBytes);
  if (options.dryRun) return { pointerChanged, kept };

  const json = { contentType: 'application/json' };
  const files = current.versionFiles.get(pointer.version);
  if (!files?.has('json')) await store.put(versionKey(prefix, pointer.version), pointerBytes, json);
  const manifestBytes = encodeManifest(version.manifest);
  const stored = files?.has('manifest')
    ? await readObject(store, manifestKey(prefix, pointer.version))
    : undefined;
  if (!stored?.equals(manifestBytes)) {
    await store.put(manifestKey(prefix, pointer.version), manifestBytes, {
      contentType: 'application/octet-stream',
    });
  }
  if (!historyBytes?.equals(nextHistoryBytes))
    await store.put(`${prefix}${HISTORY_FILE}`, nextHistoryBytes, json);
  // The pointer LAST: until this write, readers see the previous version, whose objects are all in place.
  if (pointerChanged) await store.put(`${prefix}${POINTER_KEY}`, pointerBytes, json);
  return { pointerChanged, kept };
}
