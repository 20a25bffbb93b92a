/**
 * The client against the real local stack: the proxy over the fixture's builder output on s3rver, keys and
 * quota on dynalite, served by the node:http adapter on an ephemeral loopback port. The client's answers
 * are compared with direct requests (plain fetch, cursors followed by hand); each answer's request id and rate
 * limits are reachable from what it returned, the hooks see the real answers, the proxy receives the client's
 * User-Agent, and the real errors' codes narrow in a `switch`.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type LocalServer, startDynamo } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTables } from '../../admin/tables.js';
import { dynamoClient, leanDynamo } from '../../aws/sdk.js';
import {
  CatalogueApiError,
  CatalogueClient,
  type CatalogueClientOptions,
  type ResponseEvent,
  responseOf,
  VERSION,
} from '../../client/index.js';
import { createHttpServer } from '../../proxy/adapters/http.js';
import { createProxy } from '../../proxy/app.js';
import { loadConfig } from '../../proxy/config.js';
import { registerKey } from '../helpers/admin.js';
import { CURSOR_SECRET, PREFIX, type Stack, startStack } from '../helpers/proxy.js';

const KEY = `pk_live_${'C'.repeat(22)}`;
const TABLES = { keysTable: 'client-keys', countersTable: 'client-counters' };

let stack: Stack;
let dynamo: LocalServer;
let http: Server;
let baseUrl: string;
/** The User-Agent of each request the proxy received. */
const userAgents: (string | undefined)[] = [];

beforeAll(async () => {
  [stack, dynamo] = await Promise.all([startStack(), startDynamo()]);
  const client = dynamoClient({ endpoint: dynamo.endpoint });
  await createTables(client, TABLES);
  const lean = leanDynamo(dynamo.endpoint);
  await registerKey({ dynamo: lean, ...TABLES }, KEY, {
    tier: 'partner',
    limits: { minute: 100_000, month: 1_000_000 },
  });
  await lean.close();
  client.destroy();
  const config = loadConfig({
    CATALOGUE_BUCKET: stack.s3.bucket,
    CATALOGUE_PREFIX: PREFIX,
    S3_ENDPOINT: stack.s3.endpoint,
    KEYS_TABLE: TABLES.keysTable,
    COUNTERS_TABLE: TABLES.countersTable,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    CURSOR_SECRET,
  });
  http = createHttpServer(createProxy(config, { log: () => {} }));
  http.on('request', (request) => userAgents.push(request.headers['user-agent']));
  await new Promise<void>((ready) => http.listen(0, '127.0.0.1', ready));
  baseUrl = `http://127.0.0.1:${(http.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  http?.closeAllConnections();
  await new Promise((done) => http?.close(done));
  await dynamo?.dispose();
  await stack?.dispose();
});

/** A client over a fetch that records each answer's status. */
function counted(options: Partial<CatalogueClientOptions> = {}) {
  const statuses: number[] = [];
  const client = new CatalogueClient({
    baseUrl,
    apiKey: KEY,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      statuses.push(response.status);
      return response;
    },
    ...options,
  });
  return { client, statuses };
}

/** Every record of a list by direct requests, following next_cursor by hand. */
async function walkDirectly(path: string, query: string): Promise<unknown[]> {
  const records: unknown[] = [];
  let cursor: string | null = null;
  do {
    const url: string = `${baseUrl}${path}?${query}${cursor ? `&cursor=${cursor}` : ''}`;
    const response = await fetch(url, { headers: { authorization: `Bearer ${KEY}` } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: unknown[]; page: { next_cursor: string | null } };
    records.push(...body.data);
    cursor = body.page.next_cursor;
  } while (cursor);
  return records;
}

describe('the client on the local stack', () => {
  it('walks all 204 modules with limit 7 in 30 requests, as direct requests do', async () => {
    const { client, statuses } = counted();

    const walked = [];
    for await (const module of client.modules.list({ limit: 7 })) walked.push(module);

    expect(walked).toHaveLength(stack.snapshot.modules.length);
    expect(walked).toHaveLength(204);
    expect(statuses).toEqual(Array(Math.ceil(204 / 7)).fill(200));
    expect(walked).toEqual(await walkDirectly('/modules', 'limit=7'));
    expect(walked.map((m) => m.id)).toEqual(stack.snapshot.modules.map((m) => m.id).sort((a, b) => a - b));
  });

  it('filters, sorts and selects fields and relations', async () => {
    const { client } = counted();
    const expected = stack.snapshot.modules.filter((m) => m.manufacturer_id === 1 && m.standard === 0);

    const walked = [];
    for await (const module of client.modules.list({
      manufacturerId: 1,
      standard: 0,
      sort: 'name',
      fields: ['name', 'hp'],
      include: ['tags'],
      limit: 5,
    })) {
      walked.push(module);
    }

    expect(expected.length).toBeGreaterThan(5);
    expect(walked.map((m) => m.id).sort()).toEqual(expected.map((m) => m.id).sort());
    expect(walked.every((m) => Object.keys(m).join() === 'id,name,hp,tags')).toBe(true);
    expect(walked).toEqual(
      await walkDirectly(
        '/modules',
        'manufacturer_id=1&standard=0&sort=name&fields=name,hp&include=tags&limit=5',
      ),
    );
  });

  it('lists manufacturers, standards and tags completely', async () => {
    const { client } = counted();
    const all = async <T>(iterable: AsyncIterable<T>) => {
      const items: T[] = [];
      for await (const item of iterable) items.push(item);
      return items;
    };

    const [manufacturers, standards, tags] = await Promise.all([
      all(client.manufacturers.list({ limit: 3 })),
      all(client.standards.list()),
      all(client.tags.list({ sort: 'name' })),
    ]);

    expect(manufacturers.map((m) => m.id)).toEqual(
      stack.snapshot.manufacturers.map((m) => m.id).sort((a, b) => a - b),
    );
    expect(standards).toHaveLength(stack.snapshot.standards.length);
    expect(tags).toHaveLength(stack.snapshot.tags.length);
  });

  it('gets one record with include, the record itself', async () => {
    const { client } = counted();

    const module = await client.modules.get(101, { include: ['ins'] });
    const manufacturer = await client.manufacturers.get(1, { include: ['modules'] });

    const direct = await fetch(`${baseUrl}/modules/101?include=ins`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(module).toEqual(((await direct.json()) as { data: unknown }).data);
    expect(module.ins.length).toBeGreaterThan(0);
    // Not asked for: absent, and absent from the type (module.outs does not compile).
    expect('outs' in module).toBe(false);
    expect(manufacturer.modules.map((m) => m.manufacturer_id)).toEqual(manufacturer.modules.map(() => 1));
  });

  it('revalidates: the second get is a 304 served from the cache, and is counted', async () => {
    const { client, statuses } = counted();

    const first = await client.modules.get(102, { include: ['tags', 'panels'] });
    const before = client.rateLimit!;
    const second = await client.modules.get(102, { include: ['panels', 'tags'] });
    const after = client.rateLimit!;

    expect(statuses).toEqual([200, 304]);
    expect(second).toEqual(first);
    expect(after.remainingMonth).toBe(before.remainingMonth - 1);
    expect(after.limitMonth).toBe(1_000_000);
  });

  it('revalidates cursor pages of a second walk (all 304s), and without a cache refetches them', async () => {
    const cached = counted();
    const uncached = counted({ cache: false });
    const walk = async (client: CatalogueClient) => {
      const ids: number[] = [];
      for await (const tag of client.tags.list({ limit: 10 })) ids.push(tag.id);
      return ids;
    };

    const first = await walk(cached.client);
    const second = await walk(cached.client);
    await walk(uncached.client);
    await walk(uncached.client);

    const pages = Math.ceil(stack.snapshot.tags.length / 10);
    expect(second).toEqual(first);
    expect(cached.statuses).toEqual([...Array(pages).fill(200), ...Array(pages).fill(304)]);
    expect(uncached.statuses).toEqual(Array(2 * pages).fill(200));
  });

  it('throws the API errors with their code and request id', async () => {
    const { client } = counted();
    const wrongKey = new CatalogueClient({ baseUrl, apiKey: `pk_live_${'W'.repeat(22)}` });
    const caught = (promise: Promise<unknown>) =>
      promise.catch((error: unknown) => error as CatalogueApiError);

    const [missing, badLimit, unknownKey] = await Promise.all([
      caught(client.modules.get(999_999)),
      caught(client.tags.listPage({ limit: 0 })),
      caught(wrongKey.tags.listPage()),
    ]);

    expect(missing).toBeInstanceOf(CatalogueApiError);
    expect(missing).toMatchObject({
      status: 404,
      code: 'not_found',
      requestId: expect.stringMatching(/^req_/),
    });
    expect(badLimit).toMatchObject({ status: 400, code: 'invalid_parameter' });
    expect(unknownKey).toMatchObject({ status: 401, code: 'invalid_key' });
  });
});

describe("each answer's request id and rate limits, from what the client returned", () => {
  it('a walk: each record has its page’s answer, each page its own request id, the quota counting down', async () => {
    const { client } = counted();

    const answers = new Map<string, { remainingMonth: number | undefined; records: number }>();
    for await (const tag of client.tags.list({ limit: 10 })) {
      const response = responseOf(tag);
      expect(response?.status).toBe(200);
      const id = response?.requestId ?? 'none';
      const seen = answers.get(id) ?? { remainingMonth: response?.rateLimit?.remainingMonth, records: 0 };
      answers.set(id, { ...seen, records: seen.records + 1 });
    }

    const pages = Math.ceil(stack.snapshot.tags.length / 10);
    expect(answers.size).toBe(pages);
    expect([...answers.keys()].every((id) => /^req_[A-Za-z0-9_-]+$/.test(id))).toBe(true);
    const remaining = [...answers.values()].map((answer) => answer.remainingMonth!);
    expect(remaining).toEqual(remaining.map((_, index) => remaining[0]! - index));
    expect([...answers.values()].reduce((sum, answer) => sum + answer.records, 0)).toBe(
      stack.snapshot.tags.length,
    );
  });

  it("a detail and its revalidation: the 304's own request id, the quota counted", async () => {
    const { client } = counted();

    const first = await client.modules.get(103);
    const again = await client.modules.get(103);

    const [one, two] = [responseOf(first)!, responseOf(again)!];
    expect([one.status, two.status]).toEqual([200, 304]);
    expect(two.requestId).not.toBe(one.requestId);
    expect(two.rateLimit!.remainingMonth).toBe(one.rateLimit!.remainingMonth - 1);
    expect(one.headers.get('etag')).toBe(two.headers.get('etag'));
  });

  it('an error: its answer, and a code that narrows in a switch', async () => {
    const { client } = counted();
    const caught = await Promise.all(
      [client.modules.get(999_999), client.tags.listPage({ limit: 0 })].map((call) =>
        call.then(
          () => undefined,
          (error: unknown) => error,
        ),
      ),
    );

    const described = caught.map((error) => {
      if (!(error instanceof CatalogueApiError)) return 'not an API error';
      switch (error.code) {
        case 'not_found':
          return `missing (${responseOf(error)?.status}, ${responseOf(error)?.rateLimit ? 'metered' : 'not metered'})`;
        case 'invalid_parameter':
          return `refused: ${error.message}`;
        default:
          return `other: ${error.code}`;
      }
    });

    expect(described).toEqual(['missing (404, metered)', expect.stringMatching(/^refused: .*limit/)]);
  });
});

describe('on the wire and through the hooks', () => {
  it('sends catalogue-read-api-client/<version> node/<version> as its User-Agent', async () => {
    const { client } = counted();
    const before = userAgents.length;

    await client.standards.listPage();

    expect(userAgents.slice(before)).toEqual([
      `catalogue-read-api-client/${VERSION} node/${process.versions.node}`,
    ]);
  });

  it('tells onRequest and onResponse of each real request and answer; the timeout leaves them alone', async () => {
    const requested: number[] = [];
    const answered: ResponseEvent[] = [];
    const { client } = counted({
      timeout: 10_000,
      onRequest: ({ retry }) => {
        requested.push(retry);
      },
      onResponse: (event) => {
        answered.push(event);
      },
    });

    const page = await client.manufacturers.listPage({ limit: 2, timeout: 15_000 });
    await client.modules.get(999_998).catch(() => undefined);

    expect(requested).toEqual([0, 0]);
    expect(answered.map((event) => event.status)).toEqual([200, 404]);
    expect(answered[0]!.requestId).toBe(responseOf(page)!.requestId);
    expect(answered.every((event) => event.elapsedMs >= 0 && event.rateLimit !== undefined)).toBe(true);
  });
});
