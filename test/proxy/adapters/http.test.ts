/**
 * The node:http adapter, driven through undici and raw sockets: the core's answers as sent, and what
 * Node's parser refuses answered in the API's error envelope.
 */
import type { IncomingMessage } from 'node:http';
import { type AddressInfo, createConnection } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, requestFromNode } from '../../../proxy/adapters/http.js';
import type { ProxyHandler, RequestLogLine } from '../../../proxy/core/types.js';
import { loadResponseValidator } from '../../helpers/openapi.js';
import { KEYS } from '../../helpers/proxy.js';
import { CODED_PATH, CODED_QUERY, decode, fixtureHandler, identityAnswer } from './setup.js';

const openapi = loadResponseValidator();
let handle: ProxyHandler;

beforeAll(async () => {
  handle = await fixtureHandler();
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
      const identity = await identityAnswer(handle);
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
        latency_ms: expect.any(Number),
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
    // A target of 8,192 bytes (its request line is longer) with a 10 KB header, refused before the head's end
    // arrives: the head is too large, not the URL. ('/v1/tags?' is 9 bytes.)
    [
      'a URL at the limit with a 10 KB header',
      `GET /v1/tags?${'a'.repeat(8_192 - 9)} HTTP/1.1\r\nHost: a\r\nX: ${'x'.repeat(10_000)}\r\n`,
      431,
    ],
    [
      'a URL one byte over the limit',
      `GET /v1/tags?${'a'.repeat(8_193 - 9)} HTTP/1.1\r\nHost: a\r\n\r\n`,
      414,
    ],
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

    const before = performance.now();
    const core = requestFromNode(request);

    expect({ ...core, headers: { ...core.headers } }).toEqual({
      method: 'GET',
      path: '/v1/tags',
      query: 'limit=1',
      headers: { constructor: 'a', ['__proto__']: 'b', 'x-twice': '1, 2' },
      // Its arrival, taken here when the adapter does not give one (the log line's latency counts from it).
      receivedAt: expect.any(Number),
    });
    expect(core.receivedAt).toBeGreaterThanOrEqual(before);
    expect(core.receivedAt).toBeLessThanOrEqual(performance.now());
  });

  it('joins a repeated header with ", " for the core (two Authorization headers are malformed)', async () => {
    const answer = await raw(
      `GET /v1/tags HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer ${KEYS.main}\r\nAuthorization: Bearer ${KEYS.main}\r\nConnection: close\r\n\r\n`,
    );

    expect(answer.slice(9, 12)).toBe('401');
    expect(answer).toContain('"code":"malformed_authorization"');
  });
});
