/**
 * A fault-injecting HTTP proxy on loopback, put in front of s3rver or dynalite (the HTTP-aware sibling of
 * slow-proxy.ts, which works on TCP chunks and cannot tell a body from a head). Every request is forwarded
 * as it came (the signature covers the Host header, which is kept), and what comes back is then passed on,
 * damaged, or lost, as the test's rule says:
 *
 * - `flip`: one byte of the body inverted, length and headers kept (bit rot, a bad disk, a buggy middlebox);
 * - `truncate`: the head as sent (its Content-Length too), half the body, then the connection is closed;
 * - `cut-reset`: the head as sent, half the body, then the connection is reset (a reset mid-body);
 * - `short-length`: half the body under a Content-Length that says so: an answer that looks whole but is cut
 *   (a middlebox that got the length wrong); the connection stays usable;
 * - `long-length`: the whole body under a Content-Length 16 bytes longer, the connection left open: the
 *   client waits for bytes that never come, until its deadline;
 * - `hold-after`: the request reaches the server (a write lands), then nothing is answered and the connection
 *   is left open: the client's deadline passes;
 * - `garbage`: the body replaced by random bytes of the same length, status and headers kept;
 * - `reset-after`: the request reaches the server (a write lands), then the connection is reset before any
 *   byte of the answer is sent: the client never learns the outcome;
 * - `{ status, body }`: answered here without reaching the server (e.g. `503 SlowDown`); with `forward`,
 *   answered so after the server has handled the request (a write that landed, answered 500);
 * - `{ until }`: the request is held here, not forwarded, until `until` settles; then it reaches the server
 *   and its answer is passed on (a write delivered late, after its sender may have given up on it).
 *
 * Rules see each request (method, path, headers, body) and return an action, or `undefined` to pass it.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { listenOnLoopback } from './loopback.js';

export type FaultAction =
  | 'pass'
  | 'flip'
  | 'truncate'
  | 'cut-reset'
  | 'short-length'
  | 'long-length'
  | 'garbage'
  | 'reset-after'
  | 'hold-after'
  /** Answered here instead of by the server; with `forward`, after the server has handled the request. */
  | { status: number; body: string; headers?: Record<string, string>; forward?: boolean }
  /** Held, not forwarded, until `until` settles; then passed. */
  | { until: Promise<unknown> };

export interface FaultRequest {
  method: string;
  /** The request target as sent: path and query. */
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export type FaultRule = (request: FaultRequest) => FaultAction | undefined;

export interface FaultProxy {
  /** `http://127.0.0.1:<port>`, to use as the client's endpoint. */
  endpoint: string;
  port: number;
  /** The rule for requests from now on; `undefined` passes everything. */
  setRule(rule: FaultRule | undefined): void;
  /**
   * Every request seen, oldest first: the action taken, and the status the server answered (undefined
   * when the request did not reach it) — a write the server answered 200 landed, whatever the client saw.
   */
  readonly seen: { method: string; url: string; target: string; action: string; status?: number }[];
  /** Stop listening and drop every connection. */
  close(): Promise<void>;
}

/** An S3 error answer as S3 sends it: the status, and the code in an XML body. */
export function s3Error(status: number, code: string, message = code): FaultAction {
  return {
    status,
    headers: { 'content-type': 'application/xml' },
    body: `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`,
  };
}

function readBody(stream: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** `body` damaged as `action` says (a copy; the length is kept). */
function damage(body: Buffer, action: 'flip' | 'garbage'): Buffer {
  if (body.byteLength === 0) return body;
  if (action === 'garbage') return randomBytes(body.byteLength);
  const copy = Buffer.from(body);
  const at = Math.floor(copy.byteLength / 2);
  copy[at] = copy[at]! ^ 0xff;
  return copy;
}

/**
 * @example
 * const faults = await startFaultProxy({ targetPort: s3.port });
 * faults.setRule(({ method }) => (method === 'GET' ? 'flip' : undefined)); // every GET body damaged
 */
export async function startFaultProxy(options: {
  targetPort: number;
  targetHost?: string;
}): Promise<FaultProxy> {
  const host = options.targetHost ?? '127.0.0.1';
  let rule: FaultRule | undefined;
  const seen: FaultProxy['seen'] = [];
  const sockets = new Set<Socket>();

  const answer = async (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const body = await readBody(incoming);
    const action =
      rule?.({
        method: incoming.method ?? 'GET',
        url: incoming.url ?? '/',
        headers: incoming.headers,
        body,
      }) ?? 'pass';
    const record: FaultProxy['seen'][number] = {
      method: incoming.method ?? '',
      url: incoming.url ?? '',
      // DynamoDB names its operation in a header (`DynamoDB_20120810.UpdateItem`).
      target: String(incoming.headers['x-amz-target'] ?? ''),
      action: typeof action === 'string' ? action : 'until' in action ? 'until' : String(action.status),
    };
    seen.push(record);
    if (typeof action === 'object' && 'until' in action) await action.until.catch(() => {});
    else if (typeof action === 'object' && !action.forward) {
      const bytes = Buffer.from(action.body);
      outgoing.writeHead(action.status, { ...action.headers, 'content-length': String(bytes.byteLength) });
      outgoing.end(bytes);
      return;
    }
    const upstream = await new Promise<IncomingMessage>((resolve, reject) => {
      const forwarded = request(
        {
          host,
          port: options.targetPort,
          method: incoming.method,
          path: incoming.url,
          headers: incoming.headers,
        },
        resolve,
      );
      forwarded.on('error', reject);
      forwarded.end(body);
    });
    const answerBody = await readBody(upstream);
    record.status = upstream.statusCode;
    if (action === 'reset-after') {
      outgoing.socket?.resetAndDestroy();
      return;
    }
    // Left unanswered (the socket is destroyed by close()).
    if (action === 'hold-after') return;
    if (typeof action === 'object' && !('until' in action)) {
      const bytes = Buffer.from(action.body);
      outgoing.writeHead(action.status, { ...action.headers, 'content-length': String(bytes.byteLength) });
      outgoing.end(bytes);
      return;
    }
    const headers = { ...upstream.headers };
    const half = answerBody.subarray(0, Math.floor(answerBody.byteLength / 2));
    if (action === 'short-length' || action === 'long-length') delete headers['transfer-encoding'];
    if (action === 'short-length') {
      outgoing.writeHead(upstream.statusCode ?? 502, {
        ...headers,
        'content-length': String(half.byteLength),
      });
      outgoing.end(half);
      return;
    }
    if (action === 'long-length') {
      outgoing.writeHead(upstream.statusCode ?? 502, {
        ...headers,
        'content-length': String(answerBody.byteLength + 16),
      });
      outgoing.write(answerBody);
      return;
    }
    outgoing.writeHead(upstream.statusCode ?? 502, headers);
    if ((action === 'truncate' || action === 'cut-reset') && answerBody.byteLength > 1) {
      outgoing.write(half, () => {
        if (action === 'cut-reset') outgoing.socket?.resetAndDestroy();
        else outgoing.socket?.destroy();
      });
      return;
    }
    outgoing.end(action === 'flip' || action === 'garbage' ? damage(answerBody, action) : answerBody);
  };

  const server: Server = createServer((incoming, outgoing) => {
    answer(incoming, outgoing).catch(() => outgoing.socket?.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  });
  const port = await listenOnLoopback(server);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    setRule(next) {
      rule = next;
    },
    seen,
    close() {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
