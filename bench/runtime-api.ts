/**
 * A Lambda Runtime API emulator on loopback, for running a function under the official runtime interface
 * client (`aws-lambda-ric`) as Lambda runs it: the client long-polls `GET …/invocation/next`, gets one event
 * with the invoke headers, and posts the answer to `…/invocation/<id>/response` (streamed: chunked, the
 * prelude first) or `…/error`. Only what a single-concurrency sandbox uses.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Invocation {
  /** `performance.now()` when the answer's last byte arrived. */
  endedAt: number;
  /** The streamed answer as sent: prelude JSON, 8 NUL bytes, body (or the error document). */
  body: Buffer;
  error: boolean;
}

export interface RuntimeApi {
  /** `host:port`, for AWS_LAMBDA_RUNTIME_API. */
  address: string;
  /** Hand `event` to the next `GET …/next` and settle with its answer. */
  invoke(event: unknown): Promise<Invocation>;
  /** Fail what is pending (the runtime died) and forget it. */
  reset(reason: string): void;
  close(): Promise<void>;
}

interface Pending {
  id: string;
  event: string;
  settle: (invocation: Invocation) => void;
  fail: (error: Error) => void;
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * @example
 * const api = await startRuntimeApi();
 * // spawn the runtime interface client with AWS_LAMBDA_RUNTIME_API=api.address, then:
 * const { body, endedAt } = await api.invoke(functionUrlEvent);
 */
export async function startRuntimeApi(options: { deadlineMs?: number } = {}): Promise<RuntimeApi> {
  const deadlineMs = options.deadlineMs ?? 30_000;
  let sequence = 0;
  const queue: Pending[] = [];
  const inFlight = new Map<string, Pending>();
  let waiting: ServerResponse | undefined;

  const handOut = () => {
    if (!waiting || queue.length === 0) return;
    const next = queue.shift()!;
    inFlight.set(next.id, next);
    const response = waiting;
    waiting = undefined;
    response.writeHead(200, {
      'content-type': 'application/json',
      'lambda-runtime-aws-request-id': next.id,
      'lambda-runtime-deadline-ms': String(Date.now() + deadlineMs),
      'lambda-runtime-invoked-function-arn': 'arn:aws:lambda:us-east-1:123456789012:function:bench',
      'lambda-runtime-trace-id': `Root=1-00000000-${next.id.padStart(24, '0')};Sampled=0`,
    });
    response.end(next.event);
  };

  const server: Server = createServer(async (request, response) => {
    const url = request.url ?? '';
    if (request.method === 'GET' && url.endsWith('/runtime/invocation/next')) {
      waiting = response;
      handOut();
      return;
    }
    const body = await bodyOf(request);
    const endedAt = performance.now();
    const match = /\/runtime\/invocation\/([^/]+)\/(response|error)$/.exec(url);
    if (request.method === 'POST' && match) {
      const id = decodeURIComponent(match[1]!);
      const pending = inFlight.get(id);
      inFlight.delete(id);
      const trailerError = request.trailers['lambda-runtime-function-error-type'];
      pending?.settle({ endedAt, body, error: match[2] === 'error' || trailerError !== undefined });
      response.writeHead(202).end('{"status":"OK"}');
      return;
    }
    if (request.method === 'POST' && url.endsWith('/runtime/init/error')) {
      for (const pending of [...queue, ...inFlight.values()])
        pending.fail(new Error(`init error: ${body.toString()}`));
      queue.length = 0;
      inFlight.clear();
      response.writeHead(202).end('{"status":"OK"}');
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    address: `127.0.0.1:${port}`,
    invoke(event) {
      return new Promise<Invocation>((settle, fail) => {
        queue.push({ id: `bench-${++sequence}`, event: JSON.stringify(event), settle, fail });
        handOut();
      });
    },
    reset(reason) {
      for (const pending of [...queue, ...inFlight.values()]) pending.fail(new Error(reason));
      queue.length = 0;
      inFlight.clear();
      waiting = undefined;
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
