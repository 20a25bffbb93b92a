/**
 * ETags across publishes (docs/design.md#what-the-builder-guarantees, 3): the same request before and after a changed
 * catalogue is published. When the bytes change, the ETag must change (a 304 must never hide new data);
 * when they do not, the ETag should stay, so consumers keep their 304s.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../builder/snapshot/snapshot.js';
import type { ProxyHandler, ProxyResponse } from '../../proxy/core/types.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';
import { type Query, queryArb, queryString, snapshotArb } from '../oracle/arbitraries.js';
import {
  assertProperty,
  LARGE,
  PARTNER_KEY,
  putCatalogue,
  runSettings,
  scaled,
  testProxy,
  testTimeout,
} from '../oracle/harness.js';

const TIME_MS = LARGE ? 3_600_000 : 45_000;
/** Pairs of 200s seen, those whose bytes changed, and those whose bytes stayed (of them, sparse views). */
const counts = { pairs: 0, changed: 0, unchanged: 0, unchangedSparse: 0 };
/** A view that leaves fields out: `fields=…`. */
const sparse = (query: Query) => query.params.some(([name]) => name === 'fields');

afterAll(() => {
  console.log(`etag: ${JSON.stringify(counts)}`);
});

/** A publish that changes a few records in a few fields (so many representations stay the same). */
const editArb = (snapshot: Snapshot) =>
  fc
    .record({
      touched: fc.subarray(
        snapshot.modules.map((m) => m.id),
        { maxLength: Math.min(3, snapshot.modules.length) },
      ),
      field: fc.constantFrom('description', 'panels', 'name', 'tag_ids'),
      maker: fc.boolean(),
    })
    .map(({ touched, field, maker }): Snapshot => {
      const modules = snapshot.modules.map((m) => {
        if (!touched.includes(m.id)) return m;
        switch (field) {
          case 'description':
            return { ...m, description: `${m.description ?? ''} (edited)` };
          case 'panels':
            return { ...m, panels: [...m.panels, { name: 'Silver', hp: m.hp, color: null }] };
          case 'name':
            return { ...m, name: `${m.name} II` };
          default:
            return { ...m, tag_ids: m.tag_ids.slice(1) };
        }
      });
      const manufacturers = maker
        ? snapshot.manufacturers.map((m, i) =>
            i === 0 ? { ...m, country: m.country === 'DE' ? 'FR' : 'DE' } : m,
          )
        : snapshot.manufacturers;
      return { ...snapshot, modules, manufacturers };
    });

async function proxyFor(snapshot: Snapshot): Promise<ProxyHandler> {
  const objects = new MemoryObjectStore();
  await putCatalogue(objects, snapshot);
  return testProxy({ objects });
}

async function ask(
  handle: ProxyHandler,
  query: Query,
  headers: Record<string, string> = {},
): Promise<ProxyResponse> {
  return handle({
    method: 'GET',
    path: query.path,
    query: queryString(query.params),
    headers: { authorization: `Bearer ${PARTNER_KEY}`, ...headers },
  });
}

const pairArb = () =>
  snapshotArb({ maxModules: 30 }).chain((before) =>
    fc.tuple(
      fc.constant(before),
      editArb(before),
      fc.array(queryArb(before), { minLength: 1, maxLength: 12 }),
    ),
  );

/**
 * The property over generated catalogue pairs (before and after an edit): every query asked of both, and
 * `check` given the two answers where both are 200, with the edited catalogue's proxy to ask again.
 */
const everyPairOfAnswers = (
  check: (pair: { a: ProxyResponse; b: ProxyResponse; query: Query; fresh: ProxyHandler }) => unknown,
) =>
  fc.asyncProperty(pairArb(), async ([before, after, queries]) => {
    const [old, fresh] = await Promise.all([proxyFor(before), proxyFor(after)]);
    for (const query of queries) {
      const [a, b] = [await ask(old, query), await ask(fresh, query)];
      if (a.status === 200 && b.status === 200) await check({ a, b, query, fresh });
    }
  });

describe('ETags across a publish', () => {
  it(
    'change whenever the bytes change, and a stale ETag never gets a 304',
    async () => {
      await assertProperty(
        everyPairOfAnswers(async ({ a, b, query, fresh }) => {
          counts.pairs++;
          if (a.body!.equals(b.body!)) return;
          counts.changed++;
          expect(b.headers.etag).not.toBe(a.headers.etag);
          expect((await ask(fresh, query, { 'if-none-match': a.headers.etag! })).status).toBe(200);
        }),
        runSettings(scaled(100), TIME_MS),
      );
      // The property holds only if it was tested: pairs whose bytes changed were met.
      expect(counts.changed, 'no pair of answers whose bytes changed: nothing was tested').toBeGreaterThan(0);
    },
    testTimeout(TIME_MS),
  );

  it(
    'stay the same when the bytes stay the same, sparse views included',
    async () => {
      await assertProperty(
        everyPairOfAnswers(({ a, b, query }) => {
          if (!a.body!.equals(b.body!)) return;
          counts.unchanged++;
          if (sparse(query)) counts.unchangedSparse++;
          expect(b.headers.etag).toBe(a.headers.etag);
        }),
        runSettings(scaled(100), TIME_MS),
      );
      expect(counts.unchanged, 'no pair of answers whose bytes stayed: nothing was tested').toBeGreaterThan(
        0,
      );
      expect(counts.unchangedSparse, 'no sparse view whose bytes stayed: nothing was tested').toBeGreaterThan(
        0,
      );
    },
    testTimeout(TIME_MS),
  );

  // docs/design.md#what-the-builder-guarantees, 3: a sparse view (`fields=…`, a detail without every `include`) keeps its ETag
  // when only fragments it does not show change, so consumers keep their 304s.
  it('stay the same when the bytes stay the same, for sparse views too', async () => {
    const before = fc.sample(snapshotArb({ minModules: 5, maxModules: 10 }), { numRuns: 1, seed: 3 })[0]!;
    const after = {
      ...before,
      modules: before.modules.map((m) => ({ ...m, description: `${m.description ?? ''} (edited)` })),
    };
    const [old, fresh] = await Promise.all([proxyFor(before), proxyFor(after)]);
    const query: Query = { path: '/v1/modules', params: [['fields', 'id,name']] };
    const [a, b] = [await ask(old, query), await ask(fresh, query)];
    expect(a.body!.equals(b.body!)).toBe(true);
    expect(b.headers.etag).toBe(a.headers.etag);
  });
});
