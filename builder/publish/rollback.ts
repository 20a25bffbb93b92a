/**
 * Rollback: make a retained version live again, in seconds. Nothing is rebuilt or uploaded: holding the
 * publish lock (lock.ts), it checks that the version is in the publication log and that everything it
 * references is still in the target, records the change in the log, then writes the version's own pointer
 * copy as the pointer — only over the pointer it read (a conditional write). The version it replaces is
 * superseded now, so it stays readable for the retention period: cursors of a walk on it keep working.
 * Retention is respected as any publish respects it: nothing is collected here; the next publish collects
 * what has left retention.
 */
import { OBJECTS_DIR, objectKeyFor, POINTER_KEY } from '../../store/layout.js';
import type { WritableObjectStore } from '../../store/objects/interface.js';
import { parsePointer } from '../../store/pointer.js';
import { advanceHistory, HISTORY_FILE, type History, type HistoryEntry, parseHistory } from './history.js';
import type { PublishLock } from './lock.js';
import { decodeManifest, manifestKey } from './manifest.js';
import { TaskPool } from './pool.js';
import { takePublishLock } from './publish.js';
import { type CurrentVersion, readCurrentVersion, readObject, versionKey } from './read.js';
import { PointerMovedError } from './write.js';

export interface RollbackOptions {
  /** The version to make live; by default the one that was live before the live one. */
  to?: string;
  /** Who rolls back (recorded in the log). */
  by: string;
  /** Object reads in flight while checking (default 32). */
  concurrency?: number;
  now?: () => Date;
  warn?: (message: string) => void;
}

export type RollbackOutcome =
  | {
      ok: true;
      version: string;
      previous: string | null;
      /** It was live already: nothing was written. */
      already: boolean;
      /** Its log entry after the rollback (who published it, from what). */
      entry: HistoryEntry | undefined;
      /** Objects checked to be in place (those the live version does not share with it). */
      checked: number;
      seconds: number;
    }
  | { ok: false; reason: 'no-previous' | 'not-retained' | 'incomplete'; message: string };

/** Above this many objects to check one by one, the target's objects are listed instead (1,000 a request). */
const LIST_ABOVE = 2000;

/** The version that was live before the live one: the latest superseded in the log. */
function previousOf(versions: readonly HistoryEntry[], live: string | null): HistoryEntry | undefined {
  let previous: HistoryEntry | undefined;
  for (const entry of versions) {
    if (entry.version === live || entry.superseded_at === null) continue;
    if (!previous || entry.superseded_at > previous.superseded_at!) previous = entry;
  }
  return previous;
}

/** The ids among `objectIds` that the target lacks: read one byte of each, or list `o/` when they are many. */
async function missingObjects(
  store: WritableObjectStore,
  prefix: string,
  objectIds: readonly string[],
  concurrency: number,
): Promise<string[]> {
  if (objectIds.length > LIST_ABOVE) {
    const present = new Set<string>();
    const from = prefix.length + OBJECTS_DIR.length;
    for await (const { key } of store.list(objectKeyFor(prefix, ''))) present.add(key.slice(from));
    return objectIds.filter((id) => !present.has(id));
  }
  const missing: string[] = [];
  const pool = new TaskPool(concurrency);
  for (const id of objectIds) {
    await pool.run(async () => {
      const read = await store.get(objectKeyFor(prefix, id), { range: [0, 1] });
      if (!read.ok) missing.push(id);
    });
  }
  await pool.drain();
  return missing;
}

/** A rollback under way, holding the lock: its target and options, what is live and the log as read under it. */
interface Restoring {
  store: WritableObjectStore;
  prefix: string;
  options: RollbackOptions;
  lock: PublishLock;
  current: CurrentVersion;
  history: History;
  /** The version to make live. */
  target: string;
}

/**
 * The version to make live (`to`, or the one live before `live`) and whether it is live already; or why there
 * is none: nothing before the live one, or a version the log does not retain.
 */
function chooseTarget(
  history: History,
  live: string | null,
  to: string | undefined,
): { ok: true; target: string; already: boolean } | Extract<RollbackOutcome, { ok: false }> {
  const target = to ?? previousOf(history.versions, live)?.version;
  if (target === undefined) {
    return {
      ok: false,
      reason: 'no-previous',
      message: `no version before ${live ?? 'the live one'} is retained: there is nothing to roll back to`,
    };
  }
  if (target === live) return { ok: true, target, already: true };
  const retained = history.versions.map((entry) => entry.version);
  if (!retained.includes(target)) {
    return {
      ok: false,
      reason: 'not-retained',
      message:
        `version ${target} is not retained here (it was collected once its retention ran out, or was never ` +
        `published to this target); retained: ${retained.join(', ') || 'none'}`,
    };
  }
  return { ok: true, target, already: false };
}

/**
 * Whether `target` can be made live: its pointer copy and manifest readable, and every object it does not share
 * with the live version still there; its pointer bytes and how many objects were checked, or why not.
 */
async function checkRestorable({
  store,
  prefix,
  options,
  target,
  current,
}: Restoring): Promise<
  { ok: true; pointerBytes: Buffer; checked: number } | Extract<RollbackOutcome, { ok: false }>
> {
  const gone = (what: string) => ({
    ok: false as const,
    reason: 'incomplete' as const,
    message:
      `version ${target} cannot be made live: ${what}; its objects are gone (collected, or removed from ` +
      'the target). Publish its snapshot again instead',
  });
  const pointerBytes = await readObject(store, versionKey(prefix, target));
  const pointer = pointerBytes && parsePointer(pointerBytes);
  if (!pointerBytes || !pointer || pointer.version !== target)
    return gone('its pointer copy is missing or unreadable');
  const manifest = decodeManifest(await readObject(store, manifestKey(prefix, target)), target);
  if (!manifest) return gone('its manifest is missing or unreadable');
  const shared = current.manifest?.objects;
  const toCheck = [...manifest.objects.keys()].filter((id) => !shared?.has(id));
  for (const shard of pointer.shards) if (!manifest.objects.has(shard)) toCheck.push(shard);
  const missing = await missingObjects(store, prefix, toCheck, options.concurrency ?? 32);
  if (missing.length > 0) {
    return gone(
      `${missing.length} of the ${toCheck.length} objects it does not share with the live version are missing (e.g. ${objectKeyFor(prefix, missing[0]!)})`,
    );
  }
  return { ok: true, pointerBytes, checked: toCheck.length };
}

/**
 * Record the rollback in the log, then write the target's pointer copy as the pointer, only over the pointer
 * read (PointerMovedError else); the log as written.
 */
async function writeRollback(restoring: Restoring, pointerBytes: Buffer): Promise<History> {
  const { store, prefix, options, lock, current, target } = restoring;
  // The log first, then the pointer (as a publish writes them): a rollback killed in between heals on the
  // next publish, which takes the pointer as the truth.
  const now = (options.now ?? (() => new Date()))();
  const advanced = advanceHistory(restoring.history, current.pointer?.version ?? null, target, now, {
    restored: { by: options.by },
  });
  await lock.ensure();
  await store.put(`${prefix}${HISTORY_FILE}`, Buffer.from(`${JSON.stringify(advanced, null, 1)}\n`), {
    contentType: 'application/json',
  });
  await lock.ensure();
  const key = `${prefix}${POINTER_KEY}`;
  const written = await store.putIf(
    key,
    pointerBytes,
    current.pointerEtag === undefined ? { ifNoneMatch: '*' } : { ifMatch: current.pointerEtag },
    { contentType: 'application/json' },
  );
  if (!written.ok) throw new PointerMovedError(key);
  return advanced;
}

/**
 * Make `options.to` (or the previous version) live again. Throws PublishBusyError when another publish holds
 * the target, PointerMovedError when the pointer moved meanwhile, a DependencyError on a store fault.
 * @example const outcome = await rollback(store, 'catalogue/', { by: 'alice@laptop' });
 */
export async function rollback(
  store: WritableObjectStore,
  prefix: string,
  options: RollbackOptions,
): Promise<RollbackOutcome> {
  const started = performance.now();
  const lock: PublishLock = await takePublishLock(store, prefix, options);
  try {
    const current = await readCurrentVersion(store, prefix);
    const live = current.pointer?.version ?? null;
    const history = parseHistory(await readObject(store, `${prefix}${HISTORY_FILE}`));
    const chosen = chooseTarget(history, live, options.to);
    if (!chosen.ok) return chosen;
    const { target } = chosen;
    const made = (log: History, checked: number) => ({
      ok: true as const,
      version: target,
      previous: live,
      already: chosen.already,
      entry: log.versions.find((entry) => entry.version === target),
      checked,
      seconds: (performance.now() - started) / 1000,
    });
    if (chosen.already) return made(history, 0);
    const restoring: Restoring = { store, prefix, options, lock, current, history, target };
    const checked = await checkRestorable(restoring);
    if (!checked.ok) return checked;
    return made(await writeRollback(restoring, checked.pointerBytes), checked.checked);
  } finally {
    await lock.release();
  }
}
