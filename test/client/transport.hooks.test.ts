/**
 * The hooks (client/transport.ts): `onRequest` before each request, with the headers it may change and never
 * the key; `onResponse` with each whole answer, retried ones, errors and 304s included, and the time it took by
 * the client's clock; `onWarning` with each warning as an object, instead of the console (and beside `logger`
 * when one is given). Each is awaited, and what it throws rejects the call.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type {
  CatalogueClientOptions,
  ClientWarning,
  RequestEvent,
  ResponseEvent,
} from '../../client/index.js';
import {
  clientOf,
  errorAnswer,
  SCRIPTED_KEY as KEY,
  RATE_HEADERS,
  type ScriptedServer,
  startScripted,
  withConsole,
} from './scripted.js';

const TAGS = {
  status: 200,
  headers: { 'x-request-id': 'req_tags', etag: '"t"', ...RATE_HEADERS(5) },
  body: { data: [{ id: 1, name: 'Analog', type: 'nature' }], page: { next_cursor: null } },
};

let api: ScriptedServer;
beforeEach(async () => {
  api = await startScripted();
});
afterEach(async () => {
  await api.close();
});

/** A client of the scripted API whose warnings go where the test says (the console unless told). */
const client = (options: Partial<CatalogueClientOptions> = {}) =>
  clientOf(api, { logger: undefined, ...options });

describe('onRequest', () => {
  it('is told of each request with its URL, retry number and headers, without the key', async () => {
    // Prepare
    api.script(errorAnswer(503, 'origin_unavailable'), TAGS);
    const told: { url: string; retry: number; headers: Record<string, string> }[] = [];

    // Act
    await client({
      onRequest: ({ url, retry, headers }) => {
        const seen: Record<string, string> = {};
        headers.forEach((value, name) => {
          seen[name] = value;
        });
        told.push({ url, retry, headers: seen });
      },
    }).tags.listPage({ limit: 1 });

    // Assess
    expect(told.map(({ url, retry }) => [url, retry])).toEqual([
      [`${api.baseUrl}/tags?limit=1`, 0],
      [`${api.baseUrl}/tags?limit=1`, 1],
    ]);
    expect(Object.keys(told[0]!.headers).sort()).toEqual(['accept', 'user-agent']);
    expect(JSON.stringify(told)).not.toContain(KEY);
    expect(api.requests.map((request) => request.headers.authorization)).toEqual([
      `Bearer ${KEY}`,
      `Bearer ${KEY}`,
    ]);
  });

  it('may add headers and replace the User-Agent, but not the key; it is awaited', async () => {
    api.script(TAGS);

    await client({
      onRequest: async ({ headers }: RequestEvent) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        headers.set('traceparent', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
        headers.set('user-agent', 'synth-planner/2.1');
        headers.set('authorization', 'Bearer stolen');
      },
    }).tags.listPage();

    const { headers } = api.requests[0]!;
    expect(headers.traceparent).toBe('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
    expect(headers['user-agent']).toBe('synth-planner/2.1');
    expect(headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('rejects the call with what it throws, before anything is sent', async () => {
    const refusal = new Error('no requests after midnight');

    await expect(
      client({
        onRequest: () => {
          throw refusal;
        },
      }).tags.listPage(),
    ).rejects.toBe(refusal);
    expect(api.requests).toHaveLength(0);
  });
});

describe('onResponse', () => {
  it('is told of each answer, errors, retried ones and 304s included, with the time taken by the clock', async () => {
    // Prepare: a clock that moves 7 ms each time it is read
    let clock = 1_000;
    api.script(errorAnswer(429, 'rate_limit_exceeded', { 'retry-after': '0', ...RATE_HEADERS(0) }), TAGS, {
      status: 304,
      headers: { 'x-request-id': 'req_304', etag: '"t"', ...RATE_HEADERS(4) },
    });
    const told: ResponseEvent[] = [];
    const tested = client({ now: () => (clock += 7), onResponse: (event) => told.push(event) });

    // Act
    await tested.tags.listPage();
    await tested.tags.listPage();

    // Assess
    expect(
      told.map(({ status, requestId, retry, rateLimit }) => [
        status,
        requestId,
        retry,
        rateLimit?.remainingMinute,
      ]),
    ).toEqual([
      [429, 'req_rate_limit_exceeded', 0, 0],
      [200, 'req_tags', 1, 5],
      [304, 'req_304', 0, 4],
    ]);
    expect(told.every((event) => event.elapsedMs === 7 && event.url === `${api.baseUrl}/tags`)).toBe(true);
  });

  it('is awaited, and what it throws rejects the call (no retry follows)', async () => {
    api.script(errorAnswer(503, 'origin_unavailable'), TAGS);
    const order: string[] = [];
    const stop = new Error('circuit open');

    const outcome = await client({
      onResponse: async ({ status }) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        order.push(`response ${status}`);
        if (status === 503) throw stop;
      },
      onRetry: () => order.push('retry'),
    })
      .tags.listPage()
      .catch((error: unknown) => error);

    expect(outcome).toBe(stop);
    expect(order).toEqual(['response 503']);
    expect(api.requests).toHaveLength(1);
  });
});

describe('onWarning', () => {
  it('takes the warnings as objects instead of the console', async () => {
    // Prepare: a retry, a deprecated name, a deprecated answer
    api.script(errorAnswer(429, 'rate_limit_exceeded', { 'retry-after': '2' }), TAGS, {
      status: 200,
      headers: {
        deprecation: '@1798761600',
        sunset: 'Thu, 01 Jul 2027 00:00:00 GMT',
        link: '<https://x.example/n>; rel="deprecation"',
      },
      body: { data: [], page: { next_cursor: null } },
    });
    const warnings: ClientWarning[] = [];

    // Act
    const printed = await withConsole(async () => {
      const tested = client({ onWarning: (warning) => warnings.push(warning) });
      await tested.tags.listPage();
      await tested.modules.listPage({ manufacturer_id: 1 });
    });

    // Assess
    expect(printed).toEqual([]);
    expect(warnings).toEqual([
      {
        kind: 'retry',
        message:
          '[@catalogue/read-api-client] GET /v1/tags: 429 rate_limit_exceeded (req_rate_limit_exceeded); waiting 2 s before retry 1 of 3',
        retry: expect.objectContaining({
          status: 429,
          code: 'rate_limit_exceeded',
          attempt: 1,
          waitMs: 2000,
        }),
      },
      {
        kind: 'deprecated-name',
        message:
          '[@catalogue/read-api-client] manufacturer_id is deprecated since 0.2.0: use manufacturerId (removed in 0.4.0)',
        name: 'manufacturer_id',
        replacement: 'manufacturerId',
      },
      {
        kind: 'deprecated-answer',
        message:
          '[@catalogue/read-api-client] GET /v1/modules answers with Deprecation: @1798761600; it may stop working after Thu, 01 Jul 2027 00:00:00 GMT; see https://x.example/n',
        url: `${api.baseUrl}/modules?manufacturer_id=1`,
        deprecation: '@1798761600',
        sunset: 'Thu, 01 Jul 2027 00:00:00 GMT',
        link: 'https://x.example/n',
      },
    ]);
  });

  it('goes beside a logger that is given; without either, warnings go to the console', async () => {
    const limited = errorAnswer(429, 'rate_limit_exceeded', { 'retry-after': '1' });
    api.script(limited, TAGS, limited, TAGS);
    const kinds: string[] = [];
    const logged: string[] = [];

    const printed = await withConsole(async () => {
      await client({
        onWarning: (w) => kinds.push(w.kind),
        logger: { warn: (m) => logged.push(m) },
      }).tags.listPage();
      await client().tags.listPage();
    });

    expect(kinds).toEqual(['retry']);
    expect(logged).toHaveLength(1);
    expect(printed).toEqual(logged);
  });
});
