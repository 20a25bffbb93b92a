import { describe, expect, it } from 'vitest';
import { PointerCache, parseIndex } from '../../proxy/catalogue/pointer.js';
import { FORMAT_VERSION } from '../../proxy/format.js';
import type { GetOptions, GetResult } from '../../proxy/objects/interface.js';

const index = (version: string) =>
  Buffer.from(JSON.stringify({ format: FORMAT_VERSION, version, lists: {}, modules: {}, manufacturers: {} }));

/** A pointer object whose bytes the test changes; records every read. */
function pointerStore(initial: Buffer | undefined) {
  const state = { body: initial, etag: '"1"', reads: [] as GetOptions[] };
  const read = async (options: GetOptions): Promise<GetResult> => {
    state.reads.push(options);
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (!state.body) return { status: 'not-found' };
    if (options.ifNoneMatch === state.etag) return { status: 'not-modified' };
    return { status: 'ok', body: state.body, etag: state.etag };
  };
  return { state, read };
}

describe('PointerCache', () => {
  it('reads once per TTL, conditionally after the first read', async () => {
    const { state, read } = pointerStore(index('v1'));
    let clock = 0;
    const pointer = new PointerCache({ read, ttlMs: 1000, now: () => clock });
    expect(await pointer.current()).toMatchObject({ ok: true, index: { version: 'v1' } });
    clock = 999;
    await pointer.current();
    expect(state.reads).toHaveLength(1);
    clock = 1000;
    expect(await pointer.current()).toMatchObject({ ok: true, index: { version: 'v1' } });
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
    expect(await pointer.current()).toMatchObject({ index: { version: 'v1' } });
    clock = 20;
    expect(await pointer.current()).toMatchObject({ index: { version: 'v2' } });
  });

  it('a half-written pointer (a store without atomic overwrites) keeps the held version and is read again', async () => {
    const { state, read } = pointerStore(index('v1'));
    let clock = 0;
    const pointer = new PointerCache({ read, ttlMs: 10, now: () => clock });
    await pointer.current();
    state.body = index('v2').subarray(0, 20);
    state.etag = '"torn"';
    clock = 20;
    expect(await pointer.current()).toMatchObject({ ok: true, index: { version: 'v1' } });
    state.body = index('v2');
    state.etag = '"2"';
    clock = 21;
    expect(await pointer.current()).toMatchObject({ ok: true, index: { version: 'v2' } });
  });

  it('concurrent requests share one refresh', async () => {
    const { state, read } = pointerStore(index('v1'));
    const pointer = new PointerCache({ read, ttlMs: 1000, now: () => 0 });
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => pointer.current()));
    expect(state.reads).toHaveLength(1);
    expect(new Set(outcomes.map((o) => o.ok && o.index)).size).toBe(1);
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
    const read = async (): Promise<GetResult> => {
      if (fail) throw new Error('down');
      return { status: 'ok', body: index('v1'), etag: '"1"' };
    };
    const pointer = new PointerCache({ read, ttlMs: 1000, now: () => 0 });
    await expect(Promise.all([pointer.current(), pointer.current()])).rejects.toThrow('down');
    fail = false;
    await expect(pointer.current()).resolves.toMatchObject({ ok: true });
  });
});

describe('parseIndex', () => {
  it.each([
    ['not json', '{'],
    [
      'another format',
      JSON.stringify({ format: 99, version: 'v', lists: {}, modules: {}, manufacturers: {} }),
    ],
    ['missing maps', JSON.stringify({ format: FORMAT_VERSION, version: 'v' })],
    [
      'lists as array',
      JSON.stringify({ format: FORMAT_VERSION, version: 'v', lists: [], modules: {}, manufacturers: {} }),
    ],
    ['null', 'null'],
  ])('refuses %s', (_, text) => {
    expect(parseIndex(Buffer.from(text))).toBeUndefined();
  });

  it('accepts an index', () => {
    expect(parseIndex(index('v9'))).toMatchObject({ version: 'v9' });
  });
});
