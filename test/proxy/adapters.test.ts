/**
 * The two thin adapters: Lambda response streaming (status and headers settled before the body, back-pressure,
 * HEAD without body, the consumer's key from CloudFront's header) and node:http driven through undici.
 */
import type { IncomingMessage } from 'node:http';
import { type AddressInfo, createConnection } from 'node:net';
import { Writable } from 'node:stream';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, requestFromNode } from '../../proxy/adapters/http.js';
import {
  createLambdaHandler,
  type FunctionUrlEvent,
  type LambdaRuntime,
  localRuntime,
  type ResponsePrelude,
  requestFromEvent,
} from '../../proxy/adapters/lambda.js';
import { createHandler } from '../../proxy/core/handler.js';
import type { ProxyHandler, ProxyResponse, RequestLogLine } from '../../proxy/core/types.js';
import { MemoryKeyStore } from '../../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../../proxy/quota/memory.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';
import { KEYS, publishFixture, testConfig } from './harness.js';
import { loadResponseValidator } from './openapi.js';

const openapi = loadResponseValidator();
let handle: ProxyHandler;

beforeAll(async () => {
  const objects = new MemoryObjectStore();
  await publishFixture(objects);
  const keys = new MemoryKeyStore();
  keys.add(KEYS.main, { limits: { minute: 100_000, month: 100_000 } });
  let n = 0;
  handle = createHandler({
    objects,
    keys,
    quota: new MemoryQuotaMeter(),
    config: testConfig(),
    now: () => new Date(),
    requestId: () => `req_adapter${++n}`,
    log: () => {},
  });
});

function event(
  method: string,
  rawPath: string,
  rawQueryString = '',
  headers: Record<string, string> = {},
): FunctionUrlEvent {
  return { rawPath, rawQueryString, headers, requestContext: { http: { method } } };
}

/** A writable that takes `delayMs` per chunk and records what it saw. */
function slowWritable(highWaterMark: number, delayMs: number) {
  const seen = { chunks: [] as Buffer[], maxBuffered: 0, ended: false };
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, callback) {
      seen.chunks.push(Buffer.from(chunk));
      setTimeout(callback, delayMs);
    },
    final(callback) {
      seen.ended = true;
      callback();
    },
  });
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((...args: unknown[]) => {
    const result = write(...args);
    seen.maxBuffered = Math.max(seen.maxBuffered, stream.writableLength);
    return result;
  }) as Writable['write'];
  return { stream, seen };
}

/** A runtime double that records when the prelude was settled relative to the body writes. */
function recordingRuntime() {
  const log: string[] = [];
  const preludes: ResponsePrelude[] = [];
  const runtime: LambdaRuntime = {
    streamifyResponse: (handler) => handler,
    HttpResponseStream: {
      from(stream, prelude) {
        log.push('prelude');
        preludes.push(prelude);
        const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
        stream.write = ((...args: unknown[]) => {
          log.push('write');
          return write(...args);
        }) as Writable['write'];
        return stream;
      },
    },
  };
  return { runtime, log, preludes };
}

const decode = { br: brotliDecompressSync, gzip: gunzipSync } as const;
const CODED_PATH = '/v1/modules';
const CODED_QUERY = 'limit=100&include=tags';

/** The identity answer of the core itself, to compare decoded bodies with. */
async function identityAnswer(method = 'GET'): Promise<ProxyResponse> {
  return handle({
    method,
    path: CODED_PATH,
    query: CODED_QUERY,
    headers: { authorization: `Bearer ${KEYS.main}` },
  });
}

const fixed =
  (response: ProxyResponse): ProxyHandler =>
  async () =>
    response;

describe('Lambda adapter', () => {
  it.each([
    [{ 'x-catalogue-authorization': 'Bearer a', authorization: 'AWS4-HMAC-SHA256 Credential=x' }, 'Bearer a'],
    [{ authorization: 'AWS4-HMAC-SHA256 Credential=x, SignedHeaders=host, Signature=y' }, undefined],
    [{ authorization: 'Bearer b' }, 'Bearer b'],
    [{ 'x-catalogue-authorization': '' }, ''],
    [{}, undefined],
  ])('takes the consumer’s key from %j', (headers, expected) => {
    const request = requestFromEvent(event('GET', '/v1/tags', 'limit=1', headers));
    expect(request.headers.authorization).toBe(expected);
    expect(request.headers['x-catalogue-authorization']).toBeUndefined();
    expect(request).toMatchObject({ method: 'GET', path: '/v1/tags', query: 'limit=1' });
  });

  it('settles status and headers before the first body byte, and respects back-pressure', async () => {
    const body = Buffer.alloc(300_000, 'x');
    const { runtime, log, preludes } = recordingRuntime();
    const lambda = createLambdaHandler(fixed({ status: 200, headers: { etag: '"e"' }, body }), runtime);
    const { stream, seen } = slowWritable(4096, 1);
    await lambda(event('GET', '/v1/modules'), stream);
    expect(log[0]).toBe('prelude');
    expect(preludes).toEqual([{ statusCode: 200, headers: { etag: '"e"' } }]);
    expect(Buffer.concat(seen.chunks).equals(body)).toBe(true);
    expect(seen.chunks.length).toBeGreaterThan(10);
    // Never more than the high-water mark plus one chunk waits in the writable.
    expect(seen.maxBuffered).toBeLessThanOrEqual(4096 + 16 * 1024);
    expect(seen.ended).toBe(true);
  });

  it.each([
    ['HEAD', { status: 200, headers: { 'content-length': '42' }, body: undefined }],
    ['304', { status: 304, headers: { etag: '"e"' }, body: undefined }],
    ['204', { status: 204, headers: { allow: 'GET, HEAD, OPTIONS' }, body: undefined }],
  ])('a bodiless answer (%s) still sends its prelude and no body bytes', async (_, response) => {
    const { runtime, log, preludes } = recordingRuntime();
    const { stream, seen } = slowWritable(1024, 0);
    await createLambdaHandler(fixed(response), runtime)(event('HEAD', '/v1/tags'), stream);
    expect(log).toEqual(['prelude', 'write']);
    expect(preludes[0]!.statusCode).toBe(response.status);
    expect(Buffer.concat(seen.chunks).byteLength).toBe(0);
    expect(seen.ended).toBe(true);
  });

  it('uses the local shim when the awslambda global cannot stream (the SDK sets it to {} outside Lambda)', async () => {
    const global = globalThis as { awslambda?: unknown };
    const before = global.awslambda;
    global.awslambda = {};
    try {
      const { stream, seen } = slowWritable(1 << 20, 0);
      await createLambdaHandler(handle)(
        event('OPTIONS', '/v1/tags', '', { authorization: `Bearer ${KEYS.main}` }),
        stream,
      );
      const wire = Buffer.concat(seen.chunks);
      const prelude = JSON.parse(
        wire.subarray(0, wire.indexOf(Buffer.alloc(8))).toString(),
      ) as ResponsePrelude;
      expect(prelude.statusCode).toBe(204);
    } finally {
      global.awslambda = before;
    }
  });

  it('the local shim writes the runtime’s wire format: JSON prelude, 8 NUL bytes, body', async () => {
    const { stream, seen } = slowWritable(1 << 20, 0);
    const lambda = createLambdaHandler(handle, localRuntime);
    await lambda(
      event('GET', '/v1/modules', 'limit=2&fields=name', {
        'x-catalogue-authorization': `Bearer ${KEYS.main}`,
        authorization: 'AWS4-HMAC-SHA256 Credential=oac',
      }),
      stream,
    );
    const wire = Buffer.concat(seen.chunks);
    const split = wire.indexOf(Buffer.alloc(8));
    const prelude = JSON.parse(wire.subarray(0, split).toString()) as ResponsePrelude;
    const body = wire.subarray(split + 8);
    expect(prelude.statusCode).toBe(200);
    openapi.assert({
      method: 'GET',
      path: '/v1/modules',
      status: prelude.statusCode,
      headers: prelude.headers,
      body,
    });
    expect(JSON.parse(body.toString()).data).toHaveLength(2);
  });

  it.each(['br', 'gzip'] as const)(
    'passes a %s-coded answer through as the core coded it',
    async (coding) => {
      const identity = await identityAnswer();
      const lengths: Record<string, string | undefined> = {};
      for (const method of ['GET', 'HEAD']) {
        const { stream, seen } = slowWritable(1 << 20, 0);
        await createLambdaHandler(handle, localRuntime)(
          event(method, CODED_PATH, CODED_QUERY, {
            'x-catalogue-authorization': `Bearer ${KEYS.main}`,
            'accept-encoding': coding,
          }),
          stream,
        );
        const wire = Buffer.concat(seen.chunks);
        const split = wire.indexOf(Buffer.alloc(8));
        const prelude = JSON.parse(wire.subarray(0, split).toString()) as ResponsePrelude;
        const body = wire.subarray(split + 8);
        openapi.assert({
          method,
          path: CODED_PATH,
          status: prelude.statusCode,
          headers: prelude.headers,
          body,
        });
        expect(prelude.statusCode).toBe(200);
        expect(prelude.headers['content-encoding']).toBe(coding);
        expect(prelude.headers.vary).toBe('Accept-Encoding');
        lengths[method] = prelude.headers['content-length'];
        if (method === 'GET') {
          expect(prelude.headers['content-length']).toBe(String(body.byteLength));
          expect(decode[coding](body).equals(identity.body!)).toBe(true);
        } else {
          expect(body.byteLength).toBe(0);
        }
      }
      expect(lengths.HEAD).toBe(lengths.GET);
      expect(Number(lengths.GET)).toBeLessThan(identity.body!.byteLength);
    },
  );

  it.each([
    [{ authorization: 'AWS4-HMAC-SHA256 Credential=oac' }, 401, 'missing_authorization'],
    [{ 'x-catalogue-authorization': 'Bearer nope' }, 401, 'malformed_authorization'],
    [{ 'x-catalogue-authorization': `bearer ${KEYS.main}` }, 200, undefined],
  ])('through CloudFront with %j → %i', async (headers, status, code) => {
    const { stream, seen } = slowWritable(1 << 20, 0);
    await createLambdaHandler(handle, localRuntime)(event('GET', '/v1/standards', '', headers), stream);
    const wire = Buffer.concat(seen.chunks);
    const split = wire.indexOf(Buffer.alloc(8));
    const prelude = JSON.parse(wire.subarray(0, split).toString()) as ResponsePrelude;
    const body = wire.subarray(split + 8);
    openapi.assert({
      method: 'GET',
      path: '/v1/standards',
      status: prelude.statusCode,
      headers: prelude.headers,
      body,
    });
    expect(prelude.statusCode).toBe(status);
    if (code) expect(JSON.parse(body.toString()).error.code).toBe(code);
  });
});

describe('node:http adapter through undici', () => {
  let origin: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const server = createHttpServer(handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
  });
  afterAll(async () => {
    await close?.();
  });

  async function call(
    method: string,
    target: string,
    headers: Record<string, string> = { authorization: `Bearer ${KEYS.main}` },
    body?: string,
  ) {
    const response = await request(`${origin}${target}`, { method: method as 'GET', headers, body });
    const bytes = Buffer.from(await response.body.arrayBuffer());
    const answer = {
      method,
      path: target.split('?')[0]!,
      status: response.statusCode,
      headers: response.headers,
      body: bytes,
    };
    openapi.assert(answer);
    return answer;
  }

  it('serves GET with the core’s status, headers and body', async () => {
    const answer = await call('GET', '/v1/modules?limit=3&fields=name%2Chp&include=tags');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-length']).toBe(String(answer.body.byteLength));
    const records = JSON.parse(answer.body.toString()).data;
    expect(records).toHaveLength(3);
    expect(Object.keys(records[0])).toEqual(['id', 'name', 'hp', 'tags']);
  });

  it('HEAD has the GET headers and no body', async () => {
    const get = await call('GET', '/v1/manufacturers/1?include=modules');
    const head = await call('HEAD', '/v1/manufacturers/1?include=modules');
    expect(head.body.byteLength).toBe(0);
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.headers.etag).toBe(get.headers.etag);
  });

  it('OPTIONS, 304, 405 with a request body, 401, 404', async () => {
    expect((await call('OPTIONS', '/v1/tags')).status).toBe(204);
    const etag = (await call('GET', '/v1/tags')).headers.etag as string;
    expect(
      (await call('GET', '/v1/tags', { authorization: `Bearer ${KEYS.main}`, 'if-none-match': etag })).status,
    ).toBe(304);
    const post = await call('POST', '/v1/tags', { 'content-type': 'application/json' }, '{"x":1}');
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect((await call('GET', '/v1/tags', {})).status).toBe(401);
    expect((await call('GET', '/v1/nope')).status).toBe(404);
  });

  it.each(['br', 'gzip'] as const)(
    'passes a %s-coded answer through: Node neither re-encodes nor drops it',
    async (coding) => {
      const identity = await identityAnswer();
      const headers = { authorization: `Bearer ${KEYS.main}`, 'accept-encoding': coding };
      const target = `${CODED_PATH}?${CODED_QUERY}`;
      const get = await call('GET', target, headers);
      const head = await call('HEAD', target, headers);
      expect(get.status).toBe(200);
      expect(get.headers['content-encoding']).toBe(coding);
      expect(get.headers.vary).toBe('Accept-Encoding');
      expect(get.headers['content-length']).toBe(String(get.body.byteLength));
      expect(decode[coding](get.body).equals(identity.body!)).toBe(true);
      expect(head.headers['content-length']).toBe(get.headers['content-length']);
      expect(head.headers.etag).toBe(get.headers.etag);
      expect(head.body.byteLength).toBe(0);
      const revalidated = await call('GET', target, {
        ...headers,
        'if-none-match': get.headers.etag as string,
      });
      expect(revalidated.status).toBe(304);
      expect(revalidated.headers.etag).toBe(get.headers.etag);
      expect(revalidated.headers.vary).toBe('Accept-Encoding');
    },
  );

  it('passes the raw path and query through (no normalisation)', async () => {
    expect((await call('GET', '/v1/modules/%31')).status).toBe(400);
    expect((await call('GET', '/v1/modules?limit=%35')).status).toBe(200);
    expect((await call('GET', '/v1/modules?limit=5&limit=5')).status).toBe(400);
  });
});

describe('node:http adapter: what Node’s parser refuses', () => {
  const lines: RequestLogLine[] = [];
  let port: number;
  let close: () => Promise<void>;
  beforeAll(async () => {
    let n = 0;
    const server = createHttpServer(handle, {
      log: (line) => lines.push(line),
      requestId: () => `req_edge${++n}`,
      now: () => new Date('2026-11-23T10:00:00.000Z'),
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    close = () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
  });
  afterAll(async () => {
    await close?.();
  });

  function raw(bytes: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      let received = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        received += chunk;
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
      socket.write(bytes);
    });
  }

  it('answers in the envelope, closes the connection and writes the core’s log line shape', async () => {
    lines.length = 0;

    const answer = await raw(
      'GET /v1/tags HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
    );

    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 400 Bad Request');
    const fields = `${head}\r\n`;
    expect(fields).toContain('\r\nx-request-id: req_edge1\r\n');
    expect(fields).toContain('\r\nconnection: close\r\n');
    expect(fields).toContain('\r\ncache-control: no-store\r\n');
    expect(JSON.parse(body)).toEqual({
      error: {
        code: 'invalid_parameter',
        message:
          'The request could not be read as HTTP/1.1: conflicting, repeated or invalid Content-Length or Transfer-Encoding.',
        request_id: 'req_edge1',
      },
    });
    expect(lines).toEqual([
      {
        time: '2026-11-23T10:00:00.000Z',
        request_id: 'req_edge1',
        method: 'GET',
        route: 'unknown',
        status: 400,
        latency_ms: 0,
        bytes: Buffer.byteLength(body),
        key_id: null,
        error: 'http: HPE_UNEXPECTED_CONTENT_LENGTH',
      },
    ]);
  });

  it.each([
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 405],
    ['an unknown method', 'BREW /v1/tags HTTP/1.1\r\nHost: a\r\n\r\n', 405],
    ['a 20 KB header', `GET /v1/tags HTTP/1.1\r\nHost: a\r\nX: ${'x'.repeat(20_000)}\r\n\r\n`, 431],
    ['a 10 KB URL', `GET /v1/tags?${'a'.repeat(10_000)} HTTP/1.1\r\nHost: a\r\n\r\n`, 414],
    ['HTTP/1.2', 'GET /v1/tags HTTP/1.2\r\nHost: a\r\n\r\n', 505],
    ['two Host headers', 'GET /v1/tags HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 400],
  ])('%s: its status, the envelope and a log line', async (_name, bytes, status) => {
    lines.length = 0;

    const answer = await raw(bytes);

    expect(Number(answer.slice(9, 12))).toBe(status);
    const id = /\r\nx-request-id: (req_\w+)\r\n/.exec(answer)?.[1];
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)).error.request_id).toBe(id);
    if (status === 405) expect(answer).toContain('\r\nallow: GET, HEAD, OPTIONS\r\n');
    expect(lines.map((line) => [line.request_id, line.status])).toEqual([[id, status]]);
  });

  it('gives the core header names as sent, prototype names included', () => {
    const request = {
      url: '/v1/tags?limit=1',
      method: 'GET',
      rawHeaders: ['Constructor', 'a', '__proto__', 'b', 'X-Twice', '1', 'x-twice', '2'],
    } as unknown as IncomingMessage;

    const core = requestFromNode(request);

    expect({ ...core, headers: { ...core.headers } }).toEqual({
      method: 'GET',
      path: '/v1/tags',
      query: 'limit=1',
      headers: { constructor: 'a', ['__proto__']: 'b', 'x-twice': '1, 2' },
    });
  });

  it('joins a repeated header with ", " for the core (two Authorization headers are malformed)', async () => {
    const answer = await raw(
      `GET /v1/tags HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${KEYS.main}\r\nAuthorization: Bearer ${KEYS.main}\r\nConnection: close\r\n\r\n`,
    );

    expect(answer.slice(9, 12)).toBe('401');
    expect(answer).toContain('"code":"malformed_authorization"');
  });
});
