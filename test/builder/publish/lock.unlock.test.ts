/**
 * Breaking a publish lock that can no longer be valid (builder/publish/lock.ts inspectPublishLock and
 * breakPublishLock): how a lock is judged, and that breaking it is a conditional write a publish then takes
 * over — never a delete that could remove a lock taken in between.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  acquirePublishLock,
  breakPublishLock,
  impossibility,
  inspectPublishLock,
  LOCK_KEY,
  type LockHolder,
} from '../../../builder/publish/lock.js';
import { MemoryObjectStore } from '../../../store/objects/memory.js';
import { removeTemporaryDirectories } from '../../helpers/builder.js';

afterAll(removeTemporaryDirectories);

const NOW = new Date('2026-06-01T12:00:00Z');
const elsewhere = (fields: Partial<LockHolder> = {}): LockHolder => ({
  owner: 'o-1',
  host: 'ci-runner-7',
  machine: 'ci-runner-7/boot',
  pid: 4242,
  process: 'p-1',
  started_at: '2026-06-01T11:59:30.000Z',
  renewed_at: '2026-06-01T11:59:50.000Z',
  expires_at: '2026-06-01T12:00:50.000Z',
  ...fields,
});

async function plant(store: MemoryObjectStore, body: string): Promise<void> {
  await store.put(LOCK_KEY, Buffer.from(body));
}

describe('judging a lock', () => {
  it('a lease impossibly far ahead, a renewal in the future, an unreadable lock: invalid, with why', () => {
    expect(impossibility(elsewhere({ expires_at: '2099-01-01T00:01:00.000Z' }), NOW)).toBe(
      'its lease runs to 2099-01-01T00:01:00.000Z, further ahead than any publish sets it (60 s past its last renewal)',
    );
    expect(
      impossibility(
        elsewhere({ renewed_at: '2026-06-01T12:05:00.000Z', expires_at: '2026-06-01T12:01:00.000Z' }),
        NOW,
      ),
    ).toBe('it says it was renewed at 2026-06-01T12:05:00.000Z, in the future');
    expect(impossibility(undefined, NOW)).toBe('it is unreadable (not a lock a publish writes)');
    expect(impossibility(elsewhere(), NOW)).toBeUndefined();
  });

  it('free, invalid, live and stale, as a publish would see them', async () => {
    const store = new MemoryObjectStore();
    const now = () => NOW;
    expect(await inspectPublishLock(store, '', { now })).toEqual({ state: 'free' });
    await plant(store, JSON.stringify(elsewhere({ expires_at: '2099-01-01T00:01:00.000Z' })));
    expect(await inspectPublishLock(store, '', { now })).toMatchObject({ state: 'invalid' });
    await plant(store, '{"owner": ');
    expect(await inspectPublishLock(store, '', { now })).toMatchObject({
      state: 'invalid',
      reason: 'it is unreadable (not a lock a publish writes)',
    });
    await plant(store, JSON.stringify(elsewhere()));
    expect(await inspectPublishLock(store, '', { now })).toMatchObject({
      state: 'live',
      holder: { host: 'ci-runner-7' },
    });
    expect(
      await inspectPublishLock(store, '', { now: () => new Date('2026-06-01T12:02:00Z') }),
    ).toMatchObject({
      state: 'stale',
      reason: 'its lease has run out',
    });
  });
});

describe('breaking a lock', () => {
  it('replaces it by an expired lock naming who broke it, which the next publish takes over at once', async () => {
    const store = new MemoryObjectStore();
    await plant(store, JSON.stringify(elsewhere({ expires_at: '2099-01-01T00:01:00.000Z' })));
    const judged = await inspectPublishLock(store, '');

    expect(judged.state).toBe('invalid');
    expect(
      await breakPublishLock(store, '', judged as Extract<typeof judged, { etag?: string }>, {
        by: 'alice@laptop',
      }),
    ).toBe(true);
    const broken = await store.get(LOCK_KEY);
    expect(broken.ok && JSON.parse(broken.body.toString())).toMatchObject({ broken_by: 'alice@laptop' });
    expect(await inspectPublishLock(store, '')).toMatchObject({ state: 'stale' });

    const warnings: string[] = [];
    const lock = await acquirePublishLock(store, '', 'the target', { warn: (m) => warnings.push(m) });
    expect(warnings).toEqual([
      expect.stringMatching(
        /^took over the publish lock of the target from .+: it was broken by alice@laptop$/,
      ),
    ]);
    await lock.release();
  });

  it('does nothing when the lock changed since it was judged (a publish took it meanwhile)', async () => {
    const store = new MemoryObjectStore();
    await plant(store, '{}');
    const judged = await inspectPublishLock(store, '');
    const lock = await acquirePublishLock(store, '', 'the target'); // takes over the unreadable lock

    expect(
      await breakPublishLock(store, '', judged as Extract<typeof judged, { etag?: string }>, {
        by: 'alice@laptop',
      }),
    ).toBe(false);
    expect(await inspectPublishLock(store, '')).toMatchObject({
      state: 'live',
      holder: { owner: lock.holder.owner },
    });
    await lock.release();
  });
});
