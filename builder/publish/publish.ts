/**
 * Publishing (docs/design.md#what-the-builder-guarantees, 5 and 7), one code path for every WritableObjectStore, in named
 * steps, holding the target's publish lock throughout (lock.ts): read the current version (read.ts) →
 * collect what interrupted publishes left (leftovers.ts) → build the next one (build.ts: incrementally from
 * the current manifest when it can, else in full) → write it, objects first and the pointer last, over the
 * pointer it read (write.ts) → collect what no retained version references (collect.ts).
 */
import { POINTER_KEY } from '../../store/layout.js';
import type { WritableObjectStore } from '../../store/objects/interface.js';
import { buildNextVersion } from './build.js';
import { collectGarbage } from './collect.js';
import { abandonedUploads, collectTemporaryFiles, UploadJournal } from './leftovers.js';
import { acquirePublishLock, PublishBusyError, type PublishLock } from './lock.js';
import { type CurrentVersion, readCurrentVersion } from './read.js';
import type { Counts, PublishOptions, PublishSummary } from './types.js';
import { writeObjects, writeVersion } from './write.js';

/**
 * Publish `options.snapshot` to `options.store` under `options.prefix`, or with `dryRun` report what that
 * would change. Store faults propagate (as DependencyError); nothing written before a fault is ever visible
 * to readers.
 * @example
 * const summary = await publishCatalogue({ store: new DirectoryObjectStore('/srv/catalogue'), snapshot });
 * console.log(summary.mode, summary.objects.added, summary.bytes.added);
 */
export async function publishCatalogue(options: PublishOptions): Promise<PublishSummary> {
  // A dry run writes nothing and needs no lock; a publish holds the target from start to end.
  const lock = options.dryRun
    ? undefined
    : await takePublishLock(options.store, options.prefix ?? '', options);
  try {
    return await readBuildWriteCollect(options, lock);
  } finally {
    await lock?.release();
  }
}

/** How often a publish waiting for a busy target (lockWaitMs) tries the lock again. */
export const LOCK_RETRY_MS = 5_000;

/**
 * Take the target's publish lock (lock.ts): at once, or PublishBusyError naming the publish that holds it —
 * after trying again every {@link LOCK_RETRY_MS} for up to `lockWaitMs` when one is given.
 */
export async function takePublishLock(
  store: WritableObjectStore,
  prefix: string,
  options: Pick<PublishOptions, 'now' | 'warn' | 'lockWaitMs' | 'progress'> & { retryMs?: number } = {},
): Promise<PublishLock> {
  const target = prefix ? `the target (prefix ${prefix})` : 'the target';
  const giveUpAt = performance.now() + (options.lockWaitMs ?? 0);
  for (let attempt = 0; ; attempt++) {
    try {
      return await acquirePublishLock(store, prefix, target, options);
    } catch (error) {
      const retryMs = options.retryMs ?? LOCK_RETRY_MS;
      if (!(error instanceof PublishBusyError) || performance.now() + retryMs > giveUpAt) throw error;
      if (attempt === 0) options.progress?.note(`waiting for the other publish to finish (${error.message})`);
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  }
}

/**
 * The current version as read before the lock was taken, or read again if the pointer has changed since
 * (another publish finished in between): one conditional read when nothing changed.
 */
async function currentUnderLock(
  store: WritableObjectStore,
  prefix: string,
  current: CurrentVersion,
): Promise<CurrentVersion> {
  const key = `${prefix}${POINTER_KEY}`;
  const read = await store.get(
    key,
    current.pointerEtag === undefined ? {} : { ifNoneMatch: current.pointerEtag },
  );
  const unchanged = current.pointerEtag === undefined ? !read.ok : !read.ok && read.reason === 'not-modified';
  return unchanged ? current : readCurrentVersion(store, prefix);
}

/**
 * The first step: the current version (as the caller read it, read again under the lock if the pointer moved
 * since, or read now), told to `underLock`; a pointer that cannot be read is said to be replaced.
 */
async function readCurrent(options: PublishOptions, lock: PublishLock | undefined): Promise<CurrentVersion> {
  const prefix = options.prefix ?? '';
  let current = options.current;
  if (!current) {
    options.progress?.note('reading the current version');
    current = await readCurrentVersion(options.store, options.prefix);
  } else if (lock) {
    current = await currentUnderLock(options.store, prefix, current);
  }
  if (lock) await options.underLock?.(current);
  if (current.pointerBytes && !current.pointer) {
    const at = `${prefix}${POINTER_KEY}`;
    options.warn?.(`the pointer ${at} is unreadable or of an older format; replacing it`);
  }
  return current;
}

/**
 * The steps of a publish in order: read the current version, build the next, write it, collect. Under `lock`
 * when publishing; a dry run (no lock) writes and deletes nothing and reports what it would.
 */
async function readBuildWriteCollect(
  options: PublishOptions,
  lock: PublishLock | undefined,
): Promise<PublishSummary> {
  const started = performance.now();
  const counts: Counts = {
    objects: { total: 0, added: 0, unchanged: 0, removed: 0 },
    bytes: { total: 0, added: 0, removed: 0 },
    uploads: options.explain ? [] : undefined,
  };
  const prefix = options.prefix ?? '';

  const current = await readCurrent(options, lock);
  // What interrupted publishes left: their temporary files now, their uploads in the collection step.
  const temporaryFiles = lock ? await collectTemporaryFiles(options) : 0;
  const abandoned = lock && (await abandonedUploads(options, current, lock.holder.owner));
  const journal = lock && new UploadJournal(options.store, prefix, lock.holder.owner);
  const next = await buildNextVersion(options, current);
  await writeObjects(next, options, counts, { journal, lock });
  const version = await next.finish();
  const written = await writeVersion(version, current, options, lock);
  const collected = await collectGarbage(options, { next, version, written, current, lock, abandoned });
  const { versionsRemoved } = collected;
  counts.objects.removed += collected.removed.objects;
  counts.bytes.removed += collected.removed.bytes;
  // Finished: nothing this publish uploaded is left unreferenced, so its journal goes.
  await journal?.remove();
  const leftovers = { temporaryFiles, ...collected.abandoned };
  if (leftovers.temporaryFiles + leftovers.objects > 0) {
    options.warn?.(
      `collected what interrupted publishes left: ${leftovers.temporaryFiles} temporary files, ` +
        `${leftovers.objects} objects (${leftovers.bytes} bytes)`,
    );
  }
  counts.objects.total = version.manifest.objects.size;
  counts.objects.unchanged = counts.objects.total - counts.objects.added;
  for (const { size } of version.manifest.objects.values()) counts.bytes.total += size;
  return {
    dryRun: options.dryRun ?? false,
    version: version.pointer.version,
    record: written.record,
    previousVersion: current.pointer?.version ?? null,
    pointerChanged: written.pointerChanged,
    mode: next.mode,
    ...(next.fullBuildReason !== undefined && { fullBuildReason: next.fullBuildReason }),
    objects: counts.objects,
    bytes: counts.bytes,
    versionsRemoved,
    modulesReused: next.prepared.reused,
    seconds: (performance.now() - started) / 1000,
    ...(version.changes && { changes: version.changes }),
    ...(counts.uploads && { uploads: counts.uploads }),
    ...(leftovers.temporaryFiles + leftovers.objects > 0 && { leftovers }),
  };
}
