/**
 * Hostile input, with healthy dependencies: generated paths, query strings and headers through the proxy
 * core, the Lambda streaming adapter and the node:http adapter (undici) → never a 5xx, always the error
 * envelope with a `req_` id on errors, the oracle's status and code, no crash, no unhandled rejection, a flat
 * heap.
 *
 * Raw HTTP/1.1 on sockets (smuggling shapes, oversize heads, pipelining…) is in hostile-raw.test.ts.
 *
 * Default: 1,500 core cases, 600 Lambda events, 600 over HTTP; with `PROOF_RUNS` set at least 10,000 core
 * cases and 5,000 of each adapter.
 */
import type { Server } from 'node:http';
import { Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, MAX_TARGET_BYTES } from '../../proxy/adapters/http.js';
import { createLambdaHandler, localRuntime } from '../../proxy/adapters/lambda.js';
import type { ProxyHandler, ProxyResponse } from '../../proxy/core/types.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';
import { closeServer, listenOnLoopback } from '../helpers/loopback.js';
import { snapshotArb } from '../oracle/arbitraries.js';
import {
  assertProperty,
  envelopeProblem,
  errorCodeOf,
  expectSame,
  LARGE,
  PARTNER_KEY,
  putCatalogue,
  runSettings,
  scaled,
  testProxy,
  testTimeout,
} from '../oracle/harness.js';
import { type HostileRequest, hostileRequestArb } from '../oracle/hostile.js';
import { CursorBook, Oracle } from '../oracle/oracle.js';

const CORE_RUNS = 1_500;
const HTTP_RUNS = 600;
const LAMBDA_RUNS = 600;
const TIME_MS = LARGE ? 3_600_000 : 60_000;
const STATUSES = new Set([200, 204, 304, 400, 401, 404, 405]);

const rejections: unknown[] = [];
const onRejection = (reason: unknown) => rejections.push(reason);
const counts = {
  core: 0,
  coreStatuses: {} as Record<number, number>,
  heapGrowthKiB: 0,
  lambda: 0,
  http: 0,
  oversized: 0,
  httpStatuses: {} as Record<number, number>,
};

let handle: ProxyHandler;
let oracle: Oracle;

beforeAll(async () => {
  process.on('unhandledRejection', onRejection);
  const snapshot = fc.sample(snapshotArb({ minModules: 20, maxModules: 30 }), { numRuns: 1, seed: 42 })[0]!;
  const objects = new MemoryObjectStore();
  await putCatalogue(objects, snapshot);
  handle = testProxy({ objects });
  oracle = new Oracle({ snapshot, keys: [PARTNER_KEY] });
});

afterAll(() => {
  process.off('unhandledRejection', onRejection);
  console.log(`hostile: ${JSON.stringify(counts)}`);
});

/** Check one answer against the invariants and, where it applies, against the oracle. */
function check(label: string, request: HostileRequest, actual: ProxyResponse): void {
  const fail = (what: string): never => {
    throw new Error(
      `${label}: ${what} (status ${actual.status}, ${actual.body?.toString('utf8').slice(0, 300)})`,
    );
  };
  if (!STATUSES.has(actual.status)) fail('unexpected status');
  if (!/^req_[A-Za-z0-9_-]+$/.test(actual.headers['x-request-id'] ?? '')) fail('no request id');
  if (request.method === 'HEAD' && actual.body !== undefined && actual.body.byteLength > 0)
    fail('HEAD with a body');
  if (actual.status >= 400 && request.method !== 'HEAD') {
    const problem = envelopeProblem(actual);
    if (problem) fail(problem);
  }
  if (actual.status === 405 && actual.headers.allow !== 'GET, HEAD, OPTIONS') fail('405 without Allow');
  if (actual.status === 401 && !actual.headers['www-authenticate']) fail('401 without WWW-Authenticate');
  // The oracle knows every answer except revalidation (304) and bodies of HEAD.
  if (request.headers['if-none-match'] !== undefined) return;
  const expected = oracle.answer(
    {
      method: request.method,
      path: request.path,
      query: request.query,
      authorization: request.headers.authorization,
    },
    new CursorBook(),
  );
  if (request.method === 'HEAD' || request.method === 'OPTIONS' || expected.status !== 200) {
    if (actual.status !== expected.status) fail(`oracle says ${expected.status} ${expected.code ?? ''}`);
    if (expected.code && request.method !== 'HEAD' && errorCodeOf(actual) !== expected.code) {
      fail(`oracle says ${expected.code}`);
    }
    return;
  }
  expectSame(label, actual, expected, new CursorBook());
}

const exposeGc = (): (() => void) => {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
};

describe('hostile input through the proxy core', () => {
  it(
    'never answers 5xx, always with the envelope and the oracle’s code, heap flat',
    async () => {
      const gc = exposeGc();
      const property = fc.asyncProperty(hostileRequestArb(PARTNER_KEY), async (request) => {
        counts.core++;
        const actual = await handle(request);
        counts.coreStatuses[actual.status] = (counts.coreStatuses[actual.status] ?? 0) + 1;
        check(`${request.method} ${request.path}?${request.query.slice(0, 200)}`, request, actual);
      });
      const runs = scaled(CORE_RUNS, 10_000);
      // Warm up (caches, JIT), measure, run the rest, measure again.
      await assertProperty(property, runSettings(Math.ceil(runs / 3), TIME_MS));
      gc();
      const before = process.memoryUsage().heapUsed;
      await assertProperty(property, runSettings(runs - Math.ceil(runs / 3), TIME_MS));
      gc();
      const growth = process.memoryUsage().heapUsed - before;
      counts.heapGrowthKiB = Math.round(growth / 1024);
      // Generous: generated values themselves are garbage; a leak per request would be far above this.
      expect(growth).toBeLessThan(16 * 1024 * 1024);
      expect(rejections).toEqual([]);
    },
    testTimeout(2 * TIME_MS),
  );
});

describe('hostile input through the Lambda streaming adapter', () => {
  it(
    'answers every event with a prelude, a documented status and the envelope',
    async () => {
      const lambda = createLambdaHandler(handle, localRuntime);
      await assertProperty(
        fc.asyncProperty(hostileRequestArb(PARTNER_KEY), async (hostile) => {
          counts.lambda++;
          const chunks: Buffer[] = [];
          const sink = new Writable({
            write(chunk: Buffer, _encoding, done) {
              chunks.push(chunk);
              done();
            },
          });
          await lambda(
            {
              rawPath: hostile.path,
              rawQueryString: hostile.query,
              headers: hostile.headers,
              requestContext: { http: { method: hostile.method } },
            },
            sink,
          );
          const bytes = Buffer.concat(chunks);
          const end = bytes.indexOf(Buffer.alloc(8));
          if (end < 0) throw new Error('no prelude');
          const prelude = JSON.parse(bytes.subarray(0, end).toString('utf8')) as {
            statusCode: number;
            headers: Record<string, string>;
          };
          const body = bytes.subarray(end + 8);
          const actual: ProxyResponse = {
            status: prelude.statusCode,
            headers: prelude.headers,
            body: body.byteLength === 0 ? undefined : body,
          };
          check(`λ ${hostile.method} ${hostile.path}?${hostile.query.slice(0, 200)}`, hostile, actual);
        }),
        runSettings(scaled(LAMBDA_RUNS, 5_000), TIME_MS),
      );
      expect(rejections).toEqual([]);
    },
    testTimeout(TIME_MS),
  );
});

describe('hostile input through the node:http adapter', () => {
  let server: Server;
  let origin: string;
  let agent: Agent;

  beforeAll(async () => {
    server = createHttpServer(handle, { log: () => {} });
    origin = `http://127.0.0.1:${await listenOnLoopback(server)}`;
    agent = new Agent({ connections: 8 });
  });

  afterAll(async () => {
    await agent?.close();
    await closeServer(server);
  });

  it(
    'answers every request a client can send with a documented status and the envelope',
    async () => {
      await assertProperty(
        fc.asyncProperty(hostileRequestArb(PARTNER_KEY, true), async (hostile) => {
          counts.http++;
          const target = hostile.query === '' ? hostile.path : `${hostile.path}?${hostile.query}`;
          // The dispatcher's own request: the target goes on the wire as is (no URL normalisation of `.`).
          const response = await agent.request({
            origin,
            path: target,
            method: hostile.method as 'GET',
            headers: hostile.headers,
          });
          const body = Buffer.from(await response.body.arrayBuffer());
          counts.httpStatuses[response.statusCode] = (counts.httpStatuses[response.statusCode] ?? 0) + 1;
          const headers: Record<string, string> = {};
          for (const [name, value] of Object.entries(response.headers)) {
            if (typeof value === 'string') headers[name] = value;
          }
          const actual: ProxyResponse = {
            status: response.statusCode,
            headers,
            body: hostile.method === 'HEAD' || body.byteLength === 0 ? undefined : body,
          };
          // HTTP strips optional whitespace around header values before the core sees them.
          const onTheWire: HostileRequest = { ...hostile, headers: {} };
          for (const [name, value] of Object.entries(hostile.headers)) {
            onTheWire.headers[name] = value.replace(/^[ \t]+|[ \t]+$/g, '');
          }
          // Node refuses a request head beyond --max-http-header-size (16 KiB) before the adapter sees it.
          const headBytes =
            target.length +
            Object.entries(hostile.headers).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
          if (response.statusCode === 431 && headBytes > 16 * 1024 - 200) {
            counts.oversized++;
            return;
          }
          // Beyond CloudFront's URL limit the adapter answers 414 as CloudFront does (in the envelope).
          if (response.statusCode === 414 && Buffer.byteLength(target, 'latin1') > MAX_TARGET_BYTES) {
            if (hostile.method !== 'HEAD') expect(envelopeProblem(actual)).toBeUndefined();
            counts.oversized++;
            return;
          }
          check(`HTTP ${hostile.method} ${target.slice(0, 200)}`, onTheWire, actual);
        }),
        runSettings(scaled(HTTP_RUNS, 5_000), TIME_MS),
      );
      expect(rejections).toEqual([]);
    },
    testTimeout(TIME_MS),
  );
});
