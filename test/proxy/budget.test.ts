/**
 * The per-request budget of DESIGN.md: at most two object reads (the pointer re-check when it is due, and
 * one data range), none for a 304 of a cursor page, and no JSON parsing of catalogue data.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { renderCatalogue } from '../../builder/render.js';
import type { ProxyHandler } from '../../proxy/core/types.js';
import { MemoryObjectStore } from '../../proxy/objects/memory.js';
import { KEYS, objectsOf, PREFIX, type Stack, startStack, testConfig } from './harness.js';

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

/** [request type, method, target, extra headers, status, reads with a stale pointer, reads with a fresh one] */
const REQUESTS: [string, string, () => string, () => Record<string, string>, number, number, number][] = [
  ['first page', 'GET', () => '/v1/modules?limit=60', () => ({}), 200, 2, 1],
  ['first page, HEAD', 'HEAD', () => '/v1/modules?limit=60', () => ({}), 200, 2, 1],
  ['first page, 304', 'GET', () => '/v1/modules?limit=60', () => ({ 'if-none-match': firstEtag }), 304, 2, 1],
  ['cursor page', 'GET', () => `/v1/modules?limit=60&cursor=${cursor}`, () => ({}), 200, 1, 1],
  [
    'cursor page, 304',
    'GET',
    () => `/v1/modules?limit=60&cursor=${cursor}`,
    () => ({ 'if-none-match': cursorEtag }),
    304,
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
  ],
  ['module detail', 'GET', () => '/v1/modules/101?include=tags', () => ({}), 200, 2, 1],
  ['manufacturer detail', 'GET', () => '/v1/manufacturers/1?include=modules', () => ({}), 200, 2, 1],
  ['missing resource (404)', 'GET', () => '/v1/modules/999999', () => ({}), 404, 1, 0],
  ['empty filter', 'GET', () => '/v1/modules?hp=999', () => ({}), 200, 1, 0],
  ['small list', 'GET', () => '/v1/tags', () => ({}), 200, 2, 1],
  ['invalid parameter (400)', 'GET', () => '/v1/modules?limit=0', () => ({}), 400, 0, 0],
  ['invalid cursor (400)', 'GET', () => '/v1/modules?cursor=abc', () => ({}), 400, 0, 0],
  ['unknown route (404)', 'GET', () => '/v1/nope', () => ({}), 404, 0, 0],
  ['OPTIONS', 'OPTIONS', () => '/v1/modules', () => ({}), 204, 0, 0],
  ['405', 'DELETE', () => '/v1/modules', () => ({}), 405, 0, 0],
];

describe.each([
  ['stale pointer (re-checked on every request)', 0, 5],
  ['fresh pointer', 60_000, 6],
] as const)('object reads per request, %s', (_, pointerTtlMs, column) => {
  let handle: ProxyHandler;
  beforeAll(async () => {
    handle = stack.handler({ config: testConfig({ pointerTtlMs }) });
    await stack.call('GET', '/v1/tags', auth, handle); // the first pointer read of a cold start
    stack.objects.take();
  });

  it.each(REQUESTS)('%s', async (...row) => {
    const [, method, target, headers, status] = row;
    const answer = await stack.call(method, target(), { ...auth, ...headers() }, handle);
    expect(answer.status).toBe(status);
    const reads = stack.objects.take();
    expect(reads.length).toBe(row[column]);
    expect(reads.length).toBeLessThanOrEqual(2);
    const data = reads.filter((r) => r.key !== `${PREFIX}current.json`);
    expect(data.length).toBeLessThanOrEqual(1);
    // The pointer is only ever read conditionally once it is known.
    for (const read of reads.filter((r) => r.key === `${PREFIX}current.json`)) {
      expect(read.options.ifNoneMatch).toMatch(/^"/);
    }
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
  it('JSON.parse is not called while serving pages and details (the index is parsed once per version)', async () => {
    // s3rver runs in this process and parses its own metadata files: serve the same bytes from memory.
    const memory = new MemoryObjectStore();
    const rendered = renderCatalogue(stack.snapshot);
    for (const [id, bytes] of rendered.objects) await memory.put(`${PREFIX}o/${id}`, bytes);
    await memory.put(`${PREFIX}current.json`, rendered.indexBytes);
    const handle = stack.handler({ objects: memory, config: testConfig({ pointerTtlMs: 0 }) });
    await stack.call('GET', '/v1/tags', auth, handle);
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
