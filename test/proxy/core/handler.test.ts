/**
 * Every rule of docs/api.md and every decision of docs/api.md#decisions-the-specification-left-open, over the real builder output of the
 * fixture served from s3rver. Grouped as happy / error / security; every answer is validated against the
 * OpenAPI document by the harness.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LICENSE_LINK } from '../../../proxy/http/headers.js';
import { ALLOW_HEADER } from '../../../proxy/request/routes.js';
import { MODULE_FIELDS, sortRecords } from '../../../store/schema.js';
import { filteredModules, manufacturerRecord, moduleRecord } from '../../helpers/expected.js';
import { KEYS, type Stack, startStack } from '../../helpers/proxy.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.dispose();
});

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const RATE_LIMIT_HEADERS = [
  'x-ratelimit-limit-month',
  'x-ratelimit-remaining-month',
  'x-ratelimit-limit-minute',
  'x-ratelimit-remaining-minute',
  'x-ratelimit-reset',
];

describe('happy: lists', () => {
  it('modules: default page is 50 records by id, all fields, no relations, with a cursor', async () => {
    const answer = await stack.call('GET', '/v1/modules');
    expect(answer.status).toBe(200);
    const body = answer.json();
    const expected = filteredModules(stack.snapshot, {}).slice(0, 50);
    expect(body.data).toEqual(expected.map((m) => moduleRecord(stack.snapshot, m)));
    expect(typeof body.page.next_cursor).toBe('string');
  });

  it.each([
    ['/v1/manufacturers', 'manufacturers'],
    ['/v1/standards', 'standards'],
    ['/v1/tags', 'tags'],
  ] as const)('%s lists every record by id, then by natural name', async (path, kind) => {
    const all = stack.snapshot[kind] as { id: number; name: string }[];
    for (const sort of ['id', 'name'] as const) {
      const answer = await stack.call('GET', `${path}?limit=100&sort=${sort}`);
      const body = answer.json();
      expect(body.data.map((r: { id: number }) => r.id)).toEqual(
        sortRecords(all, sort)
          .slice(0, 100)
          .map((r) => r.id),
      );
      expect(body.page.next_cursor).toBe(all.length > 100 ? expect.any(String) : null);
    }
    const defaults = await stack.call('GET', path);
    expect(defaults.json().data[0]).toEqual(expect.objectContaining({ id: sortRecords(all, 'id')[0]!.id }));
  });

  it('standards include 0 (3U) and tags carry their type', async () => {
    const standards = (await stack.call('GET', '/v1/standards')).json();
    expect(standards.data[0]).toEqual({ id: 0, name: expect.any(String), height_mm: expect.any(Number) });
    const tags = (await stack.call('GET', '/v1/tags?limit=100')).json();
    for (const tag of tags.data) expect(Object.keys(tag)).toEqual(['id', 'name', 'type']);
  });

  it('sort=name is natural and case/accent-insensitive, ties by id', async () => {
    const body = (await stack.call('GET', '/v1/modules?sort=name&limit=100&fields=name')).json();
    const expected = filteredModules(stack.snapshot, {}, 'name').slice(0, 100);
    expect(body.data).toEqual(expected.map((m) => ({ id: m.id, name: m.name })));
  });

  it.each([1, 7, 49, 100])('limit=%i gives that many records', async (limit) => {
    const body = (await stack.call('GET', `/v1/modules?limit=${limit}`)).json();
    expect(body.data).toHaveLength(limit);
  });

  it('fields: record keys are id ∪ fields ∪ includes, in schema order', async () => {
    const cases: [string, string[]][] = [
      ['fields=name', ['id', 'name']],
      ['fields=id', ['id']],
      ['fields=hp,name', ['id', 'name', 'hp']],
      ['fields=name&include=tags', ['id', 'name', 'tags']],
      ['include=panels,ins', [...MODULE_FIELDS, 'ins', 'panels']],
      ['fields=standard&include=ins,outs,tags,panels', ['id', 'standard', 'ins', 'outs', 'tags', 'panels']],
    ];
    for (const [query, keys] of cases) {
      const body = (await stack.call('GET', `/v1/modules?limit=3&${query}`)).json();
      for (const record of body.data) expect(Object.keys(record)).toEqual(keys);
    }
  });

  it('fields and include are sets: order and repeats give the same bytes and ETag', async () => {
    const a = await stack.call('GET', '/v1/modules?limit=5&fields=name,hp&include=tags,ins');
    const b = await stack.call('GET', '/v1/modules?limit=5&fields=hp,name,hp&include=ins,tags,tags');
    expect(b.body).toEqual(a.body);
    expect(b.headers.etag).toBe(a.headers.etag);
  });

  it('omitted sort is sort=id: same bytes and ETag', async () => {
    const a = await stack.call('GET', '/v1/modules?limit=5');
    const b = await stack.call('GET', '/v1/modules?limit=5&sort=id');
    expect(b.body).toEqual(a.body);
    expect(b.headers.etag).toBe(a.headers.etag);
  });

  it('included relations are the module’s jacks, tags and panels', async () => {
    const body = (await stack.call('GET', '/v1/modules?limit=20&include=ins,outs,tags,panels')).json();
    const expected = filteredModules(stack.snapshot, {}).slice(0, 20);
    expect(body.data).toEqual(
      expected.map((m) => moduleRecord(stack.snapshot, m, undefined, ['ins', 'outs', 'tags', 'panels'])),
    );
    const keys = new Set<string>();
    JSON.stringify(body, (key, value) => {
      keys.add(key);
      return value;
    });
    for (const key of keys) expect(key).not.toMatch(/image|url|price|store|shop/i);
  });
});

describe('happy: filters', () => {
  it('each filter alone, and combined, matches the snapshot', async () => {
    const { snapshot } = stack;
    const sample = snapshot.modules.find((m) => m.tag_ids.length > 0)!;
    const combos = [
      { manufacturer_id: sample.manufacturer_id },
      { hp: sample.hp },
      { standard: sample.standard },
      { standard: 0 },
      { tag: sample.tag_ids[0]! },
      { manufacturer_id: sample.manufacturer_id, hp: sample.hp },
      { standard: sample.standard, tag: sample.tag_ids[0]! },
      {
        manufacturer_id: sample.manufacturer_id,
        hp: sample.hp,
        standard: sample.standard,
        tag: sample.tag_ids[0]!,
      },
    ];
    for (const filters of combos) {
      for (const sort of ['id', 'name'] as const) {
        const query = new URLSearchParams({
          ...Object.fromEntries(Object.entries(filters).map(([k, v]) => [k, String(v)])),
          sort,
          limit: '100',
          fields: 'name',
        });
        const body = (await stack.call('GET', `/v1/modules?${query}`)).json();
        const expected = filteredModules(snapshot, filters, sort).slice(0, 100);
        expect(expected.length).toBeGreaterThan(0);
        expect(body.data).toEqual(expected.map((m) => ({ id: m.id, name: m.name })));
      }
    }
  });

  it.each([
    'manufacturer_id=999999',
    'hp=999',
    'tag=999999',
    'standard=999',
    'manufacturer_id=1&hp=1&standard=5&tag=1',
    'manufacturer_id=9007199254740991',
  ])('a filter that matches nothing (%s) is 200 with [] and next_cursor null', async (query) => {
    const answer = await stack.call('GET', `/v1/modules?${query}`);
    expect(answer.status).toBe(200);
    expect(answer.body?.toString()).toBe('{"data":[],"page":{"next_cursor":null}}');
    expect(answer.headers.etag).toMatch(/^"/);
    expect(answer.headers.link).toBe(LICENSE_LINK);
  });
});

describe('happy: details', () => {
  it('module detail is {"data": record}; include adds relations', async () => {
    const module = stack.snapshot.modules[3]!;
    const plain = await stack.call('GET', `/v1/modules/${module.id}`);
    expect(plain.json()).toEqual({ data: moduleRecord(stack.snapshot, module) });
    const full = await stack.call('GET', `/v1/modules/${module.id}?include=tags,panels,ins,outs`);
    expect(full.json()).toEqual({
      data: moduleRecord(stack.snapshot, module, undefined, ['ins', 'outs', 'tags', 'panels']),
    });
    expect(full.headers.etag).not.toBe(plain.headers.etag);
  });

  it('manufacturer detail: include=modules adds its modules by id', async () => {
    const id = stack.snapshot.manufacturers[0]!.id;
    expect((await stack.call('GET', `/v1/manufacturers/${id}`)).json()).toEqual({
      data: manufacturerRecord(stack.snapshot, id, false),
    });
    expect((await stack.call('GET', `/v1/manufacturers/${id}?include=modules`)).json()).toEqual({
      data: manufacturerRecord(stack.snapshot, id, true),
    });
  });

  it('a manufacturer without modules has modules: []', async () => {
    const lonely = stack.snapshot.manufacturers.find(
      (m) => !stack.snapshot.modules.some((x) => x.manufacturer_id === m.id),
    );
    if (!lonely) return;
    expect(
      (await stack.call('GET', `/v1/manufacturers/${lonely.id}?include=modules`)).json().data.modules,
    ).toEqual([]);
  });
});

describe('happy: headers, ETags, HEAD, OPTIONS', () => {
  it('every answer says nosniff: 200, 304, 204, 400, 401, 404, 405', async () => {
    const first = await stack.call('GET', '/v1/tags');
    const answers = [
      first,
      await stack.call('GET', '/v1/tags', { ...auth(KEYS.main), 'if-none-match': first.headers.etag! }),
      await stack.call('OPTIONS', '/v1/tags'),
      await stack.call('GET', '/v1/tags?limit=0'),
      await stack.call('GET', '/v1/tags', {}),
      await stack.call('GET', '/v1/modules/999999'),
      await stack.call('DELETE', '/v1/tags'),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 304, 204, 400, 401, 404, 405]);
    for (const answer of answers) expect(answer.headers['x-content-type-options']).toBe('nosniff');
  });

  it('a 200 carries ETag, Link, Cache-Control, X-Request-Id, content type and length, and rate limits', async () => {
    const answer = await stack.call('GET', '/v1/tags');
    expect(answer.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(answer.body!.byteLength),
      'cache-control': 'private, no-cache',
      link: '<https://creativecommons.org/licenses/by/4.0/>; rel="license"',
      etag: expect.stringMatching(/^"[A-Za-z0-9_-]{22}"$/),
      'x-request-id': expect.stringMatching(/^req_/),
    });
    for (const name of RATE_LIMIT_HEADERS) expect(answer.headers[name]).toMatch(/^[0-9]+$/);
  });

  it('the same query gives the same ETag; limit and fields change it', async () => {
    const a = await stack.call('GET', '/v1/modules?limit=10');
    const b = await stack.call('GET', '/v1/modules?limit=10');
    const c = await stack.call('GET', '/v1/modules?limit=11');
    const d = await stack.call('GET', '/v1/modules?limit=10&fields=name');
    expect(b.headers.etag).toBe(a.headers.etag);
    expect(new Set([a.headers.etag, c.headers.etag, d.headers.etag]).size).toBe(3);
  });

  describe.each([
    ['first page', '/v1/modules?limit=10'],
    ['detail', `/v1/modules/101?include=tags`],
    ['manufacturer detail', '/v1/manufacturers/1?include=modules'],
    ['empty list', '/v1/modules?hp=999'],
    ['tags', '/v1/tags?sort=name'],
  ])('If-None-Match on a %s', (_, target) => {
    it.each([
      { sent: 'the ETag', header: (etag: string) => etag, status: 304 },
      { sent: 'the weak ETag', header: (etag: string) => `W/${etag}`, status: 304 },
      { sent: 'a list holding it', header: (etag: string) => `"nope", ${etag}`, status: 304 },
      { sent: '*', header: () => '*', status: 304 },
      { sent: 'another tag', header: () => '"AAAAAAAAAAAAAAAAAAAAAA"', status: 200 },
      { sent: 'an unquoted tag', header: (etag: string) => etag.slice(1, -1), status: 200 },
    ])('$sent → $status', async ({ header, status }) => {
      const first = await stack.call('GET', target);
      const etag = first.headers.etag!;
      const answer = await stack.call('GET', target, { ...auth(KEYS.main), 'if-none-match': header(etag) });
      expect(answer.status).toBe(status);
      if (status === 304) {
        expect(answer.body).toBeUndefined();
        expect(Object.keys(answer.headers).sort()).toEqual(
          [
            'cache-control',
            'etag',
            'vary',
            'x-content-type-options',
            'x-request-id',
            ...RATE_LIMIT_HEADERS,
          ].sort(),
        );
        expect(answer.headers.etag).toBe(etag);
      }
    });
  });

  it('If-None-Match does not apply to errors', async () => {
    const answer = await stack.call('GET', '/v1/modules/999999', {
      ...auth(KEYS.main),
      'if-none-match': '*',
    });
    expect(answer.status).toBe(404);
  });

  it.each([
    '/v1/modules?limit=3',
    '/v1/modules/101',
    '/v1/manufacturers/1?include=modules',
    '/v1/standards',
    '/v1/modules?limit=0',
    '/v1/modules/999999',
    '/v1/nope',
  ])('HEAD %s: the GET headers, no body', async (target) => {
    const get = await stack.call('GET', target);
    const head = await stack.call('HEAD', target);
    expect(head.status).toBe(get.status);
    expect(head.body).toBeUndefined();
    const {
      'x-request-id': _a,
      'x-ratelimit-remaining-month': _b,
      'x-ratelimit-remaining-minute': _c,
      ...getHeaders
    } = get.headers;
    const {
      'x-request-id': _d,
      'x-ratelimit-remaining-month': _e,
      'x-ratelimit-remaining-minute': _f,
      ...headHeaders
    } = head.headers;
    expect(headHeaders).toEqual(getHeaders);
  });

  it.each([
    '/v1/modules',
    '/v1/modules/101',
    '/v1/modules/999999',
    '/v1/manufacturers/1',
    '/v1/standards',
    '/v1/tags',
    '/v1/manufacturers',
  ])('OPTIONS %s is an authenticated 204 with Allow', async (path) => {
    const answer = await stack.call('OPTIONS', path);
    expect(answer.status).toBe(204);
    expect(answer.body).toBeUndefined();
    expect(answer.headers.allow).toBe(ALLOW_HEADER);
    for (const name of RATE_LIMIT_HEADERS) expect(answer.headers[name]).toBeDefined();
    expect((await stack.call('OPTIONS', path, {})).status).toBe(401);
  });

  it('OPTIONS checks the route and the parameters like GET', async () => {
    expect((await stack.call('OPTIONS', '/v1/nope')).status).toBe(404);
    expect((await stack.call('OPTIONS', '/v1/modules?limit=0')).json().error.code).toBe('invalid_parameter');
    expect((await stack.call('OPTIONS', '/v1/modules/abc')).json().error.code).toBe('invalid_parameter');
  });
});

describe('error: method, authentication, quota', () => {
  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'CONNECT', 'TRACE', 'PROPFIND', 'get'])(
    '%s is 405 on any path, before authentication, with Allow and the envelope',
    async (method) => {
      for (const path of ['/v1/modules', '/v1/modules/abc', '/v1/nope', '/']) {
        const lookups = stack.keys.lookups;
        const calls = stack.quota.calls;
        for (const headers of [{}, auth(KEYS.unknown), { authorization: 'junk' }]) {
          const answer = await stack.call(method, path, headers);
          expect(answer.status).toBe(405);
          expect(answer.headers.allow).toBe('GET, HEAD, OPTIONS');
          expect(answer.json().error).toMatchObject({
            code: 'method_not_allowed',
            request_id: answer.headers['x-request-id'],
          });
          expect(answer.headers['x-ratelimit-limit-month']).toBeUndefined();
        }
        expect(stack.keys.lookups).toBe(lookups);
        expect(stack.quota.calls).toBe(calls);
      }
    },
  );

  it.each([
    [{}, 'missing_authorization'],
    [{ authorization: '' }, 'missing_authorization'],
    [{ authorization: KEYS.main }, 'malformed_authorization'],
    [{ authorization: `Basic ${KEYS.main}` }, 'malformed_authorization'],
    [{ authorization: `Bearer  ${KEYS.main}` }, 'malformed_authorization'],
    [{ authorization: `Bearer ${KEYS.main}x` }, 'malformed_authorization'],
    [{ authorization: 'Bearer pk_live_short' }, 'malformed_authorization'],
    [{ authorization: `Bearer ${KEYS.unknown}` }, 'invalid_key'],
    [{ authorization: `Bearer ${KEYS.revoked}` }, 'invalid_key'],
    [{ authorization: `Bearer ${KEYS.expired}` }, 'invalid_key'],
  ])('%j → 401 %s on every route, unmetered', async (headers, code) => {
    const calls = stack.quota.calls;
    for (const target of [
      '/v1/modules',
      '/v1/modules/101',
      '/v1/nope',
      '/v1/modules?q=x',
      '/v1/modules/999999',
    ]) {
      for (const method of ['GET', 'HEAD', 'OPTIONS']) {
        const answer = await stack.call(method, target, headers);
        expect(answer.status).toBe(401);
        if (method === 'GET') expect(answer.json().error.code).toBe(code);
        expect(answer.headers['www-authenticate']).toBe('Bearer realm="catalogue"');
        expect(answer.headers['x-ratelimit-limit-month']).toBeUndefined();
      }
    }
    expect(stack.quota.calls).toBe(calls);
  });

  it('the Bearer scheme is case-insensitive', async () => {
    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      expect((await stack.call('GET', '/v1/tags', { authorization: `${scheme} ${KEYS.main}` })).status).toBe(
        200,
      );
    }
  });

  it('429 after the minute quota, with Retry-After and rate-limit headers; it outranks 404 and 400', async () => {
    const key = `pk_live_${'Q'.repeat(22)}`;
    stack.keys.add(key, { limits: { minute: 3, month: 100 }, keyId: 'key_quota' });
    const statuses: number[] = [];
    const remaining: string[] = [];
    for (const target of ['/v1/tags', '/v1/tags', '/v1/tags']) {
      const answer = await stack.call('GET', target, auth(key));
      statuses.push(answer.status);
      remaining.push(answer.headers['x-ratelimit-remaining-minute']!);
    }
    expect(statuses).toEqual([200, 200, 200]);
    expect(remaining).toEqual(['2', '1', '0']);
    for (const target of ['/v1/tags', '/v1/nope', '/v1/modules?limit=0', '/v1/modules/999999']) {
      const answer = await stack.call('GET', target, auth(key));
      expect(answer.status).toBe(429);
      expect(answer.json().error.code).toBe('rate_limit_exceeded');
      expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(answer.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(answer.headers['x-ratelimit-remaining-minute']).toBe('0');
      expect(answer.headers['x-ratelimit-limit-minute']).toBe('3');
      expect(Number(answer.headers['x-ratelimit-reset']) % 60).toBe(0);
    }
  });

  it('the free tier has 60 per minute and 5000 per month', async () => {
    const key = `pk_live_${'T'.repeat(22)}`;
    stack.keys.add(key);
    const answer = await stack.call('GET', '/v1/standards', auth(key));
    expect(answer.headers).toMatchObject({
      'x-ratelimit-limit-month': '5000',
      'x-ratelimit-remaining-month': '4999',
      'x-ratelimit-limit-minute': '60',
      'x-ratelimit-remaining-minute': '59',
    });
  });

  it('what counts: 200, 204, 304, 400, 404 and HEAD; not 401, 405 or 429', async () => {
    const key = `pk_live_${'C'.repeat(22)}`;
    stack.keys.add(key, { limits: { minute: 1000, month: 1000 } });
    const etag = (await stack.call('GET', '/v1/tags', auth(key))).headers.etag!;
    const counted: [string, string, Record<string, string>][] = [
      ['GET', '/v1/tags', {}],
      ['HEAD', '/v1/tags', {}],
      ['OPTIONS', '/v1/tags', {}],
      ['GET', '/v1/tags', { 'if-none-match': etag }],
      ['GET', '/v1/modules?limit=0', {}],
      ['GET', '/v1/nope', {}],
      ['GET', '/v1/modules/999999', {}],
    ];
    let expected = 999;
    for (const [method, target, headers] of counted) {
      const answer = await stack.call(method, target, { ...auth(key), ...headers });
      expect(Number(answer.headers['x-ratelimit-remaining-month'])).toBe(--expected);
    }
    await stack.call('DELETE', '/v1/tags', auth(key));
    await stack.call('GET', '/v1/tags', { authorization: `Bearer ${key}x` });
    expect((await stack.call('GET', '/v1/tags', auth(key))).headers['x-ratelimit-remaining-month']).toBe(
      String(--expected),
    );
  });
});

describe('error: a key revoked at the meter (its counters stopped)', () => {
  it('is 401 invalid_key, not counted, logged with its key id; read or from the byte cache alike', async () => {
    const logs: { status: number; key_id: string | null }[] = [];
    let metered = 0;
    const handle = stack.handler({
      quota: {
        meter: async () => {
          metered++;
          return { ok: false, reason: 'stopped' };
        },
        refund: () => Promise.reject(new Error('nothing was counted')),
      },
      log: (line) => logs.push(line),
    });

    // The first answer is read while it is metered, the second comes from the handler's byte cache.
    const read = await stack.call('GET', '/v1/standards', auth(KEYS.main), handle);
    const cached = await stack.call('GET', '/v1/standards', auth(KEYS.main), handle);

    for (const answer of [read, cached]) {
      expect(answer.status).toBe(401);
      expect(answer.json().error.code).toBe('invalid_key');
      for (const header of RATE_LIMIT_HEADERS) expect(answer.headers[header]).toBeUndefined();
    }
    expect(metered).toBe(2);
    expect(logs.map(({ status, key_id }) => ({ status, key_id }))).toEqual([
      { status: 401, key_id: expect.stringMatching(/^key_/) },
      { status: 401, key_id: expect.stringMatching(/^key_/) },
    ]);
  });
});

describe('error: routes, parameters, resources', () => {
  it.each([
    '/v1/nope',
    '/v1/standards/0',
    '/v1/tags/1',
    '/v1/modules/',
    '/v1/modules/1/ins',
    '/v1',
    '/',
    '/V1/modules',
    '/v1/Modules',
  ])('unknown route %s is 404 not_found after authentication', async (path) => {
    const answer = await stack.call('GET', path);
    expect(answer.status).toBe(404);
    expect(answer.json().error.code).toBe('not_found');
    expect(answer.headers['x-ratelimit-limit-month']).toBeDefined();
    expect((await stack.call('GET', path, {})).status).toBe(401);
  });

  it.each([
    ['/v1/modules?q=x', 'unsupported_parameter'],
    ['/v1/tags?q=', 'unsupported_parameter'],
    ['/v1/modules/101?q=x', 'unsupported_parameter'],
    ['/v1/modules?q=x&foo=1&limit=0', 'unsupported_parameter'],
    ['/v1/modules?foo=1&limit=0', 'unknown_parameter'],
    ['/v1/modules?Limit=5', 'unknown_parameter'],
    ['/v1/tags?fields=name', 'unknown_parameter'],
    ['/v1/tags?include=modules', 'unknown_parameter'],
    ['/v1/standards?hp=4', 'unknown_parameter'],
    ['/v1/modules/101?fields=name', 'unknown_parameter'],
    ['/v1/modules/101?limit=5', 'unknown_parameter'],
    ['/v1/manufacturers/1?include=tags', 'invalid_parameter'],
    ['/v1/modules?sort=NAME', 'invalid_parameter'],
    ['/v1/modules?sort=name&sort=id', 'invalid_parameter'],
    ['/v1/modules?limit=', 'invalid_parameter'],
    ['/v1/modules?limit=1&limit=2', 'invalid_parameter'],
    ['/v1/modules?limit=101', 'invalid_parameter'],
    ['/v1/modules?limit=05', 'invalid_parameter'],
    ['/v1/modules?manufacturer_id=0', 'invalid_parameter'],
    ['/v1/modules?manufacturer_id=abc', 'invalid_parameter'],
    ['/v1/modules?tag=-1', 'invalid_parameter'],
    ['/v1/modules?standard=01', 'invalid_parameter'],
    ['/v1/modules?hp=4.5', 'invalid_parameter'],
    ['/v1/modules?fields=ins', 'invalid_parameter'],
    ['/v1/modules?fields=image_url', 'invalid_parameter'],
    ['/v1/modules?include=modules', 'invalid_parameter'],
    ['/v1/modules?cursor=', 'invalid_parameter'],
    ['/v1/modules?cursor=not-a-cursor', 'invalid_parameter'],
    ['/v1/modules/abc', 'invalid_parameter'],
    ['/v1/modules/0', 'invalid_parameter'],
    ['/v1/modules/01', 'invalid_parameter'],
    ['/v1/manufacturers/-1', 'invalid_parameter'],
    ['/v1/modules/9007199254740992', 'invalid_parameter'],
  ])('%s → 400 %s', async (target, code) => {
    const answer = await stack.call('GET', target);
    expect(answer.status).toBe(400);
    expect(answer.json().error).toEqual({
      code,
      message: expect.any(String),
      request_id: answer.headers['x-request-id'],
    });
  });

  it.each([
    '/v1/modules/999999',
    '/v1/modules/1',
    '/v1/manufacturers/999999',
    '/v1/modules/9007199254740991',
  ])('a well-formed id that does not exist (%s) is 404 not_found', async (path) => {
    const answer = await stack.call('GET', path);
    expect(answer.status).toBe(404);
    expect(answer.json().error.code).toBe('not_found');
  });
});

describe('security', () => {
  it('one log line per request, with route template and key id, never the key', async () => {
    const before = stack.logs.length;
    await stack.call('GET', '/v1/modules/101?include=tags');
    await stack.call('GET', '/v1/nope', auth(KEYS.unknown));
    await stack.call('POST', '/v1/tags');
    const lines = stack.logs.slice(before);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      request_id: expect.stringMatching(/^req_/),
      method: 'GET',
      route: '/v1/modules/{id}',
      status: 200,
      latency_ms: expect.any(Number),
      bytes: expect.any(Number),
      key_id: 'key_main',
    });
    expect(lines[1]).toMatchObject({ route: 'unknown', status: 401, key_id: null });
    expect(lines[2]).toMatchObject({
      route: '/v1/tags',
      status: 405,
      key_id: null,
      bytes: expect.any(Number),
    });
  });

  it('logs a refused known key (revoked, expired) by its key id, an unknown one without', async () => {
    const before = stack.logs.length;
    await stack.call('GET', '/v1/tags', auth(KEYS.revoked));
    await stack.call('GET', '/v1/tags', auth(KEYS.expired));
    await stack.call('GET', '/v1/tags', auth(KEYS.unknown));

    expect(stack.logs.slice(before).map(({ status, key_id }) => ({ status, key_id }))).toEqual([
      { status: 401, key_id: 'key_revoked' },
      { status: 401, key_id: 'key_expired' },
      { status: 401, key_id: null },
    ]);
  });

  it('refuses a key from its expiry on, to the millisecond of the clock', async () => {
    const clock = { ms: Date.parse('2025-12-31T23:59:59.999Z') };
    const handle = stack.handler({ now: () => new Date(clock.ms) });

    const before = await stack.call('GET', '/v1/tags', auth(KEYS.expired), handle);
    clock.ms += 1;
    const at = await stack.call('GET', '/v1/tags', auth(KEYS.expired), handle);

    expect(before.status).toBe(200);
    expect(at.status).toBe(401);
    expect(at.json().error.code).toBe('invalid_key');
  });

  it("a log line's time is the clock's when the request is handled, to the millisecond", async () => {
    const logs: { time: string }[] = [];
    const clock = { ms: Date.UTC(2026, 10, 23, 12, 0, 0, 7) };
    const handle = stack.handler({ now: () => new Date(clock.ms), log: (line) => logs.push(line) });
    for (const step of [0, 0, 1, 999, 0, 86_400_000]) {
      clock.ms += step;
      await stack.call('GET', '/v1/tags', auth(KEYS.main), handle);
      expect(logs.at(-1)?.time).toBe(new Date(clock.ms).toISOString());
    }
  });

  it('reads the clock once per request: key expiry, metering and the log line share that time', async () => {
    // A clock that moves on at every read: two reads by the request path would show as two times.
    const clock = { ms: 0, reads: 0 };
    const metered: Date[] = [];
    const logs: { time: string; status: number }[] = [];
    const handle = stack.handler({
      now: () => {
        clock.reads++;
        return new Date(clock.ms++);
      },
      quota: {
        meter: async (key, now) => {
          metered.push(now);
          return stack.quota.meter(key, now);
        },
        refund: (key, now, admission) => stack.quota.refund(key, now, admission),
      },
      log: (line) => logs.push(line),
    });
    // The catalogue's pointer cache keeps its own time (its TTL): warmed first, so that it reads no pointer.
    clock.ms = Date.parse('2025-12-31T23:59:59.900Z');
    await stack.call('GET', '/v1/tags', auth(KEYS.main), handle);
    // The expired key's last accepted millisecond: a second read would see it expired.
    clock.ms = Date.parse('2025-12-31T23:59:59.999Z');
    const before = { reads: clock.reads, ms: clock.ms };
    const answer = await stack.call('GET', '/v1/tags', auth(KEYS.expired), handle);

    expect(answer.status).toBe(200);
    expect(clock.reads - before.reads).toBeGreaterThan(1); // the pointer cache's TTL checks read it too
    expect(metered.at(-1)?.getTime()).toBe(before.ms);
    expect(logs.at(-1)).toMatchObject({ status: 200, time: new Date(before.ms).toISOString() });

    // A refused key is answered before the catalogue is read: the request path's one read, and only it.
    const reads = clock.reads;
    const refused = await stack.call('GET', '/v1/tags', auth(KEYS.revoked), handle);
    expect(refused.status).toBe(401);
    expect(clock.reads - reads).toBe(1);
    expect(logs.at(-1)).toMatchObject({ status: 401, time: new Date(clock.ms - 1).toISOString() });
  });

  it('no key ever appears in logs or answers', async () => {
    for (const key of Object.values(KEYS)) {
      for (const headers of [auth(key), { authorization: `Bearer  ${key}` }, { authorization: key }]) {
        const answer = await stack.call('GET', `/v1/modules?${key}=1`, headers);
        expect(answer.body?.toString() ?? '').not.toContain(key);
        expect(JSON.stringify(answer.headers)).not.toContain(key);
      }
    }
    const logged = JSON.stringify(stack.logs);
    for (const key of Object.values(KEYS)) expect(logged).not.toContain(key);
    expect(logged).not.toMatch(/pk_live_|Bearer/);
  });

  it('every answer carries a request id, also in the error envelope', async () => {
    const answer = await stack.call('GET', '/v1/modules?limit=0');
    expect(answer.json().error.request_id).toBe(answer.headers['x-request-id']);
  });
});
