/**
 * The publish lock (builder/publish/lock.ts) and what a publish does with it: one holder at a time, a
 * second publish refused at once naming the first, stale locks taken over (a process gone, a publish of this
 * process that ended, a lease run out, an unreadable lock), a lock taken over from a stalled holder stopping
 * that holder before its next step, a publish whose lock was broken stopping its uploads within seconds, and
 * the pointer written only over the pointer the publish read.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  acquirePublishLock,
  breakPublishLock,
  CLOCK_SKEW_MS,
  inspectPublishLock,
  LEASE_MS,
  LOCK_KEY,
  type LockHolder,
  PublishBusyError,
  PublishLockLostError,
  WATCH_EVERY_MS,
} from '../../../builder/publish/lock.js';
import { publishCatalogue, takePublishLock } from '../../../builder/publish/publish.js';
import { readCurrentVersion } from '../../../builder/publish/read.js';
import { PointerMovedError } from '../../../builder/publish/write.js';
import { errorMessage } from '../../../store/errors.js';
import { POINTER_KEY } from '../../../store/layout.js';
import { DirectoryObjectStore } from '../../../store/objects/directory.js';
import type { GetOptions, GetOutcome, WritableObjectStore } from '../../../store/objects/interface.js';
import { MemoryObjectStore } from '../../../store/objects/memory.js';
import { removeTemporaryDirectories, smallSnapshot, temporaryDirectory } from '../../helpers/builder.js';

/** A store whose object uploads take a while (a slow link), and which notes when each one started. */
class SlowUploads extends MemoryObjectStore {
  readonly started: number[] = [];
  override async put(...args: Parameters<MemoryObjectStore['put']>) {
    if (args[0].startsWith('o/')) {
      this.started.push(performance.now());
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return super.put(...args);
  }
}

/** Wait for `condition`, checking every 20 ms, for at most `ms`. */
async function until(condition: () => boolean, ms: number): Promise<void> {
  const giveUp = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > giveUp) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A store whose next conditional read of the pointer says "not modified", although another publish moved it. */
class PointerMovesAfterCheck extends MemoryObjectStore {
  hideNextMove = false;

  override async get(key: string, options?: GetOptions): Promise<GetOutcome> {
    if (this.hideNextMove && key === POINTER_KEY && options?.ifNoneMatch !== undefined) {
      this.hideNextMove = false;
      return { ok: false, reason: 'not-modified' };
    }
    return super.get(key, options);
  }
}

afterAll(removeTemporaryDirectories);

const stores: [string, () => WritableObjectStore][] = [
  ['memory', () => new MemoryObjectStore()],
  ['directory', () => new DirectoryObjectStore(temporaryDirectory('lock'))],
];

async function holderIn(store: WritableObjectStore, prefix = ''): Promise<LockHolder | undefined> {
  const read = await store.get(`${prefix}${LOCK_KEY}`);
  return read.ok ? (JSON.parse(read.body.toString()) as LockHolder) : undefined;
}

/** Replace the lock object by hand (another machine, a dead process…), as another publisher would. */
async function plant(store: WritableObjectStore, holder: Partial<LockHolder>, prefix = ''): Promise<void> {
  await store.put(`${prefix}${LOCK_KEY}`, Buffer.from(JSON.stringify(holder)));
}

describe.each(stores)('the publish lock (%s store)', (_name, create) => {
  it('one holder at a time: a second publisher is refused at once, naming the holder; released, it is free', async () => {
    const store = create();
    const first = await acquirePublishLock(store, 'p/', 'the target');
    const refused = await acquirePublishLock(store, 'p/', 'the target').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PublishBusyError);
    expect((refused as PublishBusyError).holder).toMatchObject({
      owner: first.holder.owner,
      pid: process.pid,
    });
    expect(errorMessage(refused)).toMatch(
      /^another publish holds the target: .* pid \d+, started .*lease runs to/,
    );
    await first.release();
    expect(await holderIn(store, 'p/')).toBeUndefined();
    const second = await acquirePublishLock(store, 'p/', 'the target');
    await second.release();
  });

  it("takes over a lock whose holder is gone: this machine's dead process, or a publish of this process that ended", async () => {
    const store = create();
    const probe = await acquirePublishLock(store, '', 'the target');
    const machine = probe.holder.machine;
    await probe.release();
    const warnings: string[] = [];
    await plant(store, { ...probe.holder, owner: 'gone', process: 'another', pid: 2 ** 30, machine });
    const taken = await acquirePublishLock(store, '', 'the target', { warn: (m) => warnings.push(m) });
    expect(warnings.at(-1)).toMatch(/its process \(pid \d+\) is gone/);
    await taken.release();
    // A publish of this very process that ended without releasing (its store failed at the end).
    await plant(store, { ...taken.holder, owner: 'ended' });
    const again = await acquirePublishLock(store, '', 'the target', { warn: (m) => warnings.push(m) });
    expect(warnings.at(-1)).toMatch(/its publish has ended/);
    await again.release();
  });

  it("another machine's lock holds until its lease and the clock skew allowance have run out", async () => {
    const store = create();
    const now = new Date('2026-11-24T12:00:00Z');
    const foreign: Partial<LockHolder> = {
      owner: 'elsewhere',
      host: 'builder-2',
      machine: 'builder-2/boot',
      pid: 1,
      process: 'p',
      started_at: now.toISOString(),
      renewed_at: now.toISOString(),
      expires_at: new Date(now.getTime() + LEASE_MS).toISOString(),
    };
    await plant(store, foreign);
    const at = (ms: number) => ({ now: () => new Date(now.getTime() + ms) });
    await expect(acquirePublishLock(store, '', 't', at(LEASE_MS + CLOCK_SKEW_MS))).rejects.toBeInstanceOf(
      PublishBusyError,
    );
    const warnings: string[] = [];
    const taken = await acquirePublishLock(store, '', 't', {
      ...at(LEASE_MS + CLOCK_SKEW_MS + 1),
      warn: (m) => warnings.push(m),
    });
    expect(warnings).toEqual([expect.stringMatching(/from builder-2 pid 1: its lease has run out/)]);
    await taken.release();
    // An unreadable lock (damaged, or not ours to read) is taken over too: it protects nothing anyone can tell.
    await store.put(LOCK_KEY, Buffer.from('{"owner":'));
    await (await acquirePublishLock(store, '', 't')).release();
  });

  it('a holder whose lock was taken over stops before its next guarded step', async () => {
    const store = create();
    let clock = Date.parse('2026-11-24T12:00:00Z');
    const lock = await acquirePublishLock(store, '', 't', { now: () => new Date(clock) });
    await lock.ensure(); // renewed a moment ago: nothing to do
    // Stalled past its lease: another publisher took the lock over (a conditional write of its own).
    const read = await store.get(LOCK_KEY);
    expect(
      await store.putIf(LOCK_KEY, Buffer.from('{"owner":"other"}'), { ifMatch: read.ok ? read.etag : '' }),
    ).toMatchObject({ ok: true });
    clock += 11_000;
    await expect(lock.ensure()).rejects.toBeInstanceOf(PublishLockLostError);
    await lock.release();
    // Its release leaves the new holder's lock alone.
    expect((await store.get(LOCK_KEY)).ok).toBe(true);
  });
});

describe('a publish and the lock', () => {
  it('a publish while another holds the target is refused before writing anything; a dry run is not', async () => {
    const store = new MemoryObjectStore();
    const held = await takePublishLock(store, '');
    await expect(publishCatalogue({ store, snapshot: smallSnapshot() })).rejects.toBeInstanceOf(
      PublishBusyError,
    );
    expect(store.size).toBe(1); // the lock itself
    const dry = await publishCatalogue({ store, snapshot: smallSnapshot(), dryRun: true });
    expect(dry.objects.added).toBeGreaterThan(0);
    await held.release();
    await publishCatalogue({ store, snapshot: smallSnapshot() });
    expect((await store.get(LOCK_KEY)).ok).toBe(false);
  });

  it('a publish whose lock was broken (unlock --force) stops uploading within seconds, not at its next step', async () => {
    const store = new SlowUploads();
    // About 890 objects at 2 × 20 ms: some 9 s of uploads, if nothing stopped it.
    const publishing = publishCatalogue({ store, snapshot: smallSnapshot(204), concurrency: 2 });
    const failed = publishing.then(
      () => undefined,
      (error: unknown) => error,
    );
    await until(() => store.started.length >= 20, 10_000);
    // What `npm run catalogue -- unlock --force` does: judge the lock, then replace it conditionally.
    const lock = await inspectPublishLock(store, '');
    if (lock.state !== 'live') throw new Error(`the publish's lock is ${lock.state}`);
    expect(await breakPublishLock(store, '', lock, { by: 'ops@desk' })).toBe(true);
    const brokenAt = performance.now();

    expect(await failed).toBeInstanceOf(PublishLockLostError);
    const stoppedAfter = performance.now() - brokenAt;
    const lastStart = Math.max(...store.started) - brokenAt;
    // It learns within one watch of its lock (WATCH_EVERY_MS), then starts no upload more.
    expect(lastStart).toBeLessThan(WATCH_EVERY_MS + 1_000);
    expect(stoppedAfter).toBeLessThan(WATCH_EVERY_MS + 2_000);
    expect(store.started.length).toBeLessThan(600);
    expect((await store.get(POINTER_KEY)).ok, 'no pointer: nothing went live').toBe(false);
    const left = await store.get(LOCK_KEY);
    expect(left.ok && JSON.parse(left.body.toString()).broken_by, 'the broken lock is left as it was').toBe(
      'ops@desk',
    );
  });

  it('the pointer is written only over the pointer the publish read: else PointerMovedError, and it stays', async () => {
    const store = new PointerMovesAfterCheck();
    await publishCatalogue({ store, snapshot: smallSnapshot(10) });
    const stale = await readCurrentVersion(store);
    // Another publish (as if the lock had been lost) moves the pointer, and the publish's re-check under the
    // lock is answered as if it came just before that move.
    await publishCatalogue({ store, snapshot: smallSnapshot(12) });
    const moved = await store.get(POINTER_KEY);
    store.hideNextMove = true;
    await expect(
      publishCatalogue({ store, snapshot: smallSnapshot(14), current: stale }),
    ).rejects.toBeInstanceOf(PointerMovedError);
    expect(store.hideNextMove, 'the re-check was made, and hidden').toBe(false);
    const after = await store.get(POINTER_KEY);
    expect(after.ok && moved.ok && after.body.equals(moved.body)).toBe(true);
  });
});
