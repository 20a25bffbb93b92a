/**
 * AWS Lambda adapter: a function URL (payload v2) with response streaming, behind CloudFront.
 * Status and headers are settled before the first body byte, and the body is piped with back-pressure.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type * as StreamPromises from 'node:stream/promises';
import type { ProxyHandler, ProxyRequest } from '../core/types.js';
import { flushLog, logJson } from '../log/sink.js';

/** The parts of a function URL event (payload format 2.0) the proxy reads. */
export interface FunctionUrlEvent {
  rawPath: string;
  rawQueryString?: string;
  headers?: Record<string, string | undefined>;
  requestContext: { http: { method: string } };
}

export interface ResponsePrelude {
  statusCode: number;
  headers: Record<string, string>;
}

export type StreamingHandler = (event: unknown, responseStream: Writable, context?: unknown) => Promise<void>;

/** The `awslambda` global of the Node.js runtime, as far as this adapter uses it. */
export interface LambdaRuntime {
  streamifyResponse(handler: StreamingHandler): StreamingHandler;
  HttpResponseStream: { from(stream: Writable, prelude: ResponsePrelude): Writable };
}

/**
 * `finished` of node:stream/promises, loaded by the first invocation (the runtime has loaded node:stream by
 * then; a fresh process importing the function does not pay for it).
 */
let streamPromises: typeof StreamPromises | undefined;
const finished: typeof StreamPromises.finished = (stream, options) => {
  streamPromises ??= process.getBuiltinModule('node:stream/promises') as typeof StreamPromises;
  return streamPromises.finished(stream, options);
};

/** Body chunks small enough that a slow client holds back reading, not memory. */
const CHUNK_BYTES = 16 * 1024;
/** CloudFront's viewer-request function moves the consumer's Authorization here: OAC signs with `authorization`. */
const FORWARDED_AUTHORIZATION = 'x-catalogue-authorization';

/**
 * The same wire format as the runtime's `HttpResponseStream.from` (JSON prelude, then 8 NUL bytes, written
 * just before the first body write), for running and testing the handler outside Lambda.
 */
export const localRuntime: LambdaRuntime = {
  streamifyResponse: (handler) => handler,
  HttpResponseStream: {
    from(stream, prelude) {
      const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
      let first = true;
      stream.write = ((...args: unknown[]) => {
        if (first) {
          first = false;
          write(Buffer.concat([Buffer.from(JSON.stringify(prelude)), Buffer.alloc(8)]));
        }
        return write(...args);
      }) as Writable['write'];
      return stream;
    },
  },
};

function currentRuntime(): LambdaRuntime {
  // Outside Lambda, a package the AWS SDK loads (@aws/lambda-invoke-store) sets `globalThis.awslambda = {}`:
  // only a global that can stream is the runtime's.
  const runtime = (globalThis as unknown as { awslambda?: Partial<LambdaRuntime> }).awslambda;
  return typeof runtime?.streamifyResponse === 'function' && runtime.HttpResponseStream
    ? (runtime as LambdaRuntime)
    : localRuntime;
}

/**
 * The core's request from a function URL event. The consumer's key comes from `x-catalogue-authorization`
 * when CloudFront set it; otherwise from `authorization`, unless that holds the OAC's own SigV4 signature
 * (then the consumer sent none).
 */
export function requestFromEvent(event: FunctionUrlEvent): ProxyRequest {
  const headers: Record<string, string | undefined> = { ...event.headers };
  const forwarded = headers[FORWARDED_AUTHORIZATION];
  delete headers[FORWARDED_AUTHORIZATION];
  if (forwarded !== undefined) headers.authorization = forwarded;
  else if (headers.authorization?.startsWith('AWS4-HMAC-SHA256 ')) delete headers.authorization;
  return {
    method: event.requestContext.http.method,
    path: event.rawPath,
    query: event.rawQueryString ?? '',
    headers,
  };
}

/**
 * Whether `event` is a function URL request (payload format 2.0): Lambda also delivers console test events,
 * schedules and API Gateway v1 payloads to whatever handler a function has.
 */
function isFunctionUrlEvent(event: unknown): event is FunctionUrlEvent {
  const candidate = event as Partial<FunctionUrlEvent> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.rawPath === 'string' &&
    typeof candidate.requestContext?.http?.method === 'string' &&
    (candidate.rawQueryString === undefined || typeof candidate.rawQueryString === 'string') &&
    (candidate.headers === undefined || (typeof candidate.headers === 'object' && candidate.headers !== null))
  );
}

/** What an event that is not a function URL request looks like, for the log (names, never values). */
function eventShape(event: unknown): Record<string, unknown> {
  if (typeof event !== 'object' || event === null) return { type: event === null ? 'null' : typeof event };
  const fields = event as Record<string, unknown>;
  const text = (name: string) =>
    typeof fields[name] === 'string' ? String(fields[name]).slice(0, 64) : undefined;
  return {
    keys: Object.keys(fields).slice(0, 20),
    ...(text('version') === undefined ? {} : { version: text('version') }),
    ...(text('source') === undefined ? {} : { source: text('source') }),
    ...(text('detail-type') === undefined ? {} : { detail_type: text('detail-type') }),
  };
}

/** The error a non-function-URL invocation ends with: the runtime reports its name and message to the caller. */
export class UnsupportedEventError extends Error {
  override name = 'UnsupportedEventError';
}

/**
 * The body in chunks, each written only when the stream has room (back-pressure), then the end. What
 * `stream.pipeline` would do for a buffer already in memory, without its per-call AbortController, whose
 * abort at the end builds a DOMException: ~70 µs of CPU per answer on Node.js 24 (bench section 10).
 */
async function writeBody(stream: Writable, body: Buffer): Promise<void> {
  // Rejects when the stream fails or closes before its end (the client went away), as pipeline would.
  const closed = finished(stream);
  closed.catch(() => {});
  for (let start = 0; start < body.byteLength; start += CHUNK_BYTES) {
    if (!stream.write(body.subarray(start, start + CHUNK_BYTES)))
      await Promise.race([once(stream, 'drain'), closed]);
  }
  stream.end();
  await closed;
}

/**
 * Wrap the core as a streaming Lambda handler.
 * @example export const handler = createLambdaHandler(createProxy(loadConfig()));
 */
export function createLambdaHandler(
  handle: ProxyHandler,
  runtime: LambdaRuntime = currentRuntime(),
): StreamingHandler {
  return runtime.streamifyResponse(async (event, responseStream) => {
    const receivedAt = performance.now();
    try {
      if (!isFunctionUrlEvent(event)) {
        const shape = eventShape(event);
        logJson({
          time: new Date().toISOString(),
          level: 'error',
          message: 'not a function URL event',
          event: shape,
        });
        throw new UnsupportedEventError(
          'This function answers Lambda function URL requests (payload format 2.0, with rawPath and requestContext.http.method) only; ' +
            `this event is not one (${JSON.stringify(shape)}). Call the API through its URL.`,
        );
      }
      const response = await handle({ ...requestFromEvent(event), receivedAt });
      const stream = runtime.HttpResponseStream.from(responseStream, {
        statusCode: response.status,
        headers: response.headers,
      });
      if (response.body && response.body.byteLength > 0) {
        await writeBody(stream, response.body);
      } else {
        // The runtime sends the prelude on the first write: a bodiless answer still needs one (an empty one).
        stream.write('');
        stream.end();
        await finished(stream);
      }
      // The answer is sent; work the request began (a due re-read of the cursor secret) ends within this
      // invocation, since the runtime may freeze the process as soon as the handler returns.
      await handle.settle?.();
    } finally {
      // The log lines of this invocation are written before the runtime may freeze the sandbox.
      flushLog();
    }
  });
}
