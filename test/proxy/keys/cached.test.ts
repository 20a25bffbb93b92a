import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../proxy/config.js';
import { CachedKeyStore } from '../../../proxy/keys/cached.js';
import type { KeyStore } from '../../../proxy/keys/interface.js';
import { DependencyError } from '../../../store/errors.js';
import type { KeyRecord } from '../../../tables/keys.js';
import { KEY_CACHE_DEFAULTS } from '../../../tables/keys.js';
import { keyRecord } from '../../helpers/dynamo.js';

/** An in-memory KeyStore that counts lookups and can be told to fail or to hold its answer. */
class FakeKeyStore implements KeyStore {
  readonly records = new Map<string, KeyRecord>();
  calls = 0;
  failNext = 0;
  gate: Promise<void> | undefined;

  async lookup(keyHash: string, options: { signal?: AbortSignal } = {}) {
    this.calls++;
    if (this.gate) await this.gate;
    options.signal?.throwIfAborted();
    if (this.failNext > 0) {
      this.failNext--;
      throw new DependencyError('keys', 'store down');
    }
    const record = this.records.get(keyHash);
    return record ? { ...record } : undefined;
  }
}

function setup(
  options: { ttlMs?: number; maxEntries?: number; negativeTtlMs?: number; negativeMaxEntries?: number } = {},
) {
  const inner = new FakeKeyStore();
  const clock = { now: 1_000_000 };
  const cache = new CachedKeyStore(inner, {
    ttlMs: options.ttlMs ?? 30_000,
    maxEntries: options.maxEntries ?? 100,
    negativeTtlMs: options.negativeTtlMs,
    negativeMaxEntries: options.negativeMaxEntries,
    now: () => clock.now,
  });
  const add = (overrides: Partial<KeyRecord> = {}) => {
    const record = keyRecord(overrides);
    inner.records.set(record.keyHash, record);
    return record;
  };
  return { inner, clock, cache, add };
}

describe('CachedKeyStore', () => {
  describe('hits and misses', () => {
    it('reads the store once, then answers from memory', async () => {
      const { inner, cache, add } = setup();
      const record = add();

      const first = await cache.lookup(record.keyHash);
      const second = await cache.lookup(record.keyHash);

      expect(first).toEqual(record);
      expect(second).toEqual(record);
      expect(inner.calls).toBe(1);
    });

    it('caches a not-found answer too', async () => {
      const { inner, cache } = setup();

      expect(await cache.lookup('0'.repeat(64))).toBeUndefined();
      expect(await cache.lookup('0'.repeat(64))).toBeUndefined();

      expect(inner.calls).toBe(1);
    });

    it('says what it knows without I/O: a fresh record, null for a fresh refusal, undefined otherwise', async () => {
      const { inner, clock, cache, add } = setup({ ttlMs: 30_000, negativeTtlMs: 10_000 });
      const record = add();
      const unknown = '0'.repeat(64);
      expect(cache.known(record.keyHash)).toBeUndefined();
      expect(cache.known(unknown)).toBeUndefined();
      expect(inner.calls).toBe(0);

      await cache.lookup(record.keyHash);
      await cache.lookup(unknown);
      expect(cache.known(record.keyHash)).toEqual(record);
      expect(cache.known(unknown)).toBeNull();

      clock.now += 10_001;
      expect(cache.known(unknown)).toBeUndefined();
      expect(cache.known(record.keyHash)).toEqual(record);
      clock.now += 20_000;
      expect(cache.known(record.keyHash)).toBeUndefined();
      expect(inner.calls).toBe(2);
    });

    it('shares one read among concurrent lookups of one hash', async () => {
      const { inner, cache, add } = setup();
      const record = add();
      let open = () => {};
      inner.gate = new Promise((resolve) => {
        open = resolve;
      });

      const pending = Array.from({ length: 10 }, () => cache.lookup(record.keyHash));
      open();
      const results = await Promise.all(pending);

      expect(results.every((r) => r?.keyId === record.keyId)).toBe(true);
      expect(inner.calls).toBe(1);
    });
  });

  describe('bounds', () => {
    it('makes a revocation visible once the TTL has passed, and not before', async () => {
      const { inner, clock, cache, add } = setup({ ttlMs: 30_000 });
      const record = add();
      await cache.lookup(record.keyHash);
      inner.records.set(record.keyHash, { ...record, status: 'revoked' });

      clock.now += 29_999;
      const stale = await cache.lookup(record.keyHash);
      clock.now += 1;
      const fresh = await cache.lookup(record.keyHash);

      expect(stale?.status).toBe('active');
      expect(fresh?.status).toBe('revoked');
    });

    it('counts the TTL from when the read began, so a slow read cannot stretch the bound', async () => {
      const { inner, clock, cache, add } = setup({ ttlMs: 1_000 });
      const record = add();
      let open = () => {};
      inner.gate = new Promise((resolve) => {
        open = resolve;
      });
      const pending = cache.lookup(record.keyHash);
      clock.now += 1_500;
      open();
      await pending;
      inner.gate = undefined;

      await cache.lookup(record.keyHash);

      expect(inner.calls).toBe(2);
    });

    it('holds at most maxEntries, dropping the least recently used', async () => {
      const { inner, cache, add } = setup({ maxEntries: 2 });
      const [a, b, c] = [add(), add(), add()];
      await cache.lookup(a.keyHash);
      await cache.lookup(b.keyHash);
      await cache.lookup(a.keyHash); // a is now the most recently used
      await cache.lookup(c.keyHash); // evicts b
      inner.calls = 0;

      await cache.lookup(a.keyHash);
      await cache.lookup(c.keyHash);
      const beforeB = inner.calls;
      await cache.lookup(b.keyHash);

      expect(cache.size).toBe(2);
      expect(beforeB).toBe(0);
      expect(inner.calls).toBe(1);
    });

    it('does not cache at all with a TTL of 0', async () => {
      const { inner, cache, add } = setup({ ttlMs: 0 });
      const record = add();

      await cache.lookup(record.keyHash);
      await cache.lookup(record.keyHash);

      expect(inner.calls).toBe(2);
      expect(cache.size).toBe(0);
    });
  });

  describe('refusals (flood resistance)', () => {
    const unknownHash = (i: number) => i.toString(16).padStart(64, 'f');

    it('a flood of unknown keys never evicts an accepted key', async () => {
      const { inner, cache, add } = setup({ maxEntries: 2, negativeMaxEntries: 10 });
      const [a, b] = [add(), add()];
      await cache.lookup(a.keyHash);
      await cache.lookup(b.keyHash);

      for (let i = 0; i < 1_000; i++) await cache.lookup(unknownHash(i));
      inner.calls = 0;
      await cache.lookup(a.keyHash);
      await cache.lookup(b.keyHash);

      expect(inner.calls).toBe(0);
      expect(cache.size).toBe(2);
      expect(cache.refusedSize).toBe(10);
    });

    it('keeps refusals apart, bounded, and for the shorter negative TTL', async () => {
      const { inner, clock, cache } = setup({ ttlMs: 30_000, negativeTtlMs: 5_000 });

      await cache.lookup(unknownHash(1));
      clock.now += 4_999;
      await cache.lookup(unknownHash(1));
      const withinTtl = inner.calls;
      clock.now += 1;
      await cache.lookup(unknownHash(1));

      expect(withinTtl).toBe(1);
      expect(inner.calls).toBe(2);
      expect(cache.size).toBe(0);
    });

    it('caps the negative TTL at the positive one', async () => {
      const { inner, clock, cache } = setup({ ttlMs: 1_000, negativeTtlMs: 60_000 });

      await cache.lookup(unknownHash(1));
      clock.now += 1_000;
      await cache.lookup(unknownHash(1));

      expect(inner.calls).toBe(2);
    });

    it('files a revoked key with the refusals, out of the accepted LRU', async () => {
      const { inner, clock, cache, add } = setup({ ttlMs: 1_000, maxEntries: 1 });
      const record = add();
      await cache.lookup(record.keyHash);
      inner.records.set(record.keyHash, { ...record, status: 'revoked' });
      clock.now += 1_000;

      const revoked = await cache.lookup(record.keyHash);

      expect(revoked?.status).toBe('revoked');
      expect(cache.size).toBe(0);
      expect(cache.refusedSize).toBe(1);
    });

    it('files an expired key with the refusals, like a revoked one', async () => {
      const { clock, cache, add } = setup();
      const record = add({ expires: new Date(clock.now).toISOString() });

      const expired = await cache.lookup(record.keyHash);

      expect(expired?.expires).toBe(record.expires);
      expect(cache.size).toBe(0);
      expect(cache.refusedSize).toBe(1);
    });

    it('re-uses the defaults the configuration applies', () => {
      const config = loadConfig({
        CATALOGUE_BUCKET: 'b',
        KEYS_TABLE: 'k',
        COUNTERS_TABLE: 'c',
        CURSOR_SECRET: 'x'.repeat(32),
      });
      expect(
        config.ok && {
          ttlMs: config.config.keyCacheTtlMs,
          negativeTtlMs: config.config.keyNegativeCacheTtlMs,
        },
      ).toEqual(KEY_CACHE_DEFAULTS);
    });

    it('accepts a key issued after it was refused once the negative TTL has passed', async () => {
      const { clock, cache, add } = setup({ negativeTtlMs: 2_000 });
      const record = keyRecord();
      expect(await cache.lookup(record.keyHash)).toBeUndefined();
      add({ keyHash: record.keyHash, keyId: record.keyId });
      clock.now += 2_000;

      expect((await cache.lookup(record.keyHash))?.status).toBe('active');
      expect(cache.refusedSize).toBe(0);
      expect(cache.size).toBe(1);
    });
  });

  describe('failures', () => {
    it('never caches a failure: the next lookup reads again', async () => {
      const { inner, cache, add } = setup();
      const record = add();
      inner.failNext = 1;

      await expect(cache.lookup(record.keyHash)).rejects.toBeInstanceOf(DependencyError);
      const after = await cache.lookup(record.keyHash);

      expect(after?.keyId).toBe(record.keyId);
      expect(inner.calls).toBe(2);
    });

    it('gives up on its own signal while the shared read carries on', async () => {
      const { inner, cache, add } = setup();
      const record = add();
      let open = () => {};
      inner.gate = new Promise((resolve) => {
        open = resolve;
      });
      const first = cache.lookup(record.keyHash);
      const controller = new AbortController();
      const impatient = cache.lookup(record.keyHash, { signal: controller.signal });

      controller.abort(new Error('timeout'));
      await expect(impatient).rejects.toMatchObject({ name: 'DependencyError', dependency: 'keys' });
      open();

      expect((await first)?.keyId).toBe(record.keyId);
      expect(inner.calls).toBe(1);
    });
  });
});
