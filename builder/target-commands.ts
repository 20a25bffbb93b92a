/**
 * The commands that act on a published target rather than on a snapshot: `versions` (what is retained and
 * live), `rollback` (make a retained version live again) and `unlock` (break a publish lock that cannot be
 * valid, guarded). Each writes its outcome and resolves to an exit code (exit.ts).
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { errorMessage } from '../store/errors.js';
import { catalogueWrites, confineWrites } from '../store/layout.js';
import { DirectoryObjectStore } from '../store/objects/directory.js';
import { EXIT, whoAmI } from './exit.js';
import type { HistoryEntry } from './publish/history.js';
import {
  breakPublishLock,
  CLOCK_SKEW_MS,
  inspectPublishLock,
  LOCK_KEY,
  type LockHolder,
  PublishBusyError,
} from './publish/lock.js';
import { rollback } from './publish/rollback.js';
import { type ListedVersion, listVersions } from './publish/versions.js';
import { PointerMovedError } from './publish/write.js';
import { explainPublishFailure } from './report/failure.js';
import type { PublishTarget } from './target.js';

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);
const count = (n: number) => n.toLocaleString('en-US');
/** An ISO time to the second, as `2026-06-01 12:00:03Z`. */
const when = (iso: string | null | undefined) =>
  iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}Z` : 'unknown';

/**
 * One version as `versions` prints it: id, live or when, who and how, from which snapshot, counts.
 * @example versionLine(entry) // → '* 2BXA2eAPM5HhGwJ-cc9ZoQ  live since 2026-06-01 12:00:03Z  by alice@laptop (cli)  snapshot 3f9a1c2b7d10  25,000 modules, 80,081 objects'
 */
export function versionLine(entry: ListedVersion): string {
  const period = entry.live
    ? `live since ${when(entry.current_since)}`
    : entry.superseded_at === null
      ? 'never live (its publish stopped before the pointer)'
      : `live ${when(entry.current_since)} – ${when(entry.superseded_at)}`;
  const { published } = entry;
  const how = published
    ? `by ${published.by} (${published.via}${published.upload ? ` ${published.upload.key}` : ''})`
    : 'by (not recorded)';
  const restored = entry.restored
    ? `, made live again by ${entry.restored.by} at ${when(entry.restored.at)} (rollback)`
    : '';
  const snapshot = published?.snapshot
    ? `snapshot ${published.snapshot.slice(0, 12)}`
    : 'snapshot (not recorded)';
  const counts = published
    ? `${count(published.counts.modules)} modules, ${count(published.counts.objects)} objects`
    : '';
  const files = entry.files ? '' : '  (its files are gone: it cannot be made live)';
  return `${entry.live ? '*' : ' '} ${entry.version}  ${period}  ${how}${restored}  ${snapshot}  ${counts}${files}`.trimEnd();
}

/** `versions`: the retained versions, newest first, the live one marked; with `json`, the listing as JSON. */
export async function versionsCommand(target: PublishTarget, json: boolean): Promise<number> {
  const listing = await listVersions(target.store, target.prefix);
  if (json) {
    out(JSON.stringify(listing, null, 2));
    return EXIT.ok;
  }
  if (listing.versions.length === 0) {
    out(`${target.description}: nothing is published here`);
    return EXIT.ok;
  }
  out(
    `${target.description}: ${listing.versions.length} retained version${listing.versions.length === 1 ? '' : 's'}` +
      `, newest first; * is live${listing.live === null ? ' (the pointer is missing or unreadable)' : ''}`,
  );
  for (const entry of listing.versions) out(versionLine(entry));
  return EXIT.ok;
}

/** How a version came to be, in a few words: `published by X (via) from snapshot abc…`. */
function origin(entry: HistoryEntry | undefined): string {
  const published = entry?.published;
  if (!published) return 'its publisher is not recorded';
  const snapshot = published.snapshot ? ` from snapshot ${published.snapshot.slice(0, 12)}` : '';
  return `published ${when(published.at)} by ${published.by} (${published.via})${snapshot}`;
}

/** `rollback`: make the previous (or the named) retained version live again. */
export async function rollbackCommand(target: PublishTarget, to: string | undefined): Promise<number> {
  try {
    const outcome = await rollback(
      confineWrites(target.store, catalogueWrites(target.prefix)),
      target.prefix,
      {
        ...(to !== undefined && { to }),
        by: whoAmI(),
        warn: (message) => err(`warning: ${message}`),
      },
    );
    if (!outcome.ok) {
      err(`rollback refused: ${outcome.message}; target: ${target.location}\nnothing was written`);
      return EXIT.refused;
    }
    if (outcome.already) {
      out(
        `${outcome.version} is live already in ${target.description} (${origin(outcome.entry)}); nothing written`,
      );
      return EXIT.ok;
    }
    out(
      `rolled back ${target.description} to ${outcome.version} (${origin(outcome.entry)}); ` +
        `${outcome.previous ?? 'nothing'} was live and stays readable for open cursors until collected; ` +
        `${count(outcome.checked)} objects checked, nothing rebuilt, ${outcome.seconds.toFixed(1)} s`,
    );
    return EXIT.ok;
  } catch (error) {
    if (error instanceof PublishBusyError) {
      err(
        `rollback refused: ${error.message}; target: ${target.location}\nnothing was written; roll back once that publish has finished`,
      );
      return EXIT.busy;
    }
    if (error instanceof PointerMovedError) {
      err(
        `rollback failed: ${error.message}; target: ${target.location}\nrun \`versions\` to see what is live`,
      );
      return EXIT.publishFailed;
    }
    const { advice } = explainPublishFailure(error, {
      description: target.description,
      again: 'roll back again',
    });
    err(
      `rollback failed: ${errorMessage(error)}; target: ${target.location}\nthe live version is unchanged; ${advice}`,
    );
    return EXIT.publishFailed;
  }
}

function holderLine(holder: LockHolder): string {
  return `${holder.host} pid ${holder.pid}, started ${holder.started_at}, renewed ${holder.renewed_at}, its lease runs to ${holder.expires_at}`;
}

/** Whether the key of a directory target's lock is a directory on disk (a lock cannot be one). */
function directoryProbe(target: PublishTarget): ((key: string) => Promise<boolean>) | undefined {
  const { store } = target;
  if (!(store instanceof DirectoryObjectStore)) return undefined;
  return async (key) => (await stat(store.pathOf(key)).catch(() => undefined))?.isDirectory() ?? false;
}

/**
 * `unlock`: break the target's publish lock when it cannot be valid (unreadable, an impossible lease, a
 * directory) or its publish is gone; refuse while it looks live, unless `force`.
 */
export async function unlockCommand(target: PublishTarget, force: boolean): Promise<number> {
  const at = `${target.description.replace(/\/?$/, '/')}${LOCK_KEY}`;
  const lock = await inspectPublishLock(target.store, target.prefix, {
    ...(directoryProbe(target) && { directoryAt: directoryProbe(target)! }),
  });
  if (lock.state === 'free') {
    out(`${at}: no publish lock; nothing to do`);
    return EXIT.ok;
  }
  if (lock.state === 'invalid' && lock.directory !== undefined) {
    const path = (target.store as DirectoryObjectStore).pathOf(lock.directory);
    if (!force) {
      const entries = await readdir(path);
      if (entries.length > 0) {
        err(
          `unlock refused: ${path} is a directory holding ${entries.length} entries, not a publish lock; ` +
            'look at what it holds, then remove it (or run unlock again with --force to remove it)',
        );
        return EXIT.busy;
      }
    }
    await rm(path, { recursive: true, force: true });
    out(
      `${at}: removed a directory standing where the publish lock belongs (${lock.reason}); publishing works again`,
    );
    return EXIT.ok;
  }
  if (lock.state === 'live' && !force) {
    const wait = new Date(Date.parse(lock.holder.expires_at) + CLOCK_SKEW_MS).toISOString();
    err(
      `unlock refused: the publish lock of ${target.description} looks live: ${holderLine(lock.holder)}.\n` +
        `If that publish is running, let it finish. If it is gone (its machine is off, its process was killed elsewhere), ` +
        `the next publish takes the lock over by itself after ${wait}; to break it now, run unlock again with --force ` +
        '(a publish still holding it then stops writing within seconds; the live version is never left half-written)',
    );
    return EXIT.busy;
  }
  const why =
    lock.state === 'live'
      ? `--force: it looked live (${holderLine(lock.holder)})`
      : `${lock.reason}${lock.holder ? ` (${holderLine(lock.holder)})` : ''}`;
  const store = confineWrites(target.store, catalogueWrites(target.prefix));
  const broken = await breakPublishLock(store, target.prefix, lock, { by: whoAmI() });
  if (!broken) {
    err(
      `unlock: the publish lock of ${target.description} changed while it was being broken (a publish took it); run unlock again to see who holds it`,
    );
    return EXIT.busy;
  }
  out(`${at}: broken — ${why}; the next publish takes it over at once`);
  return EXIT.ok;
}
