/**
 * The client against a scripted local server: a 429 waits Retry-After plus a bounded jittered backoff, a 503
 * backs off with bounded full jitter (plus its Retry-After), every wait is warned about through the logger
 * (never silent), other 4xx are never retried, aborts reject promptly with their reason, malformed answers
 * become `invalid_response`, a deprecated parameter name still works with a warning, and an answer marked
 * `Deprecation` is warned about once. Waits are recorded, not slept (an injected sleep and random source),
 * except where an abort ends them.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  BACKOFF,
  CatalogueApiError,
  CatalogueClient,
  type CatalogueClientOptions,
  type RetryEvent,
} from '../../client/index.js';
import { errorAnswer, RATE_HEADERS, type ScriptedServer, startScripted } from './scripted.js';

const KEY = `pk_live_${'T'.repeat(22)}`;
const TAGS = {
  status: 200,
  headers: { etag: '"t1"' },
  body: { data: [{ id: 1, name: 'Analog', type: 'nature' }], page: { next_cursor: null } },
};

let api: ScriptedServer;
let waits: number[];
/** What the clients warned about, through their logger. */
let warnings: string[];

beforeEach(async () => {
  api = await startScripted();
  waits = [];
  warnings = [];
});
afterEach(async () => {
  await api.close();
});

/** A client whose waits are recorded and skipped (unless `real`), with jitter `random` (default 0.5). */
function client(options: Partial<CatalogueClientOptions> & { real?: boolean } = {}): CatalogueClient {
  const { real, ...rest } = options;
  return new CatalogueClient({
    baseUrl: api.baseUrl,
    apiKey: KEY,
    cache: false,
    random: () => 0.5,
    logger: { warn: (message) => warnings.push(message) },
    ...(real
      ? {}
      : {
          sleep: async (ms: number, signal?: AbortSignal) => {
            signal?.throwIfAborted();
            waits.push(ms);
          },
        }),
    ...rest,
  });
}

async function failure(promise: Promise<unknown>): Promise<CatalogueApiError> {
  const error = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(CatalogueApiError);
  return error as CatalogueApiError;
}

describe('429', () => {
  it('waits Retry-After plus the jittered backoff, then retries and succeeds', async () => {
    // Prepare
    api.script(errorAnswer(429, 'rate_limit_exceeded', { 'retry-after': '17', ...RATE_HEADERS(0) }), TAGS);

    // Act
    const page = await client({ random: () => 0.5 }).tags.listPage();

    // Assess: 17 s, and half of the first retry's 500 ms
    expect(page.data).toHaveLength(1);
    expect(api.requests).toHaveLength(2);
    expect(waits).toEqual([17_250]);
    // Not in silence: the logger was told before the wait.
    expect(warnings).toEqual([
      '[@catalogue/read-api-client] GET /v1/tags: 429 rate_limit_exceeded (req_rate_limit_exceeded); waiting 17.3 s before retry 1 of 3',
    ]);
  });

  it('sends the clients of one key, refused together, back at different times, never before Retry-After', async () => {
    // Prepare: eight clients refused with the same Retry-After, each with its own random source
    const limited = errorAnswer(429, 'rate_limit_exceeded', { 'retry-after': '4', ...RATE_HEADERS(0) });
    const draws = [0, 0.1, 0.25, 0.4, 0.5, 0.75, 0.9, 0.999];
    for (const _ of draws) api.script(limited, TAGS);

    // Act: one after the other, so that the script's answers pair up
    for (const draw of draws) await client({ random: () => draw }).tags.listPage();

    // Assess: all different, within [4 s, 4.5 s)
    expect(new Set(waits).size).toBe(draws.length);
    expect(waits.every((wait) => wait >= 4000 && wait < 4000 + BACKOFF.baseMs)).toBe(true);
    expect(waits).toEqual(draws.map((draw) => 4000 + Math.floor(draw * BACKOFF.baseMs)));
  });

  it('warns through console by default, and not at all with logger: false', async () => {
    const limited = errorAnswer(429, 'rate_limit_exceeded', { 'retry-after': '2', ...RATE_HEADERS(0) });
    api.script(limited, TAGS, limited, TAGS);
    const warned: unknown[] = [];
    const original = console.warn;
    console.warn = (...args: unknown[]) => warned.push(args.join(' '));
    try {
      await client({ logger: undefined }).tags.listPage();
      await client({ logger: false }).tags.listPage();
    } finally {
      console.warn = original;
    }

    expect(waits).toEqual([2250, 2250]);
    expect(warned).toEqual([
      '[@catalogue/read-api-client] GET /v1/tags: 429 rate_limit_exceeded (req_rate_limit_exceeded); waiting 2.3 s before retry 1 of 3',
    ]);
  });

  it('waits Retry-After and a growing jitter, up to maxRetries, then throws with retryAfter', async () => {
    const limited = errorAnswer(429, 'rate_limit_exceeded', { 'retry-after': '7', ...RATE_HEADERS(0) });
    api.script(limited, limited, limited);

    const error = await failure(client({ maxRetries: 2, random: () => 1 }).tags.listPage());

    // The jitter's ceiling doubles with each retry, as a 503's backoff does.
    expect(waits).toEqual([7500, 8000]);
    expect(api.requests).toHaveLength(3);
    expect(error).toMatchObject({
      status: 429,
      code: 'rate_limit_exceeded',
      requestId: 'req_rate_limit_exceeded',
      retryAfter: 7,
    });
  });

  it('throws at once when Retry-After is beyond maxRetryAfter (a spent monthly quota)', async () => {
    api.script(errorAnswer(429, 'rate_limit_exceeded', { 'retry-after': '86400' }));

    const error = await failure(client().tags.listPage());

    expect(waits).toEqual([]);
    expect(api.requests).toHaveLength(1);
    expect(error.retryAfter).toBe(86400);
  });

  it('waits Retry-After out when it is exactly maxRetryAfter, and the jitter on top', async () => {
    api.script(errorAnswer(429, 'rate_limit_exceeded', { 'retry-after': '5' }), TAGS);

    await client({ maxRetryAfter: 5, random: () => 0 }).tags.listPage();

    expect(waits).toEqual([5000]);
  });
});

describe('429 without Retry-After (from something in front of the API)', () => {
  it('waits at least a second plus the jittered backoff', async () => {
    api.script({ status: 429, body: 'Too Many Requests' }, TAGS);

    await client({ random: () => 0.5 }).tags.listPage();

    expect(waits).toEqual([1250]);
  });
});

describe('503', () => {
  it("adds the jittered backoff to a 503's Retry-After, and throws one beyond maxRetryAfter at once", async () => {
    api.script(errorAnswer(503, 'origin_unavailable', { 'retry-after': '3' }), TAGS);
    api.script(errorAnswer(503, 'origin_unavailable', { 'retry-after': '120' }));

    await client({ random: () => 0.5 }).tags.listPage();
    const error = await failure(client().tags.listPage());

    expect(waits).toEqual([3250]);
    expect(error).toMatchObject({ status: 503, code: 'origin_unavailable', retryAfter: 120 });
    expect(api.requests).toHaveLength(3);
  });

  it('backs off exponentially with full jitter, capped, then succeeds', async () => {
    const down = errorAnswer(503, 'origin_unavailable');
    api.script(down, down, down, down, down, down, TAGS);

    const page = await client({ maxRetries: 6, random: () => 1 }).tags.listPage();

    expect(page.data[0]?.name).toBe('Analog');
    expect(waits).toEqual([500, 1000, 2000, 4000, 8000, 8000]);
    expect(Math.max(...waits)).toBe(BACKOFF.capMs);
    expect(warnings.map((warning) => warning.replace(/.*; /, ''))).toEqual([
      'waiting 500 ms before retry 1 of 6',
      'waiting 1 s before retry 2 of 6',
      'waiting 2 s before retry 3 of 6',
      'waiting 4 s before retry 4 of 6',
      'waiting 8 s before retry 5 of 6',
      'waiting 8 s before retry 6 of 6',
    ]);
  });

  it('draws each wait from [0, ceiling): the jitter scales it', async () => {
    const down = errorAnswer(503, 'quota_unavailable');
    api.script(down, down, down, down);

    const error = await failure(client({ random: () => 0.25 }).tags.listPage());

    expect(waits).toEqual([125, 250, 500]);
    expect(api.requests).toHaveLength(4);
    expect(error).toMatchObject({ status: 503, code: 'quota_unavailable' });
  });

  it('retries network failures the same way and then reports network_error', async () => {
    const closed = `${api.baseUrl}`;
    await api.close();

    const error = await failure(
      new CatalogueClient({
        baseUrl: closed,
        apiKey: KEY,
        maxRetries: 2,
        random: () => 1,
        sleep: async (ms) => {
          waits.push(ms);
        },
        logger: { warn: (message) => warnings.push(message) },
      }).tags.listPage(),
    );

    expect(waits).toEqual([500, 1000]);
    expect(error).toMatchObject({ status: 0, code: 'network_error' });
    expect(warnings).toEqual([
      '[@catalogue/read-api-client] GET /v1/tags: network_error; waiting 500 ms before retry 1 of 2',
      '[@catalogue/read-api-client] GET /v1/tags: network_error; waiting 1 s before retry 2 of 2',
    ]);
    api = await startScripted();
  });
});

describe('onRetry', () => {
  it('is told status, code, attempt, wait, URL and request id before each retry, in order with the waits', async () => {
    // Prepare: a 429 with Retry-After, a 503, then the answer
    const limited = errorAnswer(429, 'rate_limit_exceeded', { 'retry-after': '3', ...RATE_HEADERS(0) });
    api.script(limited, errorAnswer(503, 'origin_unavailable'), TAGS);
    const told: { event: RetryEvent; waitsBefore: number }[] = [];

    // Act
    const page = await client({
      random: () => 0.5,
      onRetry: (event) => told.push({ event, waitsBefore: waits.length }),
    }).tags.listPage({ limit: 5 });

    // Assess: each call came before its wait, with the wait the client then made
    expect(page.data).toHaveLength(1);
    expect(told).toEqual([
      {
        event: {
          status: 429,
          code: 'rate_limit_exceeded',
          attempt: 1,
          waitMs: 3250,
          url: `${api.baseUrl}/tags?limit=5`,
          requestId: expect.stringMatching(/^req_/),
        },
        waitsBefore: 0,
      },
      {
        event: expect.objectContaining({ status: 503, code: 'origin_unavailable', attempt: 2, waitMs: 500 }),
        waitsBefore: 1,
      },
    ]);
    expect(waits).toEqual([3250, 500]);
  });

  it('is told about network failures (status 0, network_error) and not after the last attempt', async () => {
    const closed = api.baseUrl;
    await api.close();
    const told: RetryEvent[] = [];

    const error = await failure(
      new CatalogueClient({
        baseUrl: closed,
        apiKey: KEY,
        maxRetries: 2,
        random: () => 1,
        sleep: async () => {},
        onRetry: (event) => told.push(event),
        logger: false,
      }).tags.listPage(),
    );

    expect(error.code).toBe('network_error');
    expect(told.map(({ status, code, attempt, waitMs }) => ({ status, code, attempt, waitMs }))).toEqual([
      { status: 0, code: 'network_error', attempt: 1, waitMs: 500 },
      { status: 0, code: 'network_error', attempt: 2, waitMs: 1000 },
    ]);
    api = await startScripted();
  });

  it('is not told about errors that are not retried; what it throws rejects the call', async () => {
    api.script(errorAnswer(404, 'not_found'), errorAnswer(503, 'origin_unavailable'), TAGS);
    const told: RetryEvent[] = [];

    const missing = await failure(client({ onRetry: (event) => told.push(event) }).modules.get(9));
    const refused = await client({
      onRetry: () => {
        throw new Error('stop retrying');
      },
    })
      .tags.listPage()
      .catch((error: unknown) => error);

    expect(missing.code).toBe('not_found');
    expect(told).toEqual([]);
    expect(refused).toEqual(new Error('stop retrying'));
    expect(api.requests).toHaveLength(2);
  });
});

describe('no retry on other 4xx', () => {
  it.each([
    [400, 'invalid_parameter'],
    [401, 'invalid_key'],
    [404, 'not_found'],
  ])('%i %s is thrown after one request', async (status, code) => {
    api.script(errorAnswer(status, code, RATE_HEADERS(42)));
    const tested = client();

    const error = await failure(tested.modules.get(7));

    expect(api.requests).toHaveLength(1);
    expect(waits).toEqual([]);
    expect(error).toMatchObject({ status, code, message: `scripted ${code}`, requestId: `req_${code}` });
    expect(error.retryAfter).toBeUndefined();
    if (status !== 401) expect(tested.rateLimit?.remainingMinute).toBe(42);
  });
});

describe('aborts', () => {
  it('during a request: rejects with the reason', async () => {
    api.script(() => {}); // never answers
    const controller = new AbortController();
    const reason = new Error('user gave up');

    const pending = client().tags.listPage({ signal: controller.signal });
    await expect.poll(() => api.requests.length).toBe(1);
    controller.abort(reason);

    await expect(pending).rejects.toBe(reason);
  });

  it('during the wait for Retry-After: rejects promptly with the reason, without another request', async () => {
    api.script(errorAnswer(429, 'rate_limit_exceeded', { 'retry-after': '30' }), TAGS);
    const controller = new AbortController();
    const reason = new Error('shutting down');

    const started = performance.now();
    const pending = client({ real: true }).tags.listPage({ signal: controller.signal });
    await expect.poll(() => api.requests.length).toBe(1);
    controller.abort(reason);

    await expect(pending).rejects.toBe(reason);
    // Far below the 30 s it would have waited.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(api.requests).toHaveLength(1);
  });

  it('during a 503 backoff: rejects with the reason', async () => {
    api.script(errorAnswer(503, 'origin_unavailable'), TAGS);
    const controller = new AbortController();
    const reason = new Error('stop');

    const pending = client({ real: true, random: () => 1, maxRetries: 3 }).tags.listPage({
      signal: controller.signal,
    });
    await expect.poll(() => api.requests.length).toBe(1);
    controller.abort(reason);

    await expect(pending).rejects.toBe(reason);
    expect(api.requests).toHaveLength(1);
  });

  it('an already aborted signal sends nothing', async () => {
    const reason = new Error('before');

    await expect(client().tags.listPage({ signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(api.requests).toHaveLength(0);
  });

  it('stops an auto-paging walk between pages', async () => {
    const controller = new AbortController();
    const reason = new Error('enough');
    api.script({
      status: 200,
      body: { data: [{ id: 1, name: 'a', type: null }], page: { next_cursor: 'c2' } },
    });
    const seen: number[] = [];

    const walk = async () => {
      for await (const tag of client().tags.list({ signal: controller.signal })) {
        seen.push(tag.id);
        controller.abort(reason);
      }
    };

    await expect(walk()).rejects.toBe(reason);
    expect(seen).toEqual([1]);
    expect(api.requests).toHaveLength(1);
  });
});

describe('malformed answers', () => {
  it.each([
    ['a 200 that is not JSON', { status: 200, body: '<html>hello</html>' }, 200],
    ['a list without page', { status: 200, body: { data: [] } }, 200],
    [
      'a list whose next_cursor is a number',
      { status: 200, body: { data: [], page: { next_cursor: 3 } } },
      200,
    ],
    ['a list of non-records', { status: 200, body: { data: [1, 2], page: { next_cursor: null } } }, 200],
    ['a 400 without the envelope', { status: 400, body: 'Bad Request' }, 400],
    ['a 404 whose envelope has no code', { status: 404, body: { error: { message: 'x' } } }, 404],
  ])('%s → invalid_response', async (_label, answer, status) => {
    api.script({ ...answer, headers: { 'x-request-id': 'req_shape' } });

    const error = await failure(client().tags.listPage());

    expect(error).toMatchObject({ status, code: 'invalid_response', requestId: 'req_shape' });
    expect(api.requests).toHaveLength(1);
  });

  it('a detail that is not {"data": {record}} → invalid_response', async () => {
    api.script({ status: 200, body: { id: 101, name: 'A-110' } });

    const error = await failure(client().modules.get(101));

    expect(error.code).toBe('invalid_response');
  });

  it('a 502 page from something in front of the API is retried, then invalid_response', async () => {
    const gateway = { status: 502, body: '<html>Bad gateway</html>' };
    api.script(gateway, gateway);

    const error = await failure(client({ maxRetries: 1, random: () => 1 }).tags.listPage());

    expect(waits).toEqual([500]);
    expect(error).toMatchObject({ status: 502, code: 'invalid_response' });
  });
});

describe('requests', () => {
  it('sends the key, lists comma-joined and sorted, and follows next_cursor', async () => {
    const page = (ids: number[], next: string | null) => ({
      status: 200,
      body: { data: ids.map((id) => ({ id, name: `m${id}` })), page: { next_cursor: next } },
    });
    api.script(page([1, 2], 'AbC-_1'), page([3], null));
    const tested = client();

    const ids: number[] = [];
    for await (const module of tested.modules.list({
      manufacturerId: 1,
      hp: 8,
      standard: 0,
      tag: 3,
      sort: 'name',
      fields: ['name', 'hp'],
      include: ['tags', 'ins', 'tags'],
      limit: 2,
    })) {
      ids.push(module.id);
    }

    expect(ids).toEqual([1, 2, 3]);
    const first =
      '/v1/modules?fields=hp,name&hp=8&include=ins,tags&limit=2&manufacturer_id=1&sort=name&standard=0&tag=3';
    expect(api.requests.map((r) => r.url)).toEqual([first, first.replace('?', '?cursor=AbC-_1&')]);
    expect(api.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('still sends the deprecated manufacturer_id (as manufacturer_id), warning once per client', async () => {
    const empty = { status: 200, body: { data: [], page: { next_cursor: null } } };
    api.script(empty, empty, empty);
    const tested = client();

    const page = await tested.modules.listPage({ manufacturer_id: 12 });
    await tested.modules.listPage({ manufacturer_id: 12, manufacturerId: 12 });
    const conflicting = await tested.modules
      .listPage({ manufacturer_id: 12, manufacturerId: 13 })
      .catch((e) => e);

    expect(page).toEqual({ data: [], nextCursor: null, next_cursor: null });
    expect(api.requests.map((r) => r.url)).toEqual([
      '/v1/modules?manufacturer_id=12',
      '/v1/modules?manufacturer_id=12',
    ]);
    expect(conflicting).toBeInstanceOf(TypeError);
    expect(warnings).toEqual([
      '[@catalogue/read-api-client] manufacturer_id is deprecated since 0.2.0: use manufacturerId (removed in 0.4.0)',
    ]);
  });

  it('warns once per path about an answer marked Deprecation, naming its Sunset and notice', async () => {
    const deprecated = {
      ...TAGS,
      headers: {
        deprecation: '@1798761600',
        sunset: 'Thu, 01 Jul 2027 00:00:00 GMT',
        link: '<https://example.org/docs#/section/changes-to-the-api>; rel="deprecation"',
      },
    };
    api.script(deprecated, deprecated, TAGS);
    const tested = client();

    await tested.tags.listPage();
    await tested.tags.listPage({ limit: 5 });
    await tested.tags.listPage();

    expect(warnings).toEqual([
      '[@catalogue/read-api-client] GET /v1/tags answers with Deprecation: @1798761600; it may stop working after Thu, 01 Jul 2027 00:00:00 GMT; see https://example.org/docs#/section/changes-to-the-api',
    ]);
  });

  it('get sends include and returns the record itself', async () => {
    api.script({ status: 200, body: { data: { id: 1, name: 'Doepfer', country: 'DE', modules: [] } } });

    const manufacturer = await client().manufacturers.get(1, { include: ['modules'] });

    expect(manufacturer).toEqual({ id: 1, name: 'Doepfer', country: 'DE', modules: [] });
    expect(api.requests[0]!.url).toBe('/v1/manufacturers/1?include=modules');
  });
});
