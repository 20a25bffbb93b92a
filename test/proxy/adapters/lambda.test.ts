import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createLambdaHandler,
  type FunctionUrlEvent,
  type LambdaRuntime,
  localRuntime,
  type ResponsePrelude,
  requestFromEvent,
  UnsupportedEventError,
} from '../../../proxy/adapters/lambda.js';
import type { ProxyHandler } from '../../../proxy/core/types.js';
import { errorMessage } from '../../../store/errors.js';
import { loadResponseValidator } from '../../helpers/openapi.js';
import { KEYS } from '../../helpers/proxy.js';
import { CODED_PATH, CODED_QUERY, decode, fixed, fixtureHandler, identityAnswer } from './setup.js';

const openapi = loadResponseValidator();
let handle: ProxyHandler;

beforeAll(async () => {
  handle = await fixtureHandler();
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
      const identity = await identityAnswer(handle);
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

describe('Lambda adapter: events and the life cycle', () => {
  /** Run `fn` with stdout captured (the adapter's own log lines go there); what was written. */
  async function capturingStdout(fn: () => Promise<unknown>): Promise<{ written: string; error: unknown }> {
    const original = process.stdout.write.bind(process.stdout);
    let written = '';
    process.stdout.write = ((chunk: string | Uint8Array) => {
      written += String(chunk);
      return true;
    }) as typeof process.stdout.write;
    let error: unknown;
    try {
      await fn();
    } catch (caught) {
      error = caught;
    } finally {
      process.stdout.write = original;
    }
    return { written, error };
  }

  it.each([
    ['a console test event', { key1: 'value1', key2: 'value2', key3: 'value3' }],
    ['a schedule', { version: '0', source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} }],
    ['an API Gateway v1 payload', { httpMethod: 'GET', path: '/v1/tags', headers: {}, requestContext: {} }],
    ['nothing', null],
  ])('%s: a clear UnsupportedEventError and a log line, never a TypeError', async (_, invocation) => {
    const { stream, seen } = slowWritable(1 << 20, 0);
    let answered = false;
    const handler = createLambdaHandler(async (request) => {
      answered = true;
      return handle(request);
    }, localRuntime);

    const { written, error } = await capturingStdout(() => handler(invocation, stream));

    expect(error).toBeInstanceOf(UnsupportedEventError);
    expect(errorMessage(error)).toMatch(/function URL requests \(payload format 2\.0/);
    expect(answered).toBe(false);
    expect(seen.chunks).toHaveLength(0);
    const lines = written
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([expect.objectContaining({ level: 'error', message: 'not a function URL event' })]);
    expect(JSON.stringify(lines)).not.toContain('value1');
  });

  it('ends the invocation only once the work the request began has settled, after the answer is sent', async () => {
    const order: string[] = [];
    const inner = await fixtureHandler();
    const withWork: ProxyHandler = async (request) => inner(request);
    withWork.settle = async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push('settled');
    };
    const { stream, seen } = slowWritable(1 << 20, 0);
    stream.on('finish', () => order.push('answer sent'));

    await createLambdaHandler(withWork, localRuntime)(event('GET', '/v1/tags', '', {}), stream);
    order.push('invocation over');

    expect(seen.ended).toBe(true);
    expect(order).toEqual(['answer sent', 'settled', 'invocation over']);
  });

  it('stamps the arrival time, so the core’s latency counts every wait before it', async () => {
    const arrivals: (number | undefined)[] = [];
    const before = performance.now();
    const { stream } = slowWritable(1 << 20, 0);

    await createLambdaHandler(async (request) => {
      arrivals.push(request.receivedAt);
      return handle(request);
    }, localRuntime)(event('GET', '/v1/tags', '', {}), stream);

    expect(arrivals[0]).toBeGreaterThanOrEqual(before);
    expect(arrivals[0]).toBeLessThanOrEqual(performance.now());
  });
});
