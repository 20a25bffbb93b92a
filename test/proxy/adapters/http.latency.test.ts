/**
 * `latency_ms` is a request's time from its arrival at the adapter to its answer, whatever it waited on: the
 * wired proxy served by the node:http adapter, each dependency really hung (a server that takes the request and
 * never answers, or a fault proxy that holds it past the deadline), two requests at once — the second joining
 * the read the first started (the cursor secret, a key lookup, a pointer re-check, an object read through the
 * byte cache). Both log lines must count the whole wait: at least the dependency's deadline, and at most what
 * the client measured. (The log line used to time a request that joined the cursor secret's read from the end
 * of that read: a 1,834 ms 503 logged as 0.9 ms.)
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createConnection } from 'node:net';
import { startS3 } from '@catalogue/local-aws';
import { request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { s3Client } from '../../../aws/sdk.js';
import { createHttpServer } from '../../../proxy/adapters/http.js';
import { createProxy } from '../../../proxy/app.js';
import { loadConfig } from '../../../proxy/config.js';
import type { ProxyHandler, ProxyLogLine, RequestLogLine } from '../../../proxy/core/types.js';
import { MemoryKeyStore } from '../../../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../../../proxy/quota/memory.js';
import { MemoryObjectStore } from '../../../store/objects/memory.js';
import { S3ObjectStore } from '../../../store/objects/s3.js';
import { type FaultProxy, startFaultProxy } from '../../helpers/fault-proxy.js';
import { closeServer, listenOnLoopback } from '../../helpers/loopback.js';
import { KEYS, PREFIX, publishFixture } from '../../helpers/proxy.js';

/** The dependency deadline of these proxies: every hung call ends there. */
const TIMEOUT_MS = 400;
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:catalogue-cursor-AbCdEf';
const PAGE = '/v1/modules?limit=2';

/** A server that takes every request and never answers it: a dependency that hangs. */
interface Hung {
  endpoint: string;
  /** Requests it has taken so far. */
  taken(): number;
  close(): Promise<void>;
}

async function hungServer(): Promise<Hung> {
  const held: ServerResponse[] = [];
  const server: Server = createServer((incoming, response) => {
    incoming.resume();
    held.push(response);
  });
  const port = await listenOnLoopback(server);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    taken: () => held.length,
    close: () => closeServer(server),
  };
}

/** What the adapter handed the proxy: when, and when the answer was ready, by request id. */
interface Handed {
  at: number;
  answeredAt: number;
}

/**
 * The proxy for `env` on node:http, its request lines collected, and for each request the real wait: from the
 * moment the adapter handed it to the proxy to the moment its answer was ready (measured around the proxy, not
 * by it).
 */
async function served(env: Record<string, string>, overrides: Parameters<typeof createProxy>[1] = {}) {
  const lines: RequestLogLine[] = [];
  const handed = new Map<string, Handed>();
  const handle = createProxy(loadConfig({ DEPENDENCY_TIMEOUT_MS: String(TIMEOUT_MS), ...env }), {
    ...overrides,
    log: (line: ProxyLogLine) => {
      if ('request_id' in line) lines.push(line);
    },
  });
  const measured: ProxyHandler = async (request) => {
    const at = performance.now();
    const response = await handle(request);
    handed.set(response.headers['x-request-id']!, { at, answeredAt: performance.now() });
    return response;
  };
  const server = createHttpServer(measured, { log: (line) => lines.push(line) });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { lines, handed, origin, close: () => closeServer(server) };
}

/** One GET as a client makes it: the status, the error code, and the time the client waited. */
async function timedGet(origin: string, target: string) {
  const started = performance.now();
  const response = await request(`${origin}${target}`, {
    headers: { authorization: `Bearer ${KEYS.main}` },
  });
  const body = await response.body.text();
  return {
    status: response.statusCode,
    code: response.statusCode === 200 ? undefined : JSON.parse(body).error?.code,
    elapsed: performance.now() - started,
  };
}

type Served = Awaited<ReturnType<typeof served>>;

/** Two requests at once; both answers, and both log lines. */
async function twoAtOnce(proxy: Served, target = PAGE) {
  const before = proxy.lines.length;
  const answers = await Promise.all([timedGet(proxy.origin, target), timedGet(proxy.origin, target)]);
  return { answers, logged: proxy.lines.slice(before) };
}

/**
 * Each line counts the request's whole wait: at least the deadline, counted from the first request's arrival
 * (the hung call started after it), and the real wait measured around the proxy but for the moment between the
 * line and the answer's hand-back; no more than its client waited.
 */
function expectWholeWaits(proxy: Served, answers: { elapsed: number }[], logged: RequestLogLine[]) {
  expect(logged).toHaveLength(2);
  const waits = logged.map((line) => proxy.handed.get(line.request_id)!);
  const first = Math.min(...waits.map((wait) => wait.at));
  const longest = Math.max(...answers.map((answer) => answer.elapsed));
  for (const [i, line] of logged.entries()) {
    const { at, answeredAt } = waits[i]!;
    const wait = answeredAt - at;
    expect(wait).toBeGreaterThanOrEqual(first + TIMEOUT_MS - at);
    // The line is written as the answer is made, a moment before the proxy hands it back (`answeredAt`), and
    // rounded to a tenth: it may fall short of the wait measured around the proxy by that moment (a few
    // milliseconds on a loaded machine), never by the deadline's hundreds of milliseconds.
    expect(line.latency_ms).toBeGreaterThanOrEqual(first + TIMEOUT_MS - at - 0.05);
    expect(line.latency_ms).toBeGreaterThanOrEqual(wait - 10);
    expect(line.latency_ms).toBeLessThanOrEqual(longest + 0.1);
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('latency_ms counts every wait from the request’s arrival', () => {
  let objects: MemoryObjectStore;
  beforeAll(async () => {
    objects = new MemoryObjectStore();
    await publishFixture(objects);
  });
  const memoryKeys = () => {
    const keys = new MemoryKeyStore();
    keys.add(KEYS.main, { limits: { minute: 1e9, month: 1e9 } });
    return keys;
  };

  it('two requests at a cold start wait for one cursor-secret read that hangs: both lines count the wait', async () => {
    const secrets = await hungServer();
    cleanups.push(secrets.close);
    const proxy = await served(
      {
        CATALOGUE_BUCKET: 'b',
        CATALOGUE_PREFIX: PREFIX,
        KEYS_TABLE: 'k',
        COUNTERS_TABLE: 'c',
        CURSOR_SECRET_ARN: ARN,
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
      },
      { objects, keys: memoryKeys(), quota: new MemoryQuotaMeter() },
    );
    cleanups.push(proxy.close);

    const { answers, logged } = await twoAtOnce(proxy);

    expect(answers.map((answer) => [answer.status, answer.code])).toEqual([
      [503, 'configuration_error'],
      [503, 'configuration_error'],
    ]);
    // One read, joined by the second request.
    expect(secrets.taken()).toBe(1);
    expectWholeWaits(proxy, answers, logged);
  });

  it('two requests join one key lookup that hangs: both lines count the wait', async () => {
    const dynamo = await hungServer();
    cleanups.push(dynamo.close);
    const proxy = await served(
      {
        CATALOGUE_BUCKET: 'b',
        CATALOGUE_PREFIX: PREFIX,
        KEYS_TABLE: 'k',
        COUNTERS_TABLE: 'c',
        CURSOR_SECRET: 'c'.repeat(40),
        DYNAMODB_ENDPOINT: dynamo.endpoint,
      },
      { objects },
    );
    cleanups.push(proxy.close);

    const { answers, logged } = await twoAtOnce(proxy);

    expect(answers.map((answer) => answer.code)).toEqual([
      'authentication_unavailable',
      'authentication_unavailable',
    ]);
    expect(dynamo.taken()).toBe(1);
    expectWholeWaits(proxy, answers, logged);
  });

  describe('behind a fault proxy in front of the local S3', () => {
    let s3: Awaited<ReturnType<typeof startS3>>;
    let faults: FaultProxy;
    beforeAll(async () => {
      s3 = await startS3('latency');
      const client = s3Client({ endpoint: s3.endpoint });
      await publishFixture(new S3ObjectStore({ client, bucket: s3.bucket }));
      client.destroy();
      faults = await startFaultProxy({ targetPort: s3.port });
    });
    afterAll(async () => {
      await faults?.close();
      await s3?.dispose();
    });

    /** The proxy over the fault proxy, with a clock the test moves and a byte cache. */
    async function overFaults() {
      const clock = { ms: Date.parse('2026-11-23T10:00:00Z') };
      const proxy = await served(
        {
          CATALOGUE_BUCKET: s3.bucket,
          CATALOGUE_PREFIX: PREFIX,
          S3_ENDPOINT: faults.endpoint,
          KEYS_TABLE: 'k',
          COUNTERS_TABLE: 'c',
          CURSOR_SECRET: 'c'.repeat(40),
          POINTER_TTL_MS: '1000',
          BYTE_CACHE_MB: '16',
        },
        { keys: memoryKeys(), quota: new MemoryQuotaMeter(), now: () => new Date(clock.ms) },
      );
      cleanups.push(proxy.close);
      return { ...proxy, clock };
    }

    /** Hold every request matching `which` until the test ends (released then, long past the deadline). */
    function hold(which: (url: string) => boolean) {
      let release: () => void = () => {};
      const until = new Promise<void>((resolve) => (release = resolve));
      faults.setRule(({ url }) => (which(url) ? { until } : undefined));
      cleanups.push(async () => {
        faults.setRule(undefined);
        release();
      });
      return () => faults.seen.filter((seen) => seen.action === 'until').length;
    }

    it('two requests join one object read (the byte cache’s load) that hangs: both lines count the wait', async () => {
      const proxy = await overFaults();
      const held = hold((url) => url.includes(`/${PREFIX}o/`) && !url.includes('current.json'));
      const heldBefore = held();

      const { answers, logged } = await twoAtOnce(proxy, '/v1/tags?limit=3');

      expect(answers.map((answer) => answer.code)).toEqual(['origin_unavailable', 'origin_unavailable']);
      expectWholeWaits(proxy, answers, logged);
      // One read held (the index shard's), shared by the two requests.
      expect(held() - heldBefore).toBe(1);
    });

    it('two requests join one pointer re-check that hangs: both lines count the wait (the last pointer then serves)', async () => {
      const proxy = await overFaults();
      expect((await timedGet(proxy.origin, PAGE)).status).toBe(200);
      const held = hold((url) => url.includes('current.json'));
      const heldBefore = held();
      proxy.clock.ms += 2_000; // past the pointer's TTL: the next request re-checks it

      const { answers, logged } = await twoAtOnce(proxy);

      // The re-check failed at its deadline; the last known pointer, well within its stale bound, answers.
      expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
      expect(held() - heldBefore).toBe(1);
      expectWholeWaits(proxy, answers, logged);
    });
  });
});

describe('latency_ms of the answers the adapter gives itself', () => {
  it('a malformed request pipelined behind a slow one is refused after it: its line counts that wait', async () => {
    const HOLD_MS = 300;
    const lines: RequestLogLine[] = [];
    // A core that takes HOLD_MS to answer (it logs nothing: only the adapter's refusal is logged here).
    const slow: ProxyHandler = async () => {
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
      return { status: 204, headers: { 'x-request-id': 'req_slow' }, body: undefined };
    };
    const server = createHttpServer(slow, { log: (line) => lines.push(line) });
    const port = await listenOnLoopback(server);
    cleanups.push(() => closeServer(server));

    const sent = performance.now();
    const received = await new Promise<string>((resolve, reject) => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => {
        text += chunk;
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(text));
      // One write: the valid request and, behind it, one with two Content-Lengths.
      socket.write(
        'GET /v1/tags HTTP/1.1\r\nHost: a\r\n\r\n' +
          'GET /v1/tags HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
      );
    });
    const elapsed = performance.now() - sent;

    expect(received).toMatch(/^HTTP\/1\.1 204 [\s\S]*HTTP\/1\.1 400 /);
    expect(lines).toHaveLength(1);
    // Met in the same read as the slow request, answered only after it.
    expect(lines[0]!.latency_ms).toBeGreaterThanOrEqual(HOLD_MS / 2);
    expect(lines[0]!.latency_ms).toBeLessThanOrEqual(elapsed);
  });
});
