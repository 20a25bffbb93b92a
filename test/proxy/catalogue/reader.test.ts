/**
 * The catalogue reader answers a warm container's hot requests at once (a value, not a promise): a fresh
 * pointer, the shard and the composed answer held; anything it lacks is read first, and both ways give the
 * same answers. A held answer is a cache hit and never counts as a miss. Bytes that are not what the
 * builder wrote are read once more, then an origin fault, and never cached.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ByteCache } from '../../../proxy/cache/bytes.js';
import { Catalogue, type ReadOutcome } from '../../../proxy/catalogue/reader.js';
import { acceptedCodings, ifNoneMatchFor } from '../../../proxy/http/coding.js';
import { type Plan, parseRequest } from '../../../proxy/request/plan.js';
import { DependencyError } from '../../../store/errors.js';
import type { GetOptions, GetOutcome, ObjectStore } from '../../../store/objects/interface.js';
import { MemoryObjectStore } from '../../../store/objects/memory.js';
import { CountingObjectStore, CURSOR_SECRET, PREFIX, publishFixture } from '../../helpers/proxy.js';

let store: CountingObjectStore;
beforeAll(async () => {
  const memory = new MemoryObjectStore();
  await publishFixture(memory);
  store = new CountingObjectStore(memory);
});

function planOf(target: string): Plan {
  const [path, query = ''] = target.split('?');
  const parsed = parseRequest('GET', path!, query);
  if (!parsed.ok) throw new Error(`${target}: ${parsed.error.message}`);
  return parsed.plan;
}

function catalogue(clock: { ms: number }, cache = new ByteCache({ maxBytes: 2 ** 24 })) {
  return new Catalogue({
    objects: store,
    prefix: PREFIX,
    cursorSecret: CURSOR_SECRET,
    pointerTtlMs: 5_000,
    dependencyTimeoutMs: 2_000,
    now: () => clock.ms,
    cache,
  });
}

const any = ifNoneMatchFor(undefined, acceptedCodings(undefined));
const body = (outcome: ReadOutcome) => (outcome.ok ? outcome.body.toString() : outcome.reason);

describe('Catalogue.read', () => {
  it.each([
    '/v1/modules?limit=3',
    '/v1/modules?hp=999',
    '/v1/modules/101?include=tags',
    '/v1/modules/999999',
    '/v1/manufacturers/1?include=modules',
  ])('%s: read once, then answered at once from what the container holds', async (target) => {
    const clock = { ms: 0 };
    const cache = new ByteCache({ maxBytes: 2 ** 24 });
    const reader = catalogue(clock, cache);
    const plan = planOf(target);
    const cold = reader.read(plan, any);
    expect(cold).toBeInstanceOf(Promise);
    const first = await cold;
    store.take();
    const { misses } = cache.stats();
    const warm = reader.read(plan, any);
    expect(warm).not.toBeInstanceOf(Promise);
    expect(body(warm as ReadOutcome)).toBe(body(first));
    expect(store.take()).toEqual([]);
    expect(cache.stats().misses).toBe(misses);
    // Once the pointer is due for its re-check, the answer waits for it again.
    clock.ms += 5_000;
    const due = reader.read(plan, any);
    expect(due).toBeInstanceOf(Promise);
    expect(body(await due)).toBe(body(first));
  });

  it('a cursor page and its 304 are answered at once once held; a bad cursor at once too', async () => {
    const reader = catalogue({ ms: 0 });
    const first = (await reader.read(planOf('/v1/modules?limit=2'), any)) as ReadOutcome & { ok: true };
    const next = JSON.parse(first.body.toString()).page.next_cursor as string;
    const plan = planOf(`/v1/modules?limit=2&cursor=${next}`);
    const cold = reader.read(plan, any);
    expect(cold).toBeInstanceOf(Promise);
    const page = (await cold) as ReadOutcome & { ok: true };
    expect(reader.read(plan, any)).toEqual(page);
    const revalidate = ifNoneMatchFor(page.etag, acceptedCodings(undefined));
    expect(reader.read(plan, revalidate)).toEqual({ ok: false, reason: 'not-modified', etag: page.etag });
    expect(reader.read(planOf('/v1/modules?limit=2&cursor=abc'), any)).toMatchObject({
      ok: false,
      reason: 'refused',
      error: { code: 'invalid_parameter' },
    });
  });
});

/** A store that answers some reads with damaged bytes (length kept): `damage` says which, and how often. */
class DamagingStore implements ObjectStore {
  reads = 0;
  constructor(
    readonly inner: ObjectStore,
    readonly damage: (key: string, read: number) => boolean,
  ) {}
  async get(key: string, options?: GetOptions): Promise<GetOutcome> {
    const outcome = await this.inner.get(key, options);
    this.reads++;
    if (!outcome.ok || !this.damage(key, this.reads)) return outcome;
    const body = Buffer.from(outcome.body);
    const at = Math.floor(body.byteLength / 2);
    body[at] = body[at]! ^ 0x20;
    return { ...outcome, body };
  }
}

describe('integrity', () => {
  const targets = [
    '/v1/modules?limit=3',
    '/v1/modules?limit=100&include=ins,outs,tags,panels',
    '/v1/modules/101?include=tags',
    '/v1/manufacturers/1?include=modules',
    '/v1/tags',
  ];

  it.each(targets)(
    '%s: every read damaged → DependencyError (503), nothing cached; healthy again → right',
    async (target) => {
      const healthy = body(await catalogue({ ms: 0 }).read(planOf(target), any));
      const cache = new ByteCache({ maxBytes: 2 ** 24 });
      const damaging = new DamagingStore(store.inner, (key) => key.includes('/o/'));
      const reader = new Catalogue({
        objects: damaging,
        prefix: PREFIX,
        cursorSecret: CURSOR_SECRET,
        pointerTtlMs: 60_000,
        dependencyTimeoutMs: 2_000,
        now: () => 0,
        cache,
      });
      await expect(reader.read(planOf(target), any)).rejects.toThrow(/integrity check \(2 reads\)/);
      expect(cache.stats().entries).toBe(0);
      const healed = new Catalogue({
        objects: store.inner,
        prefix: PREFIX,
        cursorSecret: CURSOR_SECRET,
        pointerTtlMs: 60_000,
        dependencyTimeoutMs: 2_000,
        now: () => 0,
        cache,
      });
      expect(body(await healed.read(planOf(target), any))).toBe(healthy);
    },
  );

  it('a damaged read is read once more: the right answer, from two reads', async () => {
    const healthy = body(await catalogue({ ms: 0 }).read(planOf('/v1/modules/101'), any));
    const damaged = new Set<string>();
    const damaging = new DamagingStore(store.inner, (key) => {
      if (!key.includes('/o/') || damaged.has(key)) return false;
      damaged.add(key);
      return true;
    });
    const reader = new Catalogue({
      objects: damaging,
      prefix: PREFIX,
      cursorSecret: CURSOR_SECRET,
      pointerTtlMs: 60_000,
      dependencyTimeoutMs: 2_000,
      now: () => 0,
    });
    expect(body(await reader.read(planOf('/v1/modules/101'), any))).toBe(healthy);
    // The pointer, then the shard and the detail each twice.
    expect(damaging.reads).toBe(5);
  });

  it("a cursor page whose bytes fail their check or do not decode is the store's fault, never invalid_parameter", async () => {
    const first = (await catalogue({ ms: 0 }).read(planOf('/v1/modules?limit=2'), any)) as ReadOutcome & {
      ok: true;
    };
    const next = JSON.parse(first.body.toString()).page.next_cursor as string;
    const reader = new Catalogue({
      objects: new DamagingStore(store.inner, (_key, read) => read > 0),
      prefix: PREFIX,
      cursorSecret: CURSOR_SECRET,
      pointerTtlMs: 60_000,
      dependencyTimeoutMs: 2_000,
      now: () => 0,
    });
    await expect(reader.read(planOf(`/v1/modules?limit=2&cursor=${next}`), any)).rejects.toBeInstanceOf(
      DependencyError,
    );
  });
});
