/**
 * The retained versions of a target, as `npm run catalogue -- versions` lists them: every version of the
 * publication log (history.ts) — when it was live, who published it from which snapshot, its counts — and
 * which one the pointer names, with whether its files (pointer copy and manifest) are still in place.
 */
import { POINTER_KEY, VERSIONS_DIR } from '../../store/layout.js';
import type { WritableObjectStore } from '../../store/objects/interface.js';
import { parsePointer } from '../../store/pointer.js';
import { HISTORY_FILE, type History, type HistoryEntry, parseHistory } from './history.js';
import { readObject } from './read.js';

export interface ListedVersion extends HistoryEntry {
  /** The pointer names it. */
  live: boolean;
  /** Its pointer copy and manifest are in place (else it was being collected, or damaged). */
  files: boolean;
}

export interface VersionListing {
  /** The version the pointer names; null when there is none or it is unreadable. */
  live: string | null;
  /** Newest first: the live version, then by when each stopped being live. */
  versions: ListedVersion[];
}

/** The publication log of the target (empty when there is none or it is unreadable). */
export async function readHistory(store: WritableObjectStore, prefix: string): Promise<History> {
  return parseHistory(await readObject(store, `${prefix}${HISTORY_FILE}`));
}

/** The version the pointer names now, or null (none, or unreadable). */
export async function readLiveVersion(store: WritableObjectStore, prefix: string): Promise<string | null> {
  const read = await store.get(`${prefix}${POINTER_KEY}`);
  return (read.ok && parsePointer(read.body)?.version) || null;
}

/** Newest first: live before superseded, then the later `superseded_at`, then the later `current_since`. */
function newestFirst(a: ListedVersion, b: ListedVersion): number {
  if (a.live !== b.live) return a.live ? -1 : 1;
  const by = (value: string | null) => (value === null ? '' : value);
  return (
    by(b.superseded_at).localeCompare(by(a.superseded_at)) ||
    by(b.current_since).localeCompare(by(a.current_since))
  );
}

/**
 * List the target's retained versions.
 * @example const { live, versions } = await listVersions(store, 'catalogue/');
 */
export async function listVersions(store: WritableObjectStore, prefix: string): Promise<VersionListing> {
  const [live, history] = await Promise.all([readLiveVersion(store, prefix), readHistory(store, prefix)]);
  const files = new Map<string, Set<string>>();
  for await (const { key } of store.list(`${prefix}${VERSIONS_DIR}`)) {
    const match = /^([A-Za-z0-9_-]{22})\.(json|manifest)$/.exec(
      key.slice(prefix.length + VERSIONS_DIR.length),
    );
    if (!match) continue;
    const kinds = files.get(match[1]!) ?? new Set<string>();
    kinds.add(match[2]!);
    files.set(match[1]!, kinds);
  }
  const complete = (version: string) => (files.get(version)?.size ?? 0) === 2;
  const versions: ListedVersion[] = history.versions.map((entry) => ({
    ...entry,
    live: entry.version === live,
    files: complete(entry.version),
  }));
  if (live !== null && !versions.some((entry) => entry.live)) {
    versions.push({
      version: live,
      current_since: null,
      superseded_at: null,
      live: true,
      files: complete(live),
    });
  }
  return { live, versions: versions.sort(newestFirst) };
}
