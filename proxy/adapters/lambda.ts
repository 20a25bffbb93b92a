/**
 * AWS Lambda adapter: a function URL (payload v2) with response streaming, behind CloudFront.
 * Status and headers are settled before the first body byte, and the body is piped with back-pressure.
 */
import { Readable, type Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import type { ProxyHandler, ProxyRequest } from '../core/types.js';
import { flushLog } from '../log/sink.js';

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

export type StreamingHandler = (
  event: FunctionUrlEvent,
  responseStream: Writable,
  context?: unknown,
) => Promise<void>;

/** The `awslambda` global of the Node.js runtime, as far as this adapter uses it. */
export interface LambdaRuntime {
  streamifyResponse(handler: StreamingHandler): StreamingHandler;
  HttpResponseStream: { from(stream: Writable, prelude: ResponsePrelude): Writable };
}

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

function* chunksOf(body: Buffer): Generator<Buffer> {
  for (let start = 0; start < body.byteLength; start += CHUNK_BYTES)
    yield body.subarray(start, start + CHUNK_BYTES);
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
    try {
      const response = await handle(requestFromEvent(event));
      const stream = runtime.HttpResponseStream.from(responseStream, {
        statusCode: response.status,
        headers: response.headers,
      });
      if (response.body && response.body.byteLength > 0) {
        await pipeline(Readable.from(chunksOf(response.body)), stream);
        return;
      }
      // The runtime sends the prelude on the first write: a bodiless answer still needs one (an empty one).
      stream.write('');
      stream.end();
      await finished(stream);
    } finally {
      // The log line of this invocation is written before the runtime may freeze the sandbox.
      flushLog();
    }
  });
}
