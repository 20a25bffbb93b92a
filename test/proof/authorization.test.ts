/**
 * One grammar, three judges: every case of test/proof/authorization-cases.ts through the proxy's parser, the CloudFront
 * viewer-request function and the node:http adapter (raw sockets), with the same answer from each: the
 * edge's 401 is byte for byte the proxy's (code, message, envelope, headers), so the two cannot drift.
 */
import type { Server } from 'node:http';
import { createConnection } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../proxy/adapters/http.js';
import { createHandler } from '../../proxy/core/handler.js';
import { type ApiError, apiError } from '../../proxy/http/errors.js';
import { errorResponse } from '../../proxy/http/responses.js';
import { MemoryKeyStore } from '../../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../../proxy/quota/memory.js';
import { parseAuthorization } from '../../proxy/request/auth.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';
import { closeServer, listenOnLoopback } from '../helpers/loopback.js';
import { testConfig } from '../helpers/proxy.js';
import { type CloudFrontHeaders, cloudFrontHeader, loadViewerRequest } from '../infra/viewer-request-code.js';
import { AUTH_CASE_KEY, AUTH_CASES, type AuthExpectation, joinedValue } from './authorization-cases.js';

const viewerRequest = loadViewerRequest();
const EDGE_ID = 'Zk3-9_abcDEF0123==';
const EDGE_REQUEST_ID = 'req_Zk3-9_abcDEF0123';
/** Added by the function to its own answers (the distribution's response headers policy). */
/** The distribution's security headers the edge adds and the proxy does not send (nosniff both send). */
const SECURITY_HEADERS = [
  'strict-transport-security',
  'x-frame-options',
  'referrer-policy',
  'content-security-policy',
];

function edge(method: string, values: readonly string[]) {
  const headers: CloudFrontHeaders = {};
  const authorization = cloudFrontHeader(values);
  if (authorization) headers.authorization = authorization;
  return viewerRequest({
    version: '1.0',
    context: { eventType: 'viewer-request', requestId: EDGE_ID },
    viewer: { ip: '198.51.100.7' },
    request: { method, uri: '/v1/modules', querystring: {}, headers, cookies: {} },
  });
}

/** The error the core answers with: the parser's own, or (for a well-formed unknown key) invalid_key. */
function coreError(expected: AuthExpectation): ApiError {
  if (expected === 'ok') return apiError('invalid_key', 'This API key is not accepted.');
  const parsed = parseAuthorization(expected === 'missing_authorization' ? undefined : 'x');
  if (parsed.ok) throw new Error('unreachable');
  return parsed.error;
}

/** The edge function's answer as status, headers without its security headers, and body text. */
function edgeAnswer(result: Record<string, unknown>) {
  const headers = Object.fromEntries(
    Object.entries(result.headers as CloudFrontHeaders)
      .filter(([name]) => !SECURITY_HEADERS.includes(name))
      .map(([name, header]) => [name, header.value]),
  );
  return { status: result.statusCode, headers, body: (result.body as { data: string }).data };
}

describe.each(AUTH_CASES)('Authorization: $name', ({ values, expected }) => {
  it(`the proxy's parser: ${expected}`, () => {
    const outcome = parseAuthorization(joinedValue(values));

    if (expected === 'ok') expect(outcome).toEqual({ ok: true, key: AUTH_CASE_KEY });
    else expect(outcome.ok ? 'ok' : outcome.error.code).toBe(expected);
  });

  it(`the viewer-request function: ${expected === 'ok' ? 'forwards the key' : "the proxy's 401"}`, () => {
    const result = edge('GET', values);

    if (expected === 'ok') {
      const headers = (result as { headers: CloudFrontHeaders }).headers;
      expect(headers['x-catalogue-authorization']).toEqual({ value: values[0] });
      expect(headers.authorization).toBeUndefined();
      expect(result.statusCode).toBeUndefined();
      return;
    }
    const proxy = errorResponse(coreError(expected), EDGE_REQUEST_ID);
    const { 'content-length': _length, ...proxyHeaders } = proxy.headers;
    expect(edgeAnswer(result)).toEqual({
      status: proxy.status,
      headers: proxyHeaders,
      body: proxy.body?.toString('utf8'),
    });
    expect(result.statusDescription).toBe('Unauthorized');
  });
});

describe.each(AUTH_CASES.filter((c) => c.wire))(
  'Authorization over a raw socket to node:http: $name',
  ({ values, expected }) => {
    it(`${expected === 'ok' ? 'invalid_key (the grammar passed)' : expected}`, async () => {
      const answer = await rawGet(values);

      const requestId = answer.headers['x-request-id'] ?? '';
      const proxy = errorResponse(coreError(expected), requestId);
      expect(answer.status).toBe(401);
      expect(requestId).toMatch(/^req_/);
      expect(answer.body).toBe(proxy.body?.toString('utf8'));
      expect(answer.headers['www-authenticate']).toBe(proxy.headers['www-authenticate']);
      expect(answer.headers['content-type']).toBe(proxy.headers['content-type']);
    });
  },
);

describe('the viewer-request function keeps the precedence', () => {
  it.each(AUTH_CASES.filter((c) => c.expected !== 'ok'))('405 before 401 ($name)', ({ values }) => {
    expect(edge('DELETE', values).statusCode).toBe(405);
  });

  it('answers OPTIONS without a key with 401, as the proxy does (OPTIONS is authenticated)', () => {
    expect(edge('OPTIONS', []).statusCode).toBe(401);
  });

  it('gives the 405 of the proxy too', () => {
    const result = edge('PATCH', [`Bearer ${AUTH_CASE_KEY}`]);
    const proxy = errorResponse(
      apiError('method_not_allowed', 'The method PATCH is not allowed; use GET, HEAD, OPTIONS.'),
      EDGE_REQUEST_ID,
    );
    const { 'content-length': _length, ...proxyHeaders } = proxy.headers;

    expect(edgeAnswer(result)).toEqual({
      status: 405,
      headers: proxyHeaders,
      body: proxy.body?.toString('utf8'),
    });
  });
});

describe('generated values: the parser and the function agree', () => {
  const pieces = ['Bearer', 'bearer', 'Basic', ' ', '  ', '\t', 'pk_live_', 'pk_test_', ',', '=', '"', 'é'];
  const valueArb = fc
    .array(
      fc.oneof(
        fc.constantFrom(...pieces),
        fc.constant(AUTH_CASE_KEY),
        fc.stringMatching(/^[A-Za-z0-9_-]{20,23}$/),
        fc.string({ maxLength: 4 }),
      ),
      { maxLength: 5 },
    )
    .map((parts) => parts.join(''));

  it('on every value and every number of repeated headers', () => {
    fc.assert(
      fc.property(fc.array(valueArb, { maxLength: 3 }), (values) => {
        const parsed = parseAuthorization(joinedValue(values));
        const result = edge('GET', values);
        const edgeCode =
          result.statusCode === undefined ? 'ok' : JSON.parse(edgeAnswer(result).body).error.code;
        expect(edgeCode).toBe(parsed.ok ? 'ok' : parsed.error.code);
      }),
      { numRuns: 2_000 },
    );
  });
});

let server: Server;
let port: number;

beforeAll(async () => {
  // The real core with no key at all: a well-formed key gets invalid_key, proving it passed the grammar.
  server = createHttpServer(
    createHandler({
      objects: new MemoryObjectStore(),
      keys: new MemoryKeyStore(),
      quota: new MemoryQuotaMeter(),
      config: testConfig(),
      now: () => new Date(),
      requestId: () => `req_auth${Math.random().toString(36).slice(2, 10)}`,
      log: () => {},
    }),
    { log: () => {} },
  );
  port = await listenOnLoopback(server);
});

afterAll(() => closeServer(server));

/** GET with `values` as Authorization headers, written byte for byte on a fresh connection. */
function rawGet(
  values: readonly string[],
): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const head = values.map((value) => `Authorization: ${value}\r\n`).join('');
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const split = received.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = received.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: received.slice(split + 4) });
    });
    socket.end(Buffer.from(`GET /v1/tags HTTP/1.1\r\nHost: x\r\n${head}Connection: close\r\n\r\n`, 'latin1'));
  });
}
