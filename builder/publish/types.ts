/** What a publish is given and what it reports: shared by its steps (read, build, write, collect). */
import type { WritableObjectStore } from '../../store/objects/interface.js';
import type { IndexEntry } from '../../store/pointer.js';
import type { Snapshot } from '../snapshot/snapshot.js';
import type { VersionRecord } from './history.js';
import type { CurrentVersion } from './read.js';

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
   * The builder's fingerprint (builder/publish/reuse.ts): modules whose source is unchanged since a current
   * version published by the same builder are taken over rather than serialised. Without it nothing is reused.
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
  /**
   * Who publishes and from what, recorded with the version in the publication log (history.ts); the time
   * and the counts are added by the publish.
   */
  record?: PublishRecord;
  /**
   * When another publish holds the target, try again every few seconds for up to this long before giving
   * up with PublishBusyError (the upload builder waits out a CLI publish). Default 0: refused at once.
   */
  lockWaitMs?: number;
  /**
   * Called once the lock is held and the current version read again, before anything is written: throwing
   * abandons the publish with nothing written (the upload builder re-checks that its upload is still the
   * newest, builder/upload/).
   */
  underLock?: (current: CurrentVersion) => Promise<void>;
  /** The clock for the publication log and retention (tests inject one). */
  now?: () => Date;
  progress?: PublishProgress;
  warn?: (message: string) => void;
}

/** An index key whose entry a publish changes: before (absent when added) and after (absent when removed). */
export interface IndexChange {
  indexKey: string;
  before?: IndexEntry;
  after?: IndexEntry;
}

/** What a publisher says of a publish it makes (history.ts VersionRecord without the time and counts). */
export type PublishRecord = Omit<VersionRecord, 'at' | 'counts'>;

export interface PublishSummary {
  dryRun: boolean;
  version: string;
  /** What the version is: who published it from what (written to the publication log when `record` was given), its counts. */
  record: VersionRecord;
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
  changes?: IndexChange[];
  /** With `explain`: objects uploaded (or, in a dry run, that would be). */
  uploads?: { objectId: string; size: number }[];
  /** What earlier, interrupted publishes had left and this one collected first (leftovers.ts). */
  leftovers?: LeftoversCollected;
}

/** What a publish collected of earlier, interrupted ones (leftovers.ts). */
export interface LeftoversCollected {
  temporaryFiles: number;
  /** Objects their journals named that no retained version references (deleted where present). */
  objects: number;
  bytes: number;
}

/** The summary's counts, filled in by the steps as they go. */
export interface Counts {
  objects: PublishSummary['objects'];
  bytes: PublishSummary['bytes'];
  uploads: { objectId: string; size: number }[] | undefined;
}
