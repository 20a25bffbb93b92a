/**
 * One round trip on a miss: an answer that needs an object read is metered while it is read, and the answer
 * waits for both. What is sent is what reading first and metering second would send — a 429 or the meter's 503
 * instead of the answer (whose bytes are never sent, on the wire of either adapter), a read's 503 not counted (an
 * admitted count taken back; counted once when that fails too, and logged) — and the precedence of the answers
 * holds whichever call ends first. Over the fixture on s3rver, read through the lean client, no byte cache.
 */
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../../proxy/adapters/http.js';
import { createLambdaHandler, localRuntime } from '../../../proxy/adapters/lambda.js';
import type { ProxyHandler } from '../../../proxy/core/types.js';
import type { Admission, MeterOutcome, QuotaMeter } from '../../../proxy/quota/interface.js';
import { DependencyError } from '../../../store/errors.js';
import { POINTER_KEY } from '../../../store/layout.js';
import type { GetOptions, GetOutcome, ObjectStore } from '../../../store/objects/interface.js';
import type { KeyRecord } from '../../../tables/keys.js';
import { closeServer, listenOnLoopback } from '../../helpers/loopback.js';
import { KEYS, objectsOf, type Stack, startStack, testConfig } from '../../helpers/proxy.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack(objectsOf(['modules?sort=id'], [101, 102]));
});
afterAll(async () => {
  await stack?.dispose();
});

/** What the two calls did, in order: `read`/`read end` (data reads, not the pointer), `meter`/`meter end`, `refund`. */
type Events = string[];

/**
 * The stack's store, its data reads recorded and held until `gate` settles (the pointer passes: it is read
 * once, before the request under test); `fail` makes a released read fail as S3 failing would.
 */
function gatedStore(events: Events, gate: Promise<unknown>, fail = false): ObjectStore {
  return {
    async get(key: string, options?: GetOptions): Promise<GetOutcome> {
      if (key.endsWith(POINTER_KEY)) return stack.objects.get(key, options);
      events.push('read');
      await gate;
      events.push('read end');
      if (fail) throw new DependencyError('objects', 'object store failed (test)');
      return stack.objects.get(key, options);
    },
  };
}

/** The stack's in-memory meter, its calls recorded; `meter` and `refund` may be replaced. */
function recordingMeter(
  events: Events,
  replace: {
    meter?: (key: KeyRecord, now: Date) => Promise<MeterOutcome>;
    refund?: () => Promise<void>;
  } = {},
): QuotaMeter & { started: Promise<void> } {
  let started!: () => void;
  const whenStarted = new Promise<void>((resolve) => {
    started = resolve;
  });
  return {
    started: whenStarted,
    async meter(key, now) {
      events.push('meter');
      started();
      const outcome = await (replace.meter ?? ((k, n) => stack.quota.meter(k, n)))(key, now);
      events.push('meter end');
      return outcome;
    },
    async refund(key: KeyRecord, now: Date, admission: Admission) {
      events.push('refund');
      await (replace.refund ?? (() => stack.quota.refund(key, now, admission)))();
    },
  };
}

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
/**
 * Requests counted for `key` before this question, as the meter's headers say; the OPTIONS asking counts itself,
 * so two questions in a row differ by one.
 */
async function counted(key: string, limit: number): Promise<number> {
  const answer = await stack.call('OPTIONS', '/v1/tags', auth(key));
  return limit - Number(answer.headers['x-ratelimit-remaining-month']) - 1;
}
/** What `counted` says after `requests` counted since it said `before` (its own OPTIONS among them). */
const countedLater = (before: number, requests: number) => before + 1 + requests;
const MAIN_MONTH = 10_000_000;
const codeOf = (answer: { json(): { error?: { code: string } } }) => answer.json()?.error?.code;

/** A handler over the gated store and the recording meter (no byte cache: every answer reads). */
function overlapped(objects: ObjectStore, quota: QuotaMeter): ProxyHandler {
  return stack.handler({ objects, quota, config: testConfig({ dependencyTimeoutMs: 5_000 }) });
}

describe('a miss: the object read and the metering write at once', () => {
  it('the meter is called while the read is in flight, and the answer waits for both', async () => {
    const events: Events = [];
    // The read is released only once the meter has been called: one after the other, it would time out.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const quota = recordingMeter(events);
    void quota.started.then(release);
    const answer = await stack.call(
      'GET',
      '/v1/modules/101',
      auth(KEYS.main),
      overlapped(gatedStore(events, gate), quota),
    );
    expect(answer.status).toBe(200);
    expect(answer.json().data.id).toBe(101);
    expect(answer.headers['x-ratelimit-remaining-minute']).toBeDefined();
    // The meter was called before the read it was waiting on ended (one after the other, it never would be).
    expect(events.indexOf('meter')).toBeLessThan(events.indexOf('read end'));
    expect(events).toContain('meter end');
  });

  it('an answer the warm container holds is not read and is metered once', async () => {
    const events: Events = [];
    const quota = recordingMeter(events);
    const handle = stack.handler({
      objects: gatedStore(events, Promise.resolve()),
      quota,
      config: testConfig({ byteCacheBytes: 2 ** 20 }),
    });
    expect((await stack.call('GET', '/v1/modules/102', auth(KEYS.main), handle)).status).toBe(200);
    events.length = 0;
    expect((await stack.call('GET', '/v1/modules/102', auth(KEYS.main), handle)).status).toBe(200);
    expect(events).toEqual(['meter', 'meter end']);
  });

  it('a 404 resource and a 200 that needed a read are counted once each', async () => {
    const before = await counted(KEYS.main, MAIN_MONTH);
    const events: Events = [];
    const handle = overlapped(gatedStore(events, Promise.resolve()), recordingMeter(events));
    expect((await stack.call('GET', '/v1/modules/999999', auth(KEYS.main), handle)).status).toBe(404);
    expect((await stack.call('GET', '/v1/modules/101', auth(KEYS.main), handle)).status).toBe(200);
    expect(events.filter((e) => e === 'meter')).toHaveLength(2);
    expect(await counted(KEYS.main, MAIN_MONTH)).toBe(countedLater(before, 2));
  });
});

describe('a metered refusal: the refusal, never the bytes read', () => {
  /** A meter that refuses every request, as an exhausted minute does (the stack's free key is not used up). */
  const exhausted = (key: KeyRecord, now: Date): Promise<MeterOutcome> =>
    Promise.resolve({
      ok: false,
      reason: 'minute',
      retryAfterSeconds: 60 - now.getUTCSeconds(),
      limitMonth: key.limits.month,
      remainingMonth: 4_000,
      limitMinute: key.limits.minute,
      remainingMinute: 0,
      reset: Math.floor(now.getTime() / 60_000) * 60,
    });

  it.each([
    ['a 200 that needed a read', '/v1/modules/101'],
    ['a 404 resource (a read of the index)', '/v1/modules/999999'],
    ['a 400 (nothing read)', '/v1/modules?limit=0'],
  ])('429 outranks %s', async (_name, target) => {
    const events: Events = [];
    const handle = overlapped(
      gatedStore(events, Promise.resolve()),
      recordingMeter(events, { meter: exhausted }),
    );
    const answer = await stack.call('GET', target, auth(KEYS.free), handle);
    expect([answer.status, codeOf(answer)]).toEqual([429, 'rate_limit_exceeded']);
    expect(answer.headers['retry-after']).toBeDefined();
    expect(answer.headers.etag).toBeUndefined();
  });

  it('a 429 or a quota 503 sends none of the bytes read, through the node:http and the Lambda adapters', async () => {
    const module = stack.snapshot.modules.find((m) => m.id === 101)!;
    const failing = () => Promise.reject(new DependencyError('quota', 'meter failed (test)'));
    for (const [meter, status] of [
      [exhausted, 429],
      [failing, 503],
    ] as const) {
      const events: Events = [];
      const handle = overlapped(gatedStore(events, Promise.resolve()), recordingMeter(events, { meter }));
      const http = await overHttp(handle, '/v1/modules/101');
      const lambda = await overLambda(handle, '/v1/modules/101');
      expect(http.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
      expect(lambda.startsWith(`{"statusCode":${status},`)).toBe(true);
      // The object was read (at the same time as the meter), and nothing of it reached either wire.
      expect(events.filter((e) => e === 'read end').length).toBeGreaterThanOrEqual(2);
      for (const bytes of [http, lambda]) {
        expect(bytes).not.toContain(module.name);
        expect(bytes).not.toContain('"data"');
      }
    }
  });
});

describe('a read that fails while the request is metered: answered and counted as before', () => {
  /** A read that fails once the meter has answered (the meter ends first: its count is written). */
  function failingAfterMeter(events: Events, quota: ReturnType<typeof recordingMeter>): ObjectStore {
    const metered = quota.started.then(() => new Promise((resolve) => setTimeout(resolve, 20)));
    return gatedStore(events, metered, true);
  }

  it('503 origin_unavailable, not counted: the admitted count is taken back', async () => {
    const before = await counted(KEYS.main, MAIN_MONTH);
    const events: Events = [];
    const quota = recordingMeter(events);
    const answer = await stack.call(
      'GET',
      '/v1/modules/101',
      auth(KEYS.main),
      overlapped(failingAfterMeter(events, quota), quota),
    );
    expect([answer.status, codeOf(answer)]).toEqual([503, 'origin_unavailable']);
    expect(answer.headers['x-ratelimit-limit-month']).toBeUndefined();
    expect(events).toEqual(['meter', 'meter end', 'read', 'read end', 'refund']);
    expect(await counted(KEYS.main, MAIN_MONTH)).toBe(countedLater(before, 0));
    expect(stack.logs.at(-2)).toMatchObject({ status: 503, error: expect.stringContaining('objects') });
    expect(stack.logs.at(-2)!.error).not.toContain('refund');
  });

  it('a refund that fails too: 503 origin_unavailable, counted once, and the log line says so', async () => {
    const before = await counted(KEYS.main, MAIN_MONTH);
    const events: Events = [];
    const quota = recordingMeter(events, {
      refund: () => Promise.reject(new DependencyError('quota', 'refund failed (test)')),
    });
    const answer = await stack.call(
      'GET',
      '/v1/modules/101',
      auth(KEYS.main),
      overlapped(failingAfterMeter(events, quota), quota),
    );
    expect([answer.status, codeOf(answer)]).toEqual([503, 'origin_unavailable']);
    expect(await counted(KEYS.main, MAIN_MONTH)).toBe(countedLater(before, 1));
    expect(stack.logs.at(-2)!.error).toMatch(
      /^objects: .*; counted, refund failed: quota: refund failed \(test\)$/,
    );
  });

  it.each([
    ['refuses it (429)', 'refused'],
    ['fails (503)', 'failed'],
  ] as const)(
    'a read that fails while the meter %s: 503 origin_unavailable, nothing taken back',
    async (_name, how) => {
      const before = await counted(KEYS.main, MAIN_MONTH);
      const events: Events = [];
      const quota = recordingMeter(events, {
        meter: (key, now) =>
          how === 'failed'
            ? Promise.reject(new DependencyError('quota', 'meter failed (test)'))
            : Promise.resolve({
                ok: false,
                reason: 'month',
                retryAfterSeconds: 1,
                limitMonth: key.limits.month,
                remainingMonth: 0,
                limitMinute: key.limits.minute,
                remainingMinute: 0,
                reset: Math.floor(now.getTime() / 60_000) * 60,
              }),
      });
      const answer = await stack.call(
        'GET',
        '/v1/modules/101',
        auth(KEYS.main),
        overlapped(failingAfterMeter(events, quota), quota),
      );
      expect([answer.status, codeOf(answer)]).toEqual([503, 'origin_unavailable']);
      expect(events).not.toContain('refund');
      expect(await counted(KEYS.main, MAIN_MONTH)).toBe(countedLater(before, 0));
      // A failed meter may have counted unseen (its answer lost): the line says so; a refusal counted nothing.
      const error = stack.logs.at(-2)!.error;
      if (how === 'failed')
        expect(error).toMatch(/; may be counted once, metering failed: quota: meter failed \(test\)$/);
      else expect(error).not.toContain('metering failed');
    },
  );
});

/** Everything a `node:http` server over `handle` sends for one GET, as text. */
async function overHttp(handle: ProxyHandler, target: string): Promise<string> {
  const server = createHttpServer(handle, { log: () => {} });
  const port = await listenOnLoopback(server);
  try {
    return await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
      socket.on('error', reject);
      socket.write(
        `GET ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEYS.free}\r\nConnection: close\r\n\r\n`,
      );
    });
  } finally {
    await closeServer(server);
  }
}

/** Everything the Lambda adapter over `handle` streams for one GET (prelude included), as text. */
async function overLambda(handle: ProxyHandler, target: string): Promise<string> {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(Buffer.from(chunk));
      callback();
    },
  });
  const [rawPath, rawQueryString = ''] = target.split('?') as [string, string?];
  await createLambdaHandler(handle, localRuntime)(
    {
      rawPath,
      rawQueryString,
      headers: { authorization: `Bearer ${KEYS.free}` },
      requestContext: { http: { method: 'GET' } },
    },
    sink,
  );
  return Buffer.concat(chunks).toString('latin1');
}
