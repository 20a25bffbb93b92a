/**
 * Content coding through the proxy core over the fixture in s3rver (docs/api.md#content-coding): gzip and br round trips
 * on lists, cursor pages and details, an ETag per coding that revalidates to 304 on its own (a cursor page's
 * 304 still without a read), HEAD lengths, Vary, identity where it is due, errors never coded, and a hot
 * answer compressed once. Every answer is validated against the OpenAPI document (decoded) by the harness.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ByteCache } from '../../../proxy/cache/bytes.js';
import { codedEtag, MIN_CODED_BYTES } from '../../../proxy/http/coding.js';
import { type Answer, KEYS, objectsOf, type Stack, startStack } from '../../helpers/proxy.js';

let stack: Stack;
let cursorPage: string;
beforeAll(async () => {
  stack = await startStack(objectsOf(['modules?sort=id'], [136], [1]));
  const first = await stack.call('GET', '/v1/modules?limit=60&include=tags');
  cursorPage = `/v1/modules?limit=60&include=tags&cursor=${first.json().page.next_cursor}`;
});
afterAll(async () => {
  await stack?.dispose();
});

const auth = { authorization: `Bearer ${KEYS.main}` };
const decode = { br: brotliDecompressSync, gzip: gunzipSync } as const;
type Target = [string, () => string];
const TARGETS: Target[] = [
  ['first page', () => '/v1/modules?limit=60&include=tags'],
  ['cursor page', () => cursorPage],
  // Module 136 has the fixture's largest detail: over the coding threshold with every include.
  ['module detail', () => '/v1/modules/136?include=ins,outs,tags,panels'],
  ['manufacturer detail', () => '/v1/manufacturers/1?include=modules'],
];

function get(target: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Answer> {
  return stack.call(method, target, { ...auth, ...headers });
}

describe.each(['br', 'gzip'] as const)('%s', (coding) => {
  it.each(TARGETS)(
    '%s: decodes to the identity bytes, with its own ETag, Vary and the coded length',
    async (_, target) => {
      const identity = await get(target());
      expect(identity.body!.byteLength).toBeGreaterThanOrEqual(MIN_CODED_BYTES);
      const coded = await get(target(), { 'accept-encoding': coding });

      expect(coded.status).toBe(200);
      expect(coded.headers['content-encoding']).toBe(coding);
      expect(coded.headers.vary).toBe('Accept-Encoding');
      expect(coded.headers['content-length']).toBe(String(coded.body!.byteLength));
      expect(coded.body!.byteLength).toBeLessThan(identity.body!.byteLength);
      expect(decode[coding](coded.body!).equals(identity.body!)).toBe(true);
      expect(coded.headers.etag).toBe(codedEtag(identity.headers.etag!, coding));
      expect(coded.headers.etag).not.toBe(identity.headers.etag);
    },
  );

  it.each(TARGETS)(
    '%s: HEAD has the coded GET’s Content-Length, ETag and coding, and no body',
    async (_, target) => {
      const coded = await get(target(), { 'accept-encoding': coding });
      const head = await get(target(), { 'accept-encoding': coding }, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.body).toBeUndefined();
      for (const name of ['content-length', 'etag', 'content-encoding', 'vary'])
        expect(head.headers[name]).toBe(coded.headers[name]);
    },
  );

  it.each(TARGETS)('%s: the coded ETag revalidates to 304 carrying that ETag and Vary', async (_, target) => {
    const coded = await get(target(), { 'accept-encoding': coding });
    const revalidated = await get(target(), {
      'accept-encoding': `${coding}, identity;q=0.5`,
      'if-none-match': `"nope", ${coded.headers.etag}`,
    });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.etag).toBe(coded.headers.etag);
    expect(revalidated.headers.vary).toBe('Accept-Encoding');
    expect(revalidated.body).toBeUndefined();
  });

  it.each(TARGETS)(
    '%s: a coded ETag whose coding the request no longer accepts gets a 200',
    async (_, target) => {
      const coded = await get(target(), { 'accept-encoding': coding });
      const other = coding === 'br' ? 'gzip' : 'br';
      const answer = await get(target(), { 'accept-encoding': other, 'if-none-match': coded.headers.etag! });
      expect(answer.status).toBe(200);
      expect(answer.headers['content-encoding']).toBe(other);
      const identity = await get(target(), { 'if-none-match': coded.headers.etag! });
      expect(identity.status).toBe(200);
      expect(identity.headers['content-encoding']).toBeUndefined();
    },
  );
});

describe('revalidation across codings', () => {
  it.each(TARGETS)(
    '%s: the identity ETag revalidates for a client that now accepts br',
    async (_, target) => {
      const identity = await get(target());
      const answer = await get(target(), {
        'accept-encoding': 'gzip, br',
        'if-none-match': identity.headers.etag!,
      });
      expect(answer.status).toBe(304);
      expect(answer.headers.etag).toBe(identity.headers.etag);
    },
  );

  it('a cursor page’s coded 304 is decided from the cursor alone: no object read', async () => {
    const coded = await get(cursorPage, { 'accept-encoding': 'br' });
    stack.objects.take();
    const answer = await get(cursorPage, { 'accept-encoding': 'br', 'if-none-match': coded.headers.etag! });
    expect(answer.status).toBe(304);
    expect(answer.headers.etag).toBe(coded.headers.etag);
    expect(stack.objects.take()).toEqual([]);
  });

  it('If-None-Match: * answers 304 with the ETag a 200 would carry', async () => {
    const target = TARGETS[0]![1]();
    const coded = await get(target, { 'accept-encoding': 'gzip, br' });
    const answer = await get(target, { 'accept-encoding': 'gzip, br', 'if-none-match': '*' });
    expect(answer.status).toBe(304);
    expect(answer.headers.etag).toBe(coded.headers.etag);
  });
});

describe('identity', () => {
  it.each([
    ['no Accept-Encoding', undefined],
    ['identity', 'identity'],
    ['gzip;q=0', 'gzip;q=0'],
    ['br;q=0, gzip;q=0', 'br;q=0, gzip;q=0'],
    ['only codings the proxy does not produce', 'deflate, zstd'],
    ['identity preferred', 'gzip;q=0.5, br;q=0.5, identity'],
  ])('%s → identity, with Vary and the identity ETag', async (_, accept) => {
    const target = TARGETS[0]![1]();
    const plain = await get(target);
    const answer = await get(target, accept === undefined ? {} : { 'accept-encoding': accept });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.headers.vary).toBe('Accept-Encoding');
    expect(answer.headers.etag).toBe(plain.headers.etag);
    expect(answer.body!.equals(plain.body!)).toBe(true);
  });

  it('a body under the threshold stays identity, unless the client refused identity', async () => {
    const target = '/v1/modules?limit=1&fields=id';
    const plain = await get(target, { 'accept-encoding': 'gzip, br' });
    expect(plain.body!.byteLength).toBeLessThan(MIN_CODED_BYTES);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    const forced = await get(target, { 'accept-encoding': 'br, identity;q=0' });
    expect(forced.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(forced.body!).equals(plain.body!)).toBe(true);
  });

  it.each([
    ['404 resource', '/v1/modules/999999', auth, 404],
    ['400 parameter', '/v1/modules?limit=0', auth, 400],
    ['404 route', '/v1/nope', auth, 404],
    ['401', '/v1/modules', {}, 401],
  ] as const)(
    'errors are never coded (%s), even when identity is refused',
    async (_, target, headers, status) => {
      const answer = await stack.call('GET', target, {
        ...headers,
        'accept-encoding': 'br, gzip, identity;q=0',
      });
      expect(answer.status).toBe(status);
      expect(answer.headers['content-encoding']).toBeUndefined();
      expect(answer.headers.vary).toBeUndefined();
      expect(answer.json().error.code).toEqual(expect.any(String));
    },
  );

  it('OPTIONS (204) carries neither a coding nor Vary', async () => {
    const answer = await get('/v1/modules', { 'accept-encoding': 'br, identity;q=0' }, 'OPTIONS');
    expect(answer.status).toBe(204);
    expect(answer.headers['content-encoding']).toBeUndefined();
    expect(answer.headers.vary).toBeUndefined();
  });
});

describe('the byte cache', () => {
  it('compresses a hot answer once: later requests for it are cache hits with the same bytes', async () => {
    const byteCache = new ByteCache({ maxBytes: 1 << 20 });
    const handle = stack.handler({ byteCache });
    const target = TARGETS[0]![1]();
    const first = await stack.call('GET', target, { ...auth, 'accept-encoding': 'br' }, handle);
    const before = byteCache.stats();
    const second = await stack.call('GET', target, { ...auth, 'accept-encoding': 'br' }, handle);
    const head = await stack.call('HEAD', target, { ...auth, 'accept-encoding': 'br' }, handle);
    expect(second.body).toBe(first.body);
    expect(head.headers['content-length']).toBe(String(first.body!.byteLength));
    // Nothing new was loaded or compressed: the shard, the composed page and its br bytes were all hits.
    expect(byteCache.stats()).toMatchObject({ entries: before.entries, misses: before.misses });
    expect(byteCache.stats().hits).toBeGreaterThanOrEqual(before.hits + 2);
  });

  it('a disabled cache (0 bytes) still answers the same coded bytes', async () => {
    const handle = stack.handler({ byteCache: new ByteCache({ maxBytes: 0 }) });
    const target = TARGETS[0]![1]();
    const cached = await get(target, { 'accept-encoding': 'gzip' });
    const uncached = await stack.call('GET', target, { ...auth, 'accept-encoding': 'gzip' }, handle);
    expect(uncached.body!.equals(cached.body!)).toBe(true);
    expect(uncached.headers.etag).toBe(cached.headers.etag);
  });
});
