/**
 * client/responses.ts: every result says which answer it came in — `responseOf(page)`, each record of a page
 * and of a walk, a detail, a 304 from the cache, an error that an answer caused — with its status, request id
 * and rate limits, without changing the result's shape (keys, JSON, equality) or its type.
 */
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type CatalogueApiError,
  CatalogueClient,
  type Module,
  type Page,
  type ResponseInfo,
  responseOf,
  type Tag,
} from '../../client/index.js';
import { clientOf, RATE_HEADERS, type ScriptedServer, startScripted } from './scripted.js';

const KEY = `pk_live_${'R'.repeat(22)}`;
const TAG = (id: number) => ({ id, name: `t${id}`, type: null });

/** A 200 of `body` with request id `id`, an ETag and rate-limit headers. */
function answer(id: string, body: unknown, remainingMinute = 50) {
  return {
    status: 200,
    headers: { 'x-request-id': id, etag: `"${id}"`, ...RATE_HEADERS(remainingMinute) },
    body,
  };
}

let api: ScriptedServer;
beforeEach(async () => {
  api = await startScripted();
});
afterEach(async () => {
  await api.close();
});

const client = () => clientOf(api);

describe('responseOf', () => {
  it('gives a page its answer, and each of its records the same', async () => {
    // Prepare
    const body = { data: [TAG(1), TAG(2)], page: { next_cursor: null } };
    api.script(answer('req_page', body, 41));

    // Act
    const page = await client().tags.listPage({ limit: 2 });

    // Assess
    const response = responseOf(page);
    expect(response).toEqual({
      status: 200,
      requestId: 'req_page',
      rateLimit: {
        limitMinute: 60,
        remainingMinute: 41,
        limitMonth: 5000,
        remainingMonth: 4041,
        reset: 1795000000,
      },
      url: `${api.baseUrl}/tags?limit=2`,
      retry: 0,
      headers: expect.any(Headers),
    });
    expect(response?.headers.get('etag')).toBe('"req_page"');
    expect(page.data.map((tag) => responseOf(tag))).toEqual([response, response]);
  });

  it('gives each record of a walk the answer of its page', async () => {
    api.script(
      answer('req_p1', { data: [TAG(1), TAG(2)], page: { next_cursor: 'c2' } }, 9),
      answer('req_p2', { data: [TAG(3)], page: { next_cursor: null } }, 8),
    );

    const seen: [number, string | undefined, number | undefined][] = [];
    for await (const tag of client().tags.list()) {
      const response = responseOf(tag);
      seen.push([tag.id, response?.requestId, response?.rateLimit?.remainingMinute]);
    }

    expect(seen).toEqual([
      [1, 'req_p1', 9],
      [2, 'req_p1', 9],
      [3, 'req_p2', 8],
    ]);
  });

  it("gives a detail its answer, and a 304's record the 304's (its own request id and rate limits)", async () => {
    const record = { data: { id: 1, name: 'Doepfer', country: 'DE' } };
    api.script(answer('req_first', record, 30), {
      status: 304,
      headers: { 'x-request-id': 'req_again', etag: '"req_first"', ...RATE_HEADERS(29) },
    });
    const tested = client();

    const first = await tested.manufacturers.get(1);
    const again = await tested.manufacturers.get(1);

    expect(responseOf(first)).toMatchObject({ status: 200, requestId: 'req_first' });
    expect(responseOf(again)).toMatchObject({
      status: 304,
      requestId: 'req_again',
      rateLimit: { remainingMinute: 29 },
    });
    expect(again).toEqual(first);
    expect(again).not.toBe(first);
  });

  it('says which retry answered', async () => {
    api.script(
      {
        status: 503,
        headers: { 'x-request-id': 'req_down' },
        body: { error: { code: 'origin_unavailable', message: 'm', request_id: 'req_down' } },
      },
      answer('req_up', { data: [], page: { next_cursor: null } }),
    );

    const page = await client().tags.listPage();

    expect(responseOf(page)).toMatchObject({ status: 200, requestId: 'req_up', retry: 1 });
  });

  it('gives an error its answer; a network failure has none', async () => {
    api.script({
      status: 404,
      headers: { 'x-request-id': 'req_missing', ...RATE_HEADERS(3) },
      body: { error: { code: 'not_found', message: 'No module 9.', request_id: 'req_missing' } },
    });
    const missing = await client()
      .modules.get(9)
      .catch((error: unknown) => error as CatalogueApiError);
    const closed = api.baseUrl;
    await api.close();
    const unreachable = await new CatalogueClient({
      baseUrl: closed,
      apiKey: KEY,
      logger: false,
      maxRetries: 0,
    }).tags
      .listPage()
      .then(
        () => undefined,
        (error: unknown) => error as CatalogueApiError,
      );
    api = await startScripted();

    expect(responseOf(missing)).toMatchObject({
      status: 404,
      requestId: 'req_missing',
      rateLimit: { remainingMinute: 3 },
    });
    expect(unreachable?.code).toBe('network_error');
    expect(responseOf(unreachable!)).toBeUndefined();
  });

  it('changes nothing of the result: its keys, its JSON, its equality and its type; a copy has no answer', async () => {
    const body = { data: [TAG(1)], page: { next_cursor: 'n' } };
    api.script(answer('req_shape', body));

    const page = await client().tags.listPage();

    expect(Object.keys(page)).toEqual(['data', 'nextCursor', 'next_cursor']);
    expect(JSON.stringify(page.data)).toBe(JSON.stringify(body.data));
    expect(page).toEqual({ data: [TAG(1)], nextCursor: 'n', next_cursor: 'n' });
    expectTypeOf(page).toEqualTypeOf<Page<Tag>>();
    expect(responseOf({ ...page.data[0]! })).toBeUndefined();
    expect(responseOf({})).toBeUndefined();
    expectTypeOf(responseOf).returns.toEqualTypeOf<ResponseInfo | undefined>();
    expectTypeOf<Parameters<typeof responseOf>[0]>().toEqualTypeOf<object>();
    expectTypeOf<Module>().not.toHaveProperty('lastResponse');
  });
});
