/**
 * One publisher at a time per target: a publish holds `<prefix>publish.lock`, a small object taken and kept
 * with conditional writes only (store/objects/interface.ts WriteCondition: S3's If-None-Match / If-Match; a
 * directory's mutex and rename), so of two publishers one holds it and the other fails at once with
 * {@link PublishBusyError}, naming the holder.
 *
 * The lock is a lease: its holder renews it every {@link LEASE_MS}/4 and before every step that changes what
 * readers or other versions depend on (the version files, the pointer, each batch of deletions), and goes on
 * with such a step only within {@link SAFE_MS} of a renewal. A lock not renewed for LEASE_MS plus
 * {@link CLOCK_SKEW_MS} belongs to a publisher that is gone, and another one may take it over (again a
 * conditional write: one wins); on this machine, a holder whose process is gone is known at once. A holder
 * that finds its lock taken over stops before its next such step ({@link PublishLockLostError}).
 *
 * Between renewals the holder reads its lock every {@link WATCH_EVERY_MS} (one GET): a lock broken by
 * `npm run catalogue -- unlock --force` or taken over is known within seconds, and every object upload checks
 * first ({@link PublishLock.check}), so a publish that lost its lock stops writing within seconds instead of
 * uploading on beside the new holder until its next guarded step.
 *
 * Limits: the safety of a takeover rests on clocks agreeing within CLOCK_SKEW_MS, and on a holder not being
 * paused longer than LEASE_MS − SAFE_MS between a renewal and the step it guards (a suspended laptop);
 * the pointer's own conditional write (write.ts) still keeps the pointer on a complete version then.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { DependencyError, errorMessage } from '../../store/errors.js';
import { LOCK_KEY } from '../../store/layout.js';
import { processAlive } from '../../store/objects/directory.js';
import type { WritableObjectStore } from '../../store/objects/interface.js';

export { LOCK_KEY };
/** How long a lock stays valid after its last renewal. */
export const LEASE_MS = 60_000;
/** Renewed this often in the background (a publish may render for minutes). */
const RENEW_EVERY_MS = LEASE_MS / 4;
/** How often the holder reads its lock between renewals, to know within seconds that it lost it. */
export const WATCH_EVERY_MS = 2_000;
/** A guarded step goes on only this soon after a renewal; else it renews first. */
const SAFE_MS = 10_000;
/** Clocks of two publishers may disagree by this much; a takeover waits it out on top of the lease. */
export const CLOCK_SKEW_MS = 30_000;

/** What the lock object says about its holder. */
export interface LockHolder {
  /** Unique per publish. */
  owner: string;
  host: string;
  /** This machine since its last boot (hostname and boot id): its processes can be checked directly. */
  machine: string;
  pid: number;
  /** Unique per process: a lock of this very process whose publish has ended is known to be stale. */
  process: string;
  started_at: string;
  renewed_at: string;
  expires_at: string;
  /** Set on a lock `npm run catalogue -- unlock` broke (breakPublishLock): who broke it. */
  broken_by?: string;
}

/** Another publish holds the target: nothing was written by this one. */
export class PublishBusyError extends Error {
  override name = 'PublishBusyError';
  constructor(
    readonly target: string,
    readonly holder: LockHolder | undefined,
  ) {
    super(
      holder
        ? `another publish holds ${target}: ${holder.host} pid ${holder.pid}, started ${holder.started_at}, ` +
            `its lease runs to ${holder.expires_at}`
        : `another publish holds ${target}, or something that is not a lock stands where the lock belongs`,
    );
  }
}

/** This publish's lock was taken over (it stalled past its lease): it stops before changing anything more. */
export class PublishLockLostError extends DependencyError {
  override name = 'PublishLockLostError';
  constructor(target: string) {
    super(
      'objects',
      `the publish lock of ${target} was taken over by another publish (this one stalled past its lease)`,
    );
  }
}

export interface PublishLock {
  readonly holder: LockHolder;
  /**
   * Renew when the last renewal is older than SAFE_MS; throws {@link PublishLockLostError} when the lock
   * is no longer ours. Called before every step another publish or a reader depends on.
   */
  ensure(): Promise<void>;
  /**
   * Throws {@link PublishLockLostError} when the lock is known to be lost (a renewal failed, or the watch found
   * it changed); no I/O. Called before every object upload.
   */
  check(): void;
  /** Stop renewing and remove the lock if it is still ours (never throws: a leftover lock expires). */
  release(): Promise<void>;
}

export interface LockOptions {
  /** The clock (tests inject one). */
  now?: () => Date;
  warn?: (message: string) => void;
  /** How often the lock is read between renewals (default {@link WATCH_EVERY_MS}). */
  watchEveryMs?: number;
}

const PROCESS = randomUUID();
/** The owners of locks this process holds now: a lock of this process naming another owner is stale. */
const active = new Set<string>();

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return 'unknown-boot';
  }
}
const MACHINE = `${hostname()}/${bootId()}`;

function parseHolder(bytes: Buffer): LockHolder | undefined {
  try {
    const value = JSON.parse(bytes.toString('utf8')) as Partial<LockHolder>;
    const valid =
      typeof value.owner === 'string' &&
      typeof value.expires_at === 'string' &&
      typeof value.pid === 'number' &&
      typeof value.machine === 'string' &&
      typeof value.process === 'string';
    return valid ? (value as LockHolder) : undefined;
  } catch {
    return undefined;
  }
}

/** Why the lock `holder` describes no longer protects anything, or undefined while it does. */
function staleness(holder: LockHolder | undefined, now: Date): string | undefined {
  if (!holder) return 'it is unreadable';
  if (holder.machine === MACHINE) {
    if (holder.process === PROCESS) return active.has(holder.owner) ? undefined : 'its publish has ended';
    if (!processAlive(holder.pid)) return `its process (pid ${holder.pid}) is gone`;
  }
  const expires = Date.parse(holder.expires_at);
  if (Number.isNaN(expires) || now.getTime() > expires + CLOCK_SKEW_MS) return 'its lease has run out';
  return undefined;
}

/**
 * Take the publish lock of `prefix` in `store`, or throw {@link PublishBusyError} at once when another
 * publish holds it.
 * @example
 * const lock = await acquirePublishLock(store, 'catalogue/', 's3://bucket/catalogue/');
 * try { await lock.ensure(); await writePointer(); } finally { await lock.release(); }
 */
export async function acquirePublishLock(
  store: WritableObjectStore,
  prefix: string,
  target: string,
  options: LockOptions = {},
): Promise<PublishLock> {
  const now = options.now ?? (() => new Date());
  const claim: LockClaim = {
    store,
    key: `${prefix}${LOCK_KEY}`,
    target,
    options: { ...options, now },
    holder: newHolder(now()),
  };
  const etag = await claimLock(claim);
  active.add(claim.holder.owner);
  return heldLock(claim, etag);
}

/** One publish's claim on a lock: where, its holder record, and the options (with the clock). */
interface LockClaim {
  store: WritableObjectStore;
  key: string;
  /** The target, as messages name it. */
  target: string;
  /** The caller's options, with the clock settled. */
  options: LockOptions & { now: () => Date };
  holder: LockHolder;
}

/** The holder record of a publish starting at `started`: this process on this machine, a new owner id. */
function newHolder(started: Date): LockHolder {
  return {
    owner: randomUUID(),
    host: hostname(),
    machine: MACHINE,
    pid: process.pid,
    process: PROCESS,
    started_at: started.toISOString(),
    renewed_at: started.toISOString(),
    expires_at: new Date(started.getTime() + LEASE_MS).toISOString(),
  };
}

/** The holder record renewed at `at` (its lease runs {@link LEASE_MS} from then), as the lock's bytes. */
function holderBytes(holder: LockHolder, at: Date): Buffer {
  holder.renewed_at = at.toISOString();
  holder.expires_at = new Date(at.getTime() + LEASE_MS).toISOString();
  return Buffer.from(`${JSON.stringify(holder, null, 1)}\n`);
}

const JSON_TYPE = { contentType: 'application/json' };

/**
 * Write the lock (when there is none) or take over a stale one; the etag written. PublishBusyError when a live
 * publish holds it, or when every try lost to another publisher's write.
 */
async function claimLock({ store, key, target, options, holder }: LockClaim): Promise<string> {
  const { now } = options;
  let lastHolder: LockHolder | undefined;
  // A few tries: each read-then-write can lose to another publisher's write in between.
  for (let attempt = 0; attempt < 5; attempt++) {
    const read = await store.get(key);
    if (!read.ok) {
      const created = await store.putIf(key, holderBytes(holder, now()), { ifNoneMatch: '*' }, JSON_TYPE);
      if (created.ok) return created.etag;
      continue;
    }
    lastHolder = parseHolder(read.body);
    const stale = staleness(lastHolder, now());
    if (stale === undefined) throw new PublishBusyError(target, lastHolder);
    const taken = await store.putIf(key, holderBytes(holder, now()), { ifMatch: read.etag }, JSON_TYPE);
    if (taken.ok) {
      const who = lastHolder ? `${lastHolder.host} pid ${lastHolder.pid}` : 'an unknown publisher';
      const why = lastHolder?.broken_by ? `it was broken by ${lastHolder.broken_by}` : stale;
      options.warn?.(`took over the publish lock of ${target} from ${who}: ${why}`);
      return taken.etag;
    }
  }
  throw new PublishBusyError(target, lastHolder);
}

/** The lock as held from `etag` on: renewed every {@link RENEW_EVERY_MS} and before a guarded step when due. */
function heldLock({ store, key, target, options, holder }: LockClaim, etag: string): PublishLock {
  const { now } = options;
  let renewedAt = now().getTime();
  let lost = false;
  let renewing: Promise<void> | undefined;
  const renew = (): Promise<void> => {
    renewing ??= (async () => {
      try {
        const at = now();
        const renewed = await store.putIf(key, holderBytes(holder, at), { ifMatch: etag }, JSON_TYPE);
        if (renewed.ok) {
          etag = renewed.etag;
          renewedAt = at.getTime();
        } else lost = true;
      } finally {
        renewing = undefined;
      }
    })();
    return renewing;
  };
  // A renewal that fails for a passing fault is tried again at the next tick or guarded step.
  const timer = setInterval(() => renew().catch(() => {}), RENEW_EVERY_MS);
  timer.unref();
  // The lock as it is now: another etag (not from a renewal of ours under way) or no lock means it was lost.
  let watching = false;
  const watch = async () => {
    if (lost || renewing || watching) return;
    watching = true;
    const expected = etag;
    try {
      const read = await store.get(key);
      if (!renewing && etag === expected && (!read.ok || read.etag !== expected)) lost = true;
    } catch {
      // A passing fault: the next watch or renewal tells.
    } finally {
      watching = false;
    }
  };
  const watcher = setInterval(watch, options.watchEveryMs ?? WATCH_EVERY_MS);
  watcher.unref();

  return {
    holder,
    async ensure() {
      if (!lost && now().getTime() - renewedAt > SAFE_MS) await renew();
      if (lost) throw new PublishLockLostError(target);
    },
    check() {
      if (lost) throw new PublishLockLostError(target);
    },
    async release() {
      clearInterval(timer);
      clearInterval(watcher);
      active.delete(holder.owner);
      try {
        await renewing;
        if (lost) return;
        const read = await store.get(key);
        if (read.ok && read.etag === etag) await store.delete([key]);
      } catch (error) {
        options.warn?.(
          `the publish lock ${key} could not be released (${errorMessage(error)}); the next publish takes it over`,
        );
      }
    },
  };
}

/**
 * What holds a target's publish lock, as `npm run catalogue -- unlock` judges it:
 * - `free`: no lock;
 * - `invalid`: a lock no publish can have written, so nothing protects it — unreadable, a lease impossibly
 *   far ahead (a publish sets it {@link LEASE_MS} past each renewal), a renewal in the future, or a directory
 *   where the lock object belongs;
 * - `stale`: a publish that is gone (its lease has run out, or its process on this machine ended): the next
 *   publish takes it over by itself;
 * - `live`: a publish that may be running.
 */
export type LockState =
  | { state: 'free' }
  | { state: 'invalid'; reason: string; holder?: LockHolder; etag?: string; directory?: string }
  | { state: 'stale'; reason: string; holder: LockHolder; etag: string }
  | { state: 'live'; holder: LockHolder; etag: string };

/**
 * Why the lock `holder` describes cannot have been written by a publish, or undefined when it could.
 * @example impossibility({ ...holder, expires_at: '2099-01-01T00:00:00Z' }, new Date('2026-01-01')) // → 'its lease runs to 2099-…'
 */
export function impossibility(holder: LockHolder | undefined, now: Date): string | undefined {
  if (!holder) return 'it is unreadable (not a lock a publish writes)';
  const expires = Date.parse(holder.expires_at);
  const renewed = Date.parse(holder.renewed_at);
  if (Number.isNaN(expires)) return `its lease end "${holder.expires_at}" is not a time`;
  if (expires > now.getTime() + LEASE_MS + CLOCK_SKEW_MS) {
    return (
      `its lease runs to ${holder.expires_at}, further ahead than any publish sets it ` +
      `(${LEASE_MS / 1000} s past its last renewal)`
    );
  }
  if (!Number.isNaN(renewed) && renewed > now.getTime() + CLOCK_SKEW_MS) {
    return `it says it was renewed at ${holder.renewed_at}, in the future`;
  }
  return undefined;
}

/**
 * Read and judge the publish lock of `prefix` ({@link LockState}). `directoryAt` names the file-system path
 * of the lock's key when the target is a directory (a directory standing there is found that way).
 */
export async function inspectPublishLock(
  store: WritableObjectStore,
  prefix: string,
  options: { now?: () => Date; directoryAt?: (key: string) => Promise<boolean> } = {},
): Promise<LockState> {
  const now = (options.now ?? (() => new Date()))();
  const key = `${prefix}${LOCK_KEY}`;
  const read = await store.get(key);
  if (!read.ok) {
    if (await options.directoryAt?.(key)) {
      return { state: 'invalid', reason: 'it is a directory, not a lock a publish writes', directory: key };
    }
    return { state: 'free' };
  }
  const holder = parseHolder(read.body);
  const impossible = impossibility(holder, now);
  if (impossible !== undefined) {
    return { state: 'invalid', reason: impossible, ...(holder && { holder }), etag: read.etag };
  }
  const stale = staleness(holder, now);
  return stale !== undefined
    ? { state: 'stale', reason: stale, holder: holder!, etag: read.etag }
    : { state: 'live', holder: holder!, etag: read.etag };
}

/**
 * Break the lock judged as `lock` (from {@link inspectPublishLock}): replace it, only while it is still the
 * one judged (a conditional write), by a lock whose lease ran out long ago, naming who broke it. The next
 * publish takes that over at once; a publish still holding the broken lock finds it lost at its next guarded
 * step and stops (PublishLockLostError). Never deletes: an unconditional delete could remove a lock a
 * publish took in between. A directory standing where the lock belongs is for the caller to remove.
 * @returns false when the lock changed since it was judged (judge it again)
 */
export async function breakPublishLock(
  store: WritableObjectStore,
  prefix: string,
  lock: Extract<LockState, { etag?: string }>,
  options: { by: string; now?: () => Date },
): Promise<boolean> {
  if (lock.etag === undefined) return false;
  const now = (options.now ?? (() => new Date()))().getTime();
  const long = new Date(now - 2 * (LEASE_MS + CLOCK_SKEW_MS)).toISOString();
  const broken = {
    owner: randomUUID(),
    host: hostname(),
    machine: MACHINE,
    pid: process.pid,
    process: PROCESS,
    started_at: long,
    renewed_at: long,
    expires_at: new Date(now - LEASE_MS - 2 * CLOCK_SKEW_MS).toISOString(),
    broken_by: options.by,
    broken_at: new Date(now).toISOString(),
  };
  const written = await store.putIf(
    `${prefix}${LOCK_KEY}`,
    Buffer.from(`${JSON.stringify(broken, null, 1)}\n`),
    { ifMatch: lock.etag },
    { contentType: 'application/json' },
  );
  return written.ok;
}
