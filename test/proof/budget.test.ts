/**
 * The per-request budget of docs/design.md#what-the-proxy-guarantees: at most two object reads — the index shard that names the answer's
 * object and one data range — plus the pointer re-check when it is due; none for a 304 of a cursor page; none
 * at all for a hot request in a warm container (the byte cache); and no JSON parsing of catalogue data.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ProxyHandler } from '../../proxy/core/types.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';
import {
  KEYS,
  objectsOf,
  PREFIX,
  publishFixture,
  type Stack,
  startStack,
  testConfig,
} from '../helpers/proxy.js';

let stack: Stack;
let cursor: string;
let cursorEtag: string;
let firstEtag: string;
beforeAll(async () => {
  stack = await startStack(objectsOf(['modules?sort=id', 'tags?sort=id'], [101], [1]));
  const first = await stack.call('GET', '/v1/modules?limit=60');
  cursor = first.json().page.next_cursor;
  firstEtag = first.headers.etag!;
  cursorEtag = (await stack.call('GET', `/v1/modules?limit=60&cursor=${cursor}`)).headers.etag!;
});
afterAll(async () => {
  await stack?.dispose();
});

const auth = { authorization: `Bearer ${KEYS.main}` };

/**
 * [request type, method, target, extra headers, status, reads per column]: without a byte cache with a
 * stale pointer (pointer + shard + data) and with a fresh one (shard + data); with a warm byte cache (none).
 */
const REQUESTS: [
  string,
  string,
  () => string,
  () => Record<string, string>,
  number,
  number,
  number,
  number,
][] = [
  ['first page', 'GET', () => '/v1/modules?limit=60', () => ({}), 200, 3, 2, 0],
  ['first page, HEAD', 'HEAD', () => '/v1/modules?limit=60', () => ({}), 200, 3, 2, 0],
  [
    'first page, 304',
    'GET',
    () => '/v1/modules?limit=60',
    () => ({ 'if-none-match': firstEtag }),
    304,
    3,
    2,
    0,
  ],
  ['cursor page', 'GET', () => `/v1/modules?limit=60&cursor=${cursor}`, () => ({}), 200, 1, 1, 0],
  [
    'cursor page, 304',
    'GET',
    () => `/v1/modules?limit=60&cursor=${cursor}`,
    () => ({ 'if-none-match': cursorEtag }),
    304,
    0,
    0,
    0,
  ],
  [
    'cursor page crossing segments',
    'GET',
    () => `/v1/modules?limit=100&cursor=${cursor}`,
    () => ({}),
    200,
    1,
    1,
    0,
  ],
  ['module detail', 'GET', () => '/v1/modules/101?include=tags', () => ({}), 200, 3, 2, 0],
  ['manufacturer detail', 'GET', () => '/v1/manufacturers/1?include=modules', () => ({}), 200, 3, 2, 0],
  ['missing resource (404)', 'GET', () => '/v1/modules/999999', () => ({}), 404, 2, 1, 0],
  ['empty filter', 'GET', () => '/v1/modules?hp=999', () => ({}), 200, 2, 1, 0],
  ['small list', 'GET', () => '/v1/tags', () => ({}), 200, 3, 2, 0],
  ['invalid parameter (400)', 'GET', () => '/v1/modules?limit=0', () => ({}), 400, 0, 0, 0],
  ['invalid cursor (400)', 'GET', () => '/v1/modules?cursor=abc', () => ({}), 400, 0, 0, 0],
  ['unknown route (404)', 'GET', () => '/v1/nope', () => ({}), 404, 0, 0, 0],
  ['OPTIONS', 'OPTIONS', () => '/v1/modules', () => ({}), 204, 0, 0, 0],
  ['405', 'DELETE', () => '/v1/modules', () => ({}), 405, 0, 0, 0],
];

describe.each([
  ['no byte cache, stale pointer (re-checked on every request)', 0, 0, 5],
  ['no byte cache, fresh pointer', 60_000, 0, 6],
  ['warm byte cache (the same request made once before)', 60_000, 2 ** 20, 7],
] as const)('object reads per request, %s', (_, pointerTtlMs, byteCacheBytes, column) => {
  let handle: ProxyHandler;
  beforeAll(async () => {
    handle = stack.handler({ config: testConfig({ pointerTtlMs, byteCacheBytes }) });
    await stack.call('GET', '/v1/tags', auth, handle); // the first pointer read of a cold start
    stack.objects.take();
  });

  it.each(REQUESTS)('%s', async (...row) => {
    const [, method, target, headers, status] = row;
    if (byteCacheBytes > 0) {
      await stack.call(method, target(), { ...auth, ...headers() }, handle);
      stack.objects.take();
    }
    const answer = await stack.call(method, target(), { ...auth, ...headers() }, handle);
    expect(answer.status).toBe(status);
    const reads = stack.objects.take();
    expect(reads.length).toBe(row[column]);
    const pointer = reads.filter((r) => r.key === `${PREFIX}current.json`);
    const shards = reads.filter((r) => stack.shards.some((id) => r.key === `${PREFIX}o/${id}`));
    expect(pointer.length).toBeLessThanOrEqual(1);
    expect(shards.length).toBeLessThanOrEqual(1);
    expect(reads.length - pointer.length - shards.length).toBeLessThanOrEqual(1);
    // The pointer is only ever read conditionally once it is known.
    for (const read of pointer) expect(read.options.ifNoneMatch).toMatch(/^"/);
  });
});

describe('the byte cache', () => {
  it('a cold container reads each shard once; a warm one answers other selections of a hot object without a read', async () => {
    const handle = stack.handler({ config: testConfig({ pointerTtlMs: 60_000, byteCacheBytes: 2 ** 20 }) });
    await stack.call('GET', '/v1/modules?limit=10', auth, handle);
    const cold = stack.objects.take();
    // Pointer, shard, segment 0 of the list.
    expect(cold.map((r) => r.key.replace(/o\/.*/, 'o/…'))).toEqual([
      `${PREFIX}current.json`,
      `${PREFIX}o/…`,
      `${PREFIX}o/…`,
    ]);
    for (const target of ['/v1/modules?limit=20&fields=name', '/v1/modules?limit=5&include=tags,ins']) {
      expect((await stack.call('GET', target, auth, handle)).status).toBe(200);
    }
    expect(stack.objects.take()).toEqual([]);
  });

  it('stays within its bound: a cache too small for the data reads it again, and answers stay right', async () => {
    const small = stack.handler({ config: testConfig({ pointerTtlMs: 60_000, byteCacheBytes: 1 }) });
    const big = stack.handler({ config: testConfig({ pointerTtlMs: 60_000, byteCacheBytes: 2 ** 20 }) });
    for (let round = 0; round < 2; round++) {
      const a = await stack.call('GET', '/v1/modules?limit=100', auth, small);
      const b = await stack.call('GET', '/v1/modules?limit=100', auth, big);
      expect(a.body!.equals(b.body!)).toBe(true);
      expect(a.headers.etag).toBe(b.headers.etag);
    }
    const reads = stack.objects.take();
    // The 1-byte cache keeps nothing: it reads shard and data every time; the big one once.
    expect(reads.length).toBe(1 + 2 + 2 + 1 + 2);
  });
});

describe('reads are ranged', () => {
  it('a first page reads segment 0 only; a cursor page the range its cursor names', async () => {
    const handle = stack.handler();
    await stack.call('GET', '/v1/modules?limit=10', auth, handle);
    const [, segment0End] = stack.index.lists['modules?sort=id']!.slice(1) as [number, number];
    const reads = stack.objects.take().filter((r) => r.key.includes('/o/'));
    expect(reads.at(-1)!.options.range).toEqual([0, segment0End]);
    await stack.call('GET', `/v1/modules?limit=10&cursor=${cursor}`, auth, handle);
    const [read] = stack.objects.take();
    expect(read!.options.range![0]).toBeGreaterThanOrEqual(0);
    expect(read!.options.range![1]).toBeGreaterThan(read!.options.range![0]);
  });
});

describe('no JSON parsing of catalogue data on the request path', () => {
  it('JSON.parse is not called while serving pages and details (an index shard is parsed once)', async () => {
    // s3rver runs in this process and parses its own metadata files: serve the same bytes from memory.
    const memory = new MemoryObjectStore();
    await publishFixture(memory);
    const handle = stack.handler({
      objects: memory,
      config: testConfig({ pointerTtlMs: 0, byteCacheBytes: 2 ** 20 }),
    });
    // Load the index shards these requests need (the only JSON the proxy parses, once per shard), with
    // other selections, so the answers below are composed from the bytes, not served from the cache.
    for (const target of ['/v1/modules?limit=1', '/v1/modules/101?include=tags', '/v1/manufacturers/1']) {
      await stack.call('GET', target, auth, handle);
    }
    const parse = vi.spyOn(JSON, 'parse');
    try {
      for (const target of [
        '/v1/modules?limit=100&include=tags',
        `/v1/modules?cursor=${cursor}`,
        '/v1/modules/101?include=ins',
        '/v1/manufacturers/1?include=modules',
      ]) {
        const response = await handle({
          method: 'GET',
          path: target.split('?')[0]!,
          query: target.split('?')[1] ?? '',
          headers: auth,
        });
        expect(response.status).toBe(200);
      }
      expect(parse).not.toHaveBeenCalled();
    } finally {
      parse.mockRestore();
    }
  });
});
