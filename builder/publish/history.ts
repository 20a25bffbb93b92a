/**
 * The publication log (`<prefix>versions/log.json`): when each retained version became current and when it
 * was superseded. Garbage collection reads it to keep superseded versions readable for the retention period
 * (open cursors pin a version's objects). The pointer stays the truth about what is current; the log is
 * reconciled with it on every publish, so a publish killed between the two writes heals on the next run.
 */
import { OBJECT_ID_PATTERN, VERSIONS_DIR } from '../../store/layout.js';

export const HISTORY_FILE = `${VERSIONS_DIR}log.json`;

export interface HistoryEntry {
  version: string;
  /** ISO time it became current; null when unknown (it predates the log). */
  current_since: string | null;
  /** ISO time another version replaced it; null while current. */
  superseded_at: string | null;
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
export function advanceHistory(history: History, previous: string | null, next: string, now: Date): History {
  const at = now.toISOString();
  if (previous === next) {
    const known = history.versions.some((entry) => entry.version === next);
    const versions = history.versions.map((entry) =>
      entry.version === next ? { ...entry, superseded_at: null } : entry,
    );
    if (!known) versions.push({ version: next, current_since: null, superseded_at: null });
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
  versions.push({ version: next, current_since: at, superseded_at: null });
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
