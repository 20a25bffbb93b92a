/**
 * The publication log (`<prefix>versions/log.json`): when each retained version became current and when it
 * was superseded, and who published it from which snapshot (`npm run catalogue -- versions` lists it).
 * Garbage collection reads it to keep superseded versions readable for the retention period (open cursors
 * pin a version's objects), and a rollback may make any version in it current again (rollback.ts). The
 * pointer stays the truth about what is current; the log is reconciled with it on every publish, so a
 * publish killed between the two writes heals on the next run.
 */
import { OBJECT_ID_PATTERN, VERSIONS_DIR } from '../../store/layout.js';

export const HISTORY_FILE = `${VERSIONS_DIR}log.json`;

export interface HistoryEntry {
  version: string;
  /** ISO time it became current; null when unknown (it predates the log). */
  current_since: string | null;
  /** ISO time another version replaced it; null while current. */
  superseded_at: string | null;
  /** Who published it and from what; absent for versions published before the log recorded it. */
  published?: VersionRecord;
  /** The last rollback that made it current again (rollback.ts). */
  restored?: { at: string; by: string };
}

/** How a version was published: by whom, through what, from which snapshot, and what it holds. */
export interface VersionRecord {
  /** ISO time of the publish that made it current. */
  at: string;
  /** Who: `user@host` for the CLI and npm start; the uploader's AWS principal for an upload. */
  by: string;
  via: 'cli' | 'upload' | 'npm start';
  /** The snapshot digest (builder/snapshot/source.ts snapshotDigest), or null when unknown. */
  snapshot: string | null;
  /** For an upload: the uploaded object as published (builder/upload/). */
  upload?: UploadStamp;
  counts: VersionCounts;
}

/** An uploaded snapshot object as the builder published it. */
export interface UploadStamp {
  key: string;
  etag: string;
  /** ISO time S3 completed the upload. */
  last_modified: string;
  /** S3's event sequencer of the upload, when it came from an event. */
  sequencer?: string;
}

export interface VersionCounts {
  modules: number;
  manufacturers: number;
  standards: number;
  tags: number;
  /** Objects the version references, and their bytes. */
  objects: number;
  bytes: number;
}

/** What a publish or a rollback says of the version it makes current. */
export interface BecomingCurrent {
  /** A publish: its record (kept as it is when the version is current already). */
  published?: VersionRecord;
  /** A rollback: who made it current again. */
  restored?: { by: string };
}

export interface History {
  format: 1;
  versions: HistoryEntry[];
}

export const EMPTY_HISTORY: History = { format: 1, versions: [] };

/**
 * Parse the log; anything unreadable counts as empty (then only the pointer's version is known).
 * @example parseHistory(undefined) // → EMPTY_HISTORY
 */
export function parseHistory(bytes: Buffer | undefined): History {
  if (!bytes) return EMPTY_HISTORY;
  try {
    const parsed = JSON.parse(bytes.toString('utf8')) as History;
    const valid = parsed.versions.every(
      (entry) => typeof entry.version === 'string' && OBJECT_ID_PATTERN.test(entry.version),
    );
    return valid ? { format: 1, versions: parsed.versions } : EMPTY_HISTORY;
  } catch {
    return EMPTY_HISTORY;
  }
}

/**
 * The log after `next` becomes current at `now`, replacing `previous` (the pointer's version, if any).
 * Every other version still marked current (left by a publish that died before its pointer) is superseded
 * now; the pointer's version is superseded now even if a dead publish marked it earlier, because it was
 * served until now.
 * @example
 * advanceHistory(EMPTY_HISTORY, null, 'v1', t).versions // → [{ version: 'v1', current_since: t, superseded_at: null }]
 */
export function advanceHistory(
  history: History,
  previous: string | null,
  next: string,
  now: Date,
  becoming: BecomingCurrent = {},
): History {
  const at = now.toISOString();
  const known = history.versions.find((entry) => entry.version === next);
  if (previous === next) {
    const versions = history.versions.map((entry) =>
      entry.version === next ? { ...entry, superseded_at: null } : entry,
    );
    if (!known) {
      versions.push({
        version: next,
        current_since: null,
        superseded_at: null,
        ...(becoming.published && { published: becoming.published }),
      });
    }
    return { format: 1, versions };
  }
  const versions: HistoryEntry[] = [];
  let sawPrevious = false;
  for (const entry of history.versions) {
    if (entry.version === next) continue; // re-added below as current from now
    if (entry.version === previous) {
      sawPrevious = true;
      versions.push({ ...entry, superseded_at: at });
    } else {
      versions.push(entry.superseded_at === null ? { ...entry, superseded_at: at } : entry);
    }
  }
  if (previous !== null && !sawPrevious) {
    versions.push({ version: previous, current_since: null, superseded_at: at });
  }
  // A version published again keeps nothing of its earlier stay but what says where it came from.
  const published = becoming.published ?? known?.published;
  versions.push({
    version: next,
    current_since: at,
    superseded_at: null,
    ...(published && { published }),
    ...(becoming.restored && { restored: { at, by: becoming.restored.by } }),
  });
  return { format: 1, versions };
}

/**
 * Split the log into the versions to keep (current, or superseded less than `retentionMs` ago) and the rest.
 * @example partitionHistory(history, new Date(), 24 * 3_600_000).expired // → versions to collect
 */
export function partitionHistory(
  history: History,
  now: Date,
  retentionMs: number,
): { kept: History; expired: string[] } {
  const kept: HistoryEntry[] = [];
  const expired: string[] = [];
  for (const entry of history.versions) {
    const supersededAt = entry.superseded_at === null ? undefined : Date.parse(entry.superseded_at);
    // An unparseable time keeps the version: collecting too little is safe, too much is not.
    const expiredNow = supersededAt !== undefined && now.getTime() - supersededAt >= retentionMs;
    if (expiredNow) expired.push(entry.version);
    else kept.push(entry);
  }
  return { kept: { format: 1, versions: kept }, expired };
}
