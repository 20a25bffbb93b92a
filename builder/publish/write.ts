/**
 * Step 3 of a publish: write the next version. Immutable objects first (only those the target lacks, each
 * batch named in the publish's journal before it is uploaded: leftovers.ts), then the version's files (its
 * pointer copy, its manifest, the publication log), then the pointer LAST, and only if it is still the one
 * this publish read (a conditional write): until that write, readers see the previous version, whose objects
 * are all in place. A publish killed at any point leaves the previous pointer and all of its objects in
 * place; running it again completes it, and collects what the killed one uploaded in vain.
 */
import { DependencyError } from '../../store/errors.js';
import { objectKeyFor, POINTER_KEY } from '../../store/layout.js';
import type { RenderedObject } from '../render/jobs.js';
import type { BuiltVersion, NextVersion } from './build.js';
import {
  advanceHistory,
  HISTORY_FILE,
  type History,
  parseHistory,
  partitionHistory,
  type VersionRecord,
} from './history.js';
import { JOURNAL_BATCH, type UploadJournal } from './leftovers.js';
import type { PublishLock } from './lock.js';
import { encodeManifest, manifestKey } from './manifest.js';
import { TaskPool } from './pool.js';
import { type CurrentVersion, readObject, versionKey } from './read.js';
import { type Counts, DEFAULT_CONCURRENCY, DEFAULT_RETENTION_MS, type PublishOptions } from './types.js';

/** Bytes of rendered objects held back at most while their journal chunk is written. */
const BATCH_BYTES = 16 * 2 ** 20;

/** The pointer changed under this publish: another publish made its version current. Nothing of this one is live. */
export class PointerMovedError extends DependencyError {
  override name = 'PointerMovedError';
  constructor(key: string) {
    super(
      'objects',
      `the pointer ${key} changed while this publish ran (another publish made its version current); ` +
        'this version was not made current',
    );
  }
}

/** What a publish holds while it writes objects: its journal, and its lock. */
export interface Holding {
  /** Each batch of uploads is recorded in it first. */
  journal?: UploadJournal | undefined;
  /** Checked before every upload (PublishLock.check): a publish that lost its lock stops writing at once. */
  lock?: PublishLock | undefined;
}

/**
 * Write every object of `next` the target lacks, `concurrency` at a time, and count them all (a dry run
 * counts what it would write). A full build renders as it writes: its progress is shown here. Under a lock,
 * each upload first checks it is still held; with a journal, each batch of uploads is recorded in it first.
 */
export async function writeObjects(
  next: NextVersion,
  options: PublishOptions,
  counts: Counts,
  { journal, lock }: Holding = {},
): Promise<void> {
  const { store, progress, dryRun } = options;
  const prefix = options.prefix ?? '';
  const pool = new TaskPool(options.concurrency ?? DEFAULT_CONCURRENCY);
  const { render } = next;
  let batch: RenderedObject[] = [];
  let batchBytes = 0;
  const upload = async () => {
    lock?.check();
    await journal?.record(batch.map(({ objectId, bytes }) => ({ objectId, size: bytes.byteLength })));
    for (const { objectId, bytes } of batch) {
      await pool.run(async () => {
        lock?.check();
        await store.put(objectKeyFor(prefix, objectId), bytes);
      });
    }
    batch = [];
    batchBytes = 0;
  };
  if (render) progress?.start(dryRun ? 'rendering' : 'rendering and uploading', render.jobs);
  try {
    for (const object of next.objects()) {
      if (!next.has(object.objectId)) {
        counts.objects.added++;
        counts.bytes.added += object.bytes.byteLength;
        counts.uploads?.push({ objectId: object.objectId, size: object.bytes.byteLength });
        if (!dryRun) {
          batch.push(object);
          batchBytes += object.bytes.byteLength;
        }
        // Bounded in count (the journal's chunks) and in bytes (what waits in memory for its journal entry).
        if (batch.length >= JOURNAL_BATCH || batchBytes >= BATCH_BYTES) await upload();
      }
      if (render) progress?.update(render.encoded);
    }
    if (batch.length > 0) await upload();
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
  /** The version's record in the log (an already current version keeps the one it had). */
  record: VersionRecord;
}

/** The record of the version a publish makes current: who and what from the options, counts from the version. */
function versionRecord(version: BuiltVersion, options: PublishOptions, now: Date): VersionRecord {
  const { snapshot } = options;
  let bytes = 0;
  for (const { size } of version.manifest.objects.values()) bytes += size;
  return {
    at: now.toISOString(),
    by: options.record?.by ?? 'unknown',
    via: options.record?.via ?? 'cli',
    snapshot: options.record?.snapshot ?? null,
    ...(options.record?.upload && { upload: options.record.upload }),
    counts: {
      modules: snapshot.modules.length,
      manufacturers: snapshot.manufacturers.length,
      standards: snapshot.standards.length,
      tags: snapshot.tags.length,
      objects: version.manifest.objects.size,
      bytes,
    },
  };
}

/**
 * Write the version's files and, last, the pointer (a dry run writes nothing but decides the same).
 * @example const { pointerChanged } = await writeVersion(version, current, options);
 */
export async function writeVersion(
  version: BuiltVersion,
  current: CurrentVersion,
  options: PublishOptions,
  lock?: PublishLock,
): Promise<WrittenVersion> {
  const { store } = options;
  const prefix = options.prefix ?? '';
  const { pointer, pointerBytes } = version;
  const historyBytes = await readObject(store, `${prefix}${HISTORY_FILE}`);
  const now = (options.now ?? (() => new Date()))();
  const published = versionRecord(version, options, now);
  // Recorded in the log when the caller says who publishes (the CLI, npm start, an upload).
  const advanced = advanceHistory(
    parseHistory(historyBytes),
    current.pointer?.version ?? null,
    pointer.version,
    now,
    options.record ? { published } : {},
  );
  const { kept } = partitionHistory(advanced, now, options.retentionMs ?? DEFAULT_RETENTION_MS);
  const record = kept.versions.find((entry) => entry.version === pointer.version)?.published ?? published;
  const nextHistoryBytes = Buffer.from(`${JSON.stringify(kept, null, 1)}\n`);
  const pointerChanged = !current.pointerBytes?.equals(pointerBytes);
  if (options.dryRun) return { pointerChanged, kept, record };

  const json = { contentType: 'application/json' };
  await lock?.ensure();
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
  await lock?.ensure();
  if (!historyBytes?.equals(nextHistoryBytes))
    await store.put(`${prefix}${HISTORY_FILE}`, nextHistoryBytes, json);
  // The pointer LAST: until this write, readers see the previous version, whose objects are all in place.
  // And only over the pointer this publish read: if another one moved it, its version stays current.
  if (pointerChanged) {
    await lock?.ensure();
    const key = `${prefix}${POINTER_KEY}`;
    const written = await store.putIf(
      key,
      pointerBytes,
      current.pointerEtag === undefined ? { ifNoneMatch: '*' } : { ifMatch: current.pointerEtag },
      json,
    );
    if (!written.ok) throw new PointerMovedError(key);
  }
  return { pointerChanged, kept, record };
}
