import { describe, expect, it } from 'vitest';
import { PointerCache, STALE_FACTOR } from '../../../proxy/catalogue/pointer.js';
import { FORMAT_VERSION, objectIdFor } from '../../../store/layout.js';
import type { GetOptions, GetOutcome } from '../../../store/objects/interface.js';
import { encodePointer, parsePointer } from '../../../store/pointer.js';

/** A pointer naming one shard per label character; `versionOf` gives its version. */
const index = (label: string) => encodePointer([objectIdFor(Buffer.from(label))]).bytes;
const versionOf = (label: string) => parsePointer(index(label))!.version;

/** A pointer object whose bytes the test changes; records every read. */
function pointerStore(initial: Buffer | undefined) {
  const state = { body: initial, etag: '"1"', reads: [] as GetOptions[] };
  const read = async (options: GetOptions): Promise<GetOutcome> => {
    state.reads.push(options);
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (!state.body) return { ok: false, reason: 'not-found' };
    if (options.ifNoneMatch === state.etag) return { ok: false, reason: 'not-modified' };
    return { ok: true, body: state.body, etag: state.etag };
  };
  return { state, read };
}

describe('PointerCache', () => {
  it('reads once per TTL, conditionally after the first read', async () => {
    const { state, read } = pointerStore(index('v1'));
    let clock = 0;
    const pointer = new PointerCache({ read, ttlMs: 1000, now: () => clock });
    expect(await pointer.current()).toMatchObject({ ok: true, pointer: { version: versionOf('v1') } });
    clock = 999;
    await pointer.current();
    expect(state.reads).toHaveLength(1);
    clock = 1000;
    expect(await pointer.current()).toMatchObject({ ok: true, pointer: { version: versionOf('v1') } });
    expect(state.reads).toEqual([{}, { ifNoneMatch: '"1"' }]);
  });

  it('picks up a new version after the TTL', async () => {
    const { state, read } = pointerStore(index('v1'));
    let clock = 0;
    const pointer = new PointerCache({ read, ttlMs: 10, now: () => clock });
    await pointer.current();
    state.body = index('v2');
    state.etag = '"2"';
    clock = 5;
    expect(await pointer.current()).toMatchObject({ pointer: { version: versionOf('v1') } });
    clock = 20;
    expect(await pointer.current()).toMatchObject({ pointer: { version: versionOf('v2') } });
  });

  it('a half-written pointer (a store without atomic overwrites) keeps the held version and is read again', async () => {
    const { state, read } = pointerStore(index('v1'));
    let clock = 0;
    const pointer = new PointerCache({ read, ttlMs: 10, now: () => clock });
    await pointer.current();
    state.body = index('v2').subarray(0, 20);
    state.etag = '"torn"';
    clock = 20;
    expect(await pointer.current()).toMatchObject({ ok: true, pointer: { version: versionOf('v1') } });
    state.body = index('v2');
    state.etag = '"2"';
    clock = 21;
    expect(await pointer.current()).toMatchObject({ ok: true, pointer: { version: versionOf('v2') } });
  });

  it('concurrent requests share one refresh', async () => {
    const { state, read } = pointerStore(index('v1'));
    const pointer = new PointerCache({ read, ttlMs: 1000, now: () => 0 });
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => pointer.current()));
    expect(state.reads).toHaveLength(1);
    expect(new Set(outcomes.map((o) => o.ok && o.pointer)).size).toBe(1);
  });

  it('no pointer: not ok, and checked again on the next request', async () => {
    const { state, read } = pointerStore(undefined);
    const pointer = new PointerCache({ read, ttlMs: 1000, now: () => 0 });
    expect(await pointer.current()).toMatchObject({ ok: false });
    state.body = index('v1');
    expect(await pointer.current()).toMatchObject({ ok: true });
  });

  it('a failing read rejects every waiter and is retried next time', async () => {
    let fail = true;
    const read = async (): Promise<GetOutcome> => {
      if (fail) throw new Error('down');
      return { ok: true, body: index('v1'), etag: '"1"' };
    };
    const pointer = new PointerCache({ read, ttlMs: 1000, now: () => 0 });
    await expect(Promise.all([pointer.current(), pointer.current()])).rejects.toThrow('down');
    fail = false;
    await expect(pointer.current()).resolves.toMatchObject({ ok: true });
  });
});

describe('PointerCache through failed re-checks', () => {
  it(`keeps serving the last known pointer until it is ${STALE_FACTOR} TTLs old, then fails`, async () => {
    const { state, read } = pointerStore(index('v1'));
    let clock = 0;
    let fail: Error | undefined;
    const failing = (options: GetOptions) => (fail ? Promise.reject(fail) : read(options));
    const pointer = new PointerCache({ read: failing, ttlMs: 100, now: () => clock });
    await pointer.current();
    fail = new Error('SlowDown');
    clock = 150;
    expect(await pointer.current()).toMatchObject({ ok: true, pointer: { version: versionOf('v1') } });
    // Not asked again within a TTL of the failure: the held pointer answers at once.
    const reads = state.reads.length;
    clock = 249;
    expect(pointer.fresh()).toMatchObject({ version: versionOf('v1') });
    expect(state.reads).toHaveLength(reads);
    clock = STALE_FACTOR * 100 - 1;
    expect(pointer.fresh()).toBeUndefined();
    expect(await pointer.current()).toMatchObject({ ok: true, pointer: { version: versionOf('v1') } });
    clock = STALE_FACTOR * 100;
    await expect(pointer.current()).rejects.toThrow('SlowDown');
    // Healthy again: a conditional read confirms it (304), and the bound counts from there.
    fail = undefined;
    expect(await pointer.current()).toMatchObject({ ok: true, pointer: { version: versionOf('v1') } });
    expect(state.reads.at(-1)).toEqual({ ifNoneMatch: '"1"' });
  });

  it('a damaged pointer is read once more, whole; damaged twice it is a fault, unless a pointer is held', async () => {
    const damaged = Buffer.from(index('v2'));
    const at = damaged.length - 5;
    damaged[at] = damaged[at]! ^ 0x01; // one bit: still JSON, but its version no longer checks out
    const { state, read } = pointerStore(damaged);
    state.etag = '"damaged"';
    const cold = new PointerCache({ read, ttlMs: 100, now: () => 0 });
    await expect(cold.current()).rejects.toThrow(/integrity/);
    expect(state.reads).toEqual([{}, {}]);

    state.body = index('v1');
    state.etag = '"1"';
    let clock = 0;
    const warm = new PointerCache({ read, ttlMs: 100, now: () => clock });
    await warm.current();
    state.body = damaged;
    state.etag = '"damaged"';
    clock = 200;
    expect(await warm.current()).toMatchObject({ ok: true, pointer: { version: versionOf('v1') } });
  });

  it('a pointer of a format this proxy does not read is configuration_error cold, and keeps what is held warm', async () => {
    const foreign = Buffer.from(
      JSON.stringify({ format: 99, version: 'A'.repeat(22), shards: ['A'.repeat(22)] }),
    );
    const { state, read } = pointerStore(foreign);
    expect(await new PointerCache({ read, ttlMs: 100, now: () => 0 }).current()).toMatchObject({ ok: false });
    state.body = index('v1');
    let clock = 0;
    const warm = new PointerCache({ read, ttlMs: 100, now: () => clock });
    await warm.current();
    state.body = foreign;
    state.etag = '"99"';
    clock = 200;
    expect(await warm.current()).toMatchObject({ ok: true, pointer: { version: versionOf('v1') } });
  });
});

describe('parsePointer', () => {
  const shard = 'A'.repeat(22);
  it.each([
    ['not json', '{'],
    ['another format', JSON.stringify({ format: 1, version: shard, shards: [shard] })],
    [
      'the format-1 index',
      JSON.stringify({ format: 1, version: shard, lists: {}, modules: {}, manufacturers: {} }),
    ],
    ['no shards', JSON.stringify({ format: FORMAT_VERSION, version: shard, shards: [] })],
    [
      'three shards (not a power of two)',
      JSON.stringify({ format: FORMAT_VERSION, version: shard, shards: [shard, shard, shard] }),
    ],
    ['a malformed shard id', JSON.stringify({ format: FORMAT_VERSION, version: shard, shards: ['x'] })],
    ['a malformed version', JSON.stringify({ format: FORMAT_VERSION, version: 'v', shards: [shard] })],
    ['null', 'null'],
  ])('refuses %s', (_, text) => {
    expect(parsePointer(Buffer.from(text))).toBeUndefined();
  });

  it('accepts a pointer, whose version is the hash of the rest', () => {
    expect(parsePointer(index('v9'))).toMatchObject({
      version: versionOf('v9'),
      shards: [objectIdFor(Buffer.from('v9'))],
    });
    expect(versionOf('v9')).not.toBe(versionOf('v8'));
  });
});
