/**
 * The builder's one entry point: a snapshot directory → a published version. It reads the target's current
 * version, loads and validates the snapshot (checking again only what that version does not already hold
 * unchanged), then publishes (builder/publish/publish.ts). `npm run catalogue -- build` and `npm start`
 * both call this, and only say the outcome in their own words.
 */
import { catalogueWrites, confineWrites } from '../store/layout.js';
import type { WritableObjectStore } from '../store/objects/interface.js';
import { publishCatalogue } from './publish/publish.js';
import { type CurrentVersion, readCurrentVersion } from './publish/read.js';
import type { PublishOptions, PublishRecord, PublishSummary } from './publish/types.js';
import { loadSnapshot, type SnapshotLimits } from './snapshot/load.js';
import type { Problem } from './snapshot/problems.js';
import type { Snapshot } from './snapshot/snapshot.js';
import type { SnapshotSource } from './snapshot/source.js';

/** Where to publish: an object store and a key prefix ('' or ending in '/'). */
export interface SnapshotTarget {
  store: WritableObjectStore;
  prefix: string;
}

export type PublishSnapshotOptions = Omit<
  PublishOptions,
  'store' | 'prefix' | 'snapshot' | 'sourceDigests' | 'current' | 'record'
> & {
  /** Who publishes and how (the version records it, with the snapshot's digest: history.ts). */
  record?: Omit<PublishRecord, 'snapshot'>;
  /**
   * Called once the snapshot is valid, before anything is written, with what the target holds now (e.g. to
   * warn that a first publish of a big catalogue takes minutes).
   */
  onValid?: (snapshot: Snapshot, current: CurrentVersion) => void;
  /** What the snapshot may hold (default: builder/snapshot/load.ts SNAPSHOT_LIMITS; an upload's are tighter). */
  limits?: SnapshotLimits;
};

export type PublishSnapshotOutcome =
  | {
      ok: true;
      summary: PublishSummary;
      snapshot: Snapshot;
      /** The snapshot digest (builder/snapshot/source.ts). */
      digest: string;
      /** Modules whose own fields were not checked again: unchanged since the current version. */
      unchanged: number;
    }
  /**
   * The snapshot is not valid, and nothing was written: its first 1,000 problems (problems.ts PROBLEM_CAP) in
   * `problems`, and `problemCount` counting every one.
   */
  | { ok: false; reason: 'invalid'; problems: Problem[]; problemCount: number }
  /**
   * The target could not be read or written, or another publish holds it (`error` is a PublishBusyError,
   * lock.ts); the previous version is still current.
   */
  | { ok: false; reason: 'failed'; error: unknown };

/**
 * Validate the snapshot in `source` (a directory, or an upload's files) and publish it to `target`.
 * @example
 * const outcome = await publishSnapshot('fixtures/catalogue', { store: new DirectoryObjectStore('out'), prefix: '' });
 * if (outcome.ok) console.log(outcome.summary.version);
 */
export async function publishSnapshot(
  source: SnapshotSource,
  target: SnapshotTarget,
  options: PublishSnapshotOptions = {},
): Promise<PublishSnapshotOutcome> {
  const { builder, progress, onValid, record, limits, ...publish } = options;
  // The builder writes only the catalogue's own keys (store/layout.ts), whoever calls it.
  const store = confineWrites(target.store, catalogueWrites(target.prefix));
  progress?.note('reading the current version');
  // A failure is reported as the publish's own, after the snapshot's problems if it has any.
  let unreadable: { error: unknown } | undefined;
  const current = await readCurrentVersion(store, target.prefix).catch((error: unknown) => {
    unreadable = { error };
    return undefined;
  });
  progress?.note(`validating ${typeof source === 'string' ? source : source.name}`);
  const manifest = options.repair ? undefined : current?.manifest;
  const loaded = await loadSnapshot(source, {
    ...(builder !== undefined && { builder }),
    ...(limits && { limits }),
    ...(manifest && {
      current: { builder: manifest.reuse?.builder, sourceOf: (id: number) => manifest.modules.get(id)?.[6] },
    }),
  });
  if (!loaded.ok) {
    return { ok: false, reason: 'invalid', problems: loaded.problems, problemCount: loaded.problemCount };
  }
  if (unreadable || !current) return { ok: false, reason: 'failed', error: unreadable?.error };
  onValid?.(loaded.snapshot, current);
  // publishCatalogue holds the target from here (a valid snapshot) to the end, and reads the version again
  // if another publish changed it meanwhile. A dry run writes nothing and holds nothing.
  try {
    const summary = await publishCatalogue({
      ...publish,
      store,
      prefix: target.prefix,
      snapshot: loaded.snapshot,
      current,
      ...(builder !== undefined && { builder }),
      ...(loaded.sourceDigests && { sourceDigests: loaded.sourceDigests }),
      ...(progress && { progress }),
      ...(record && { record: { ...record, snapshot: loaded.digest } }),
    });
    return {
      ok: true,
      summary,
      snapshot: loaded.snapshot,
      digest: loaded.digest,
      unchanged: loaded.unchanged ?? 0,
    };
  } catch (error) {
    return { ok: false, reason: 'failed', error };
  }
}
