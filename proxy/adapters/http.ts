/**
 * `node:http` adapter: local runs (`npm start`) and tests serve the same core as Lambda.
 *
 * Node's parser refuses some requests before a request object exists (conflicting framing, oversize heads,
 * unknown methods, broken request lines), and lets through a few that HTTP/1.1 forbids (two `Host`
 * headers, a `Transfer-Encoding` that does not end in chunked, HTTP/0.9 and "HTTP/2.0" request lines). The
 * adapter answers all of those itself, in the API's error envelope with a request id, `Connection: close`
 * and one log line each (the table is in docs/api.md). It never gives an answer out of
 * order: a malformed request pipelined behind a valid one is refused only after the valid one is answered,
 * so no request is metered and logged as answered without its answer being sent.
 */
import {
  createServer,
  type IncomingMessage,
  maxHeaderSize,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { Duplex } from 'node:stream';
import { fixedRequestId, newRequestId } from '../../store/request-id.js';
import type { ProxyHandler, ProxyRequest, RequestLogLine } from '../core/types.js';
import { type ApiError, apiError, errorBody } from '../http/errors.js';
import { JSON_CONTENT_TYPE, NOSNIFF, NOT_CACHEABLE } from '../http/headers.js';
import { logJson } from '../log/sink.js';
import { latencySince } from '../log/time.js';
import { ALLOW_HEADER } from '../request/routes.js';

/** CloudFront's limit on a URL: a longer request target gets the same 414 locally as behind CloudFront. */
export const MAX_TARGET_BYTES = 8_192;

/**
 * How long an idle keep-alive connection is kept: the `Keep-Alive: timeout=` a server advertises, and how long
 * it really holds the connection. A client that reuses a connection the server is closing at that instant
 * loses its request (undici: `UND_ERR_SOCKET` "other side closed"; Node's client: "socket hang up"), so every
 * client must give up first, by a margin wider than a busy client's stall. Node's defaults advertise 5 s and
 * hold 6 s; undici and fetch give up 2 s before the hint (3 s: a margin of 3 s, which a loaded machine's stall
 * can exceed), and Node's `http.Agent` without a `timeout` (the AWS SDK's, the proxy's own signed calls) keeps
 * a connection until the server closes it. Advertised 60 s (undici keeps a connection 58 s), held 125 s: 67 s
 * of margin for clients that honour the hint, and above the idle limits of common clients that ignore it
 * (curl 118 s, Firefox 115 s, Go 90 s); a client that never gives up is left to retry (the signed calls
 * retry a reset of a reused connection once). An idle connection costs a file descriptor and a few kB.
 */
export const IDLE_CONNECTION = { advertisedMs: 60_000, heldMs: 125_000 } as const;

/** Apply {@link IDLE_CONNECTION} to a node:http server (the proxy's, and the local S3 and DynamoDB servers'). */
export function holdIdleConnections(server: Server): void {
  server.keepAliveTimeout = IDLE_CONNECTION.advertisedMs;
  server.keepAliveTimeoutBuffer = IDLE_CONNECTION.heldMs - IDLE_CONNECTION.advertisedMs;
}

export interface HttpServerOptions {
  /** Where the adapter's own answers are logged (the core logs the others). @default logJson */
  log?: (line: RequestLogLine) => void;
  /** @default newRequestId */
  requestId?: () => string;
  /** @default () => new Date() */
  now?: () => Date;
}

/** An answer the adapter gives itself, before or instead of the core. */
interface Refusal {
  status: number;
  error: ApiError;
  /** What the log line says went wrong (a parser error code or a rule), never request bytes. */
  reason: string;
  method?: string;
}

const NOT_HTTP_1_1 = (why: string) => `The request could not be read as HTTP/1.1: ${why}.`;

/** The request head, read in one pass over the raw header lines. */
interface Head {
  /** By lower-case name; a header sent more than once has its values joined with ", ". */
  headers: Record<string, string>;
  hosts: number;
}

function readHead(request: IncomingMessage): Head {
  // No prototype: a header named `constructor` or `__proto__` is just a header.
  const headers: Record<string, string> = Object.create(null);
  let hosts = 0;
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    const value = raw[i + 1]!;
    if (name === 'host') hosts++;
    const earlier = headers[name];
    headers[name] = earlier === undefined ? value : `${earlier}, ${value}`;
  }
  return { headers, hosts };
}

/**
 * The core's request from a node request: raw path and query; a header sent more than once has its values
 * joined with ", " (so two Authorization headers are malformed, as behind CloudFront and Lambda, where Node's
 * own `headers` would keep only the first).
 */
export function requestFromNode(
  request: IncomingMessage,
  head: Head = readHead(request),
  receivedAt: number = performance.now(),
): ProxyRequest {
  const target = request.url ?? '/';
  const question = target.indexOf('?');
  return {
    method: request.method ?? 'GET',
    path: question < 0 ? target : target.slice(0, question),
    query: question < 0 ? '' : target.slice(question + 1),
    headers: head.headers,
    receivedAt,
  };
}

/** HTTP/1.1 rules Node's parser lets through, checked before the core sees the request. */
function framingRefusal(request: IncomingMessage, head: Head): Refusal | undefined {
  const version = request.httpVersion;
  if (version !== '1.1' && version !== '1.0') {
    return {
      status: 505,
      error: apiError('invalid_parameter', 'Only HTTP/1.0 and HTTP/1.1 are served.'),
      reason: `http version ${/^[0-9.]{1,5}$/.test(version) ? version : 'other'}`,
    };
  }
  const hosts = head.hosts;
  if (hosts > 1 || (hosts === 0 && version === '1.1')) {
    // RFC 9112 §3.2: a server MUST answer 400 to a request with no Host (HTTP/1.1) or more than one.
    const why = hosts > 1 ? 'more than one Host header' : 'no Host header';
    return { status: 400, error: apiError('invalid_parameter', NOT_HTTP_1_1(why)), reason: why };
  }
  const codings = head.headers['transfer-encoding'];
  if (codings !== undefined && !/(^|,)[ \t]*chunked[ \t]*$/i.test(codings)) {
    // RFC 9112 §6.3: a body whose length cannot be determined is refused with 400 and the connection closed.
    const why = 'a Transfer-Encoding that does not end in chunked';
    return { status: 400, error: apiError('invalid_parameter', NOT_HTTP_1_1(why)), reason: why };
  }
  // Node decodes the target as latin1: one character per byte.
  if ((request.url ?? '').length > MAX_TARGET_BYTES) {
    return {
      status: 414,
      error: apiError('invalid_parameter', `The request target is longer than ${MAX_TARGET_BYTES} bytes.`),
      reason: 'request target too long',
    };
  }
  return undefined;
}

/** The failing request's first line, from the packet Node's parser choked on. */
function failingRequestLine(error: ParserError): string {
  const packet = error.rawPacket;
  if (!packet) return '';
  const at = Math.min(error.bytesParsed ?? 0, packet.byteLength);
  const boundary = packet.lastIndexOf('\r\n\r\n', Math.max(0, at - 1));
  const start = boundary < 0 ? 0 : boundary + 4;
  const end = packet.indexOf('\r\n', start);
  return packet.subarray(start, end < 0 ? packet.byteLength : end).toString('latin1');
}

interface ParserError extends NodeJS.ErrnoException {
  rawPacket?: Buffer;
  bytesParsed?: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The answer to a request Node's parser refused: its status and error, and how it is logged. */
function parserRefusal(error: ParserError, maxHeaderSize: number): Refusal {
  const [method = '', target = '', version = ''] = failingRequestLine(error).split(' ');
  // Logged as the core logs methods; a failure inside a body has no method of its own to name.
  const named = /^[A-Z]{1,16}$/.test(method) ? method : undefined;
  const answer = refusalFor(error.code, { method, target, version, named }, maxHeaderSize);
  return {
    status: answer.status,
    error: apiError(answer.status === 405 ? 'method_not_allowed' : 'invalid_parameter', answer.message),
    reason: `http: ${error.code ?? 'unknown'}`,
    ...(named ? { method: named } : {}),
  };
}

/** The status and message for a parser error `code`, from what came of the request line. */
function refusalFor(
  code: string | undefined,
  line: { method: string; target: string; version: string; named: string | undefined },
  maxHeaderSize: number,
): { status: number; message: string } {
  const { method, target, version } = line;
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      // The target alone (as far as it came) is over CloudFront's URL limit: the URL is too long. Not the
      // request line: a target just under the limit with its method and version is over it, and its head is
      // too large for its header fields.
      return target.length > MAX_TARGET_BYTES
        ? { status: 414, message: `The request target is longer than ${MAX_TARGET_BYTES} bytes.` }
        : { status: 431, message: `The request header fields are larger than ${maxHeaderSize} bytes.` };
    case 'HPE_INVALID_METHOD':
      // A well-formed request line with a method Node does not know: the API's 405 (docs/api.md#errors).
      // (The packet may end inside a long target: the method and the start of a target are enough.)
      return TOKEN.test(method) && target !== ''
        ? { status: 405, message: `The method ${line.named ?? 'used'} is not allowed; use ${ALLOW_HEADER}.` }
        : { status: 400, message: NOT_HTTP_1_1('malformed request line') };
    case 'HPE_PAUSED_H2_UPGRADE':
      // The HTTP/2 connection preface (prior knowledge, `PRI * HTTP/2.0`).
      return { status: 505, message: 'Only HTTP/1.0 and HTTP/1.1 are served.' };
    case 'HPE_INVALID_VERSION':
      return /^HTTP\/[0-9]+(\.[0-9]+)?$/.test(version)
        ? { status: 505, message: 'Only HTTP/1.0 and HTTP/1.1 are served.' }
        : { status: 400, message: NOT_HTTP_1_1('malformed request line') };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return {
        status: 413,
        message: 'Request bodies are not part of this API; this one is too large to skip.',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'The request was not received in time.' };
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
      return {
        status: 400,
        message: NOT_HTTP_1_1('conflicting, repeated or invalid Content-Length or Transfer-Encoding'),
      };
    case 'HPE_INVALID_HEADER_TOKEN':
      // Control characters, a space before the colon, obs-fold continuation lines.
      return { status: 400, message: NOT_HTTP_1_1('malformed header field') };
    case 'HPE_INVALID_CHUNK_SIZE':
      return { status: 400, message: NOT_HTTP_1_1('malformed chunked body') };
    case 'HPE_INVALID_EOF_STATE':
      return { status: 400, message: NOT_HTTP_1_1('the connection ended inside a request') };
    default:
      return { status: 400, message: NOT_HTTP_1_1('malformed request') };
  }
}

/** The refusal as response headers and body (HEAD: the same headers, no body). */
function refusalAnswer(refusal: Refusal, requestId: string) {
  const body = errorBody(refusal.error, requestId);
  const headers: Record<string, string> = {
    'content-type': JSON_CONTENT_TYPE,
    'content-length': String(body.byteLength),
    'cache-control': NOT_CACHEABLE,
    'x-content-type-options': NOSNIFF,
    'x-request-id': requestId,
    // The framing of what follows on this connection cannot be trusted.
    connection: 'close',
  };
  if (refusal.status === 405) headers.allow = ALLOW_HEADER;
  return { headers, body };
}

/** Requests on one connection whose answers are not finished yet, and what to do once they are. */
interface ConnectionState {
  pending: number;
  whenIdle: (() => void) | undefined;
  refused: boolean;
  /** An earlier request on this connection ends it (`Connection: close`, HTTP/1.0, a refusal). */
  closing: boolean;
}

/** Whether the connection ends after answering `request` (RFC 9112 §9.3). */
function endsConnection(request: IncomingMessage, head: Head): boolean {
  const connection = head.headers.connection;
  if (connection === undefined) return request.httpVersion === '1.0';
  const options = connection.toLowerCase().split(',');
  const named = (option: string) => options.some((o) => o.trim() === option);
  return request.httpVersion === '1.0' ? !named('keep-alive') : named('close');
}

/** What the server's request and socket handlers share. */
interface Adapter {
  handle: ProxyHandler;
  log: (line: RequestLogLine) => void;
  nextRequestId: () => string;
  now: () => Date;
  /** The state of a connection, made on its first request. */
  stateOf: (socket: Duplex) => ConnectionState;
}

/**
 * An HTTP server for `handle`; the caller chooses where it listens (127.0.0.1 for local use).
 * @example
 * const server = createHttpServer(handle);
 * server.listen(8787, '127.0.0.1');
 */
export function createHttpServer(handle: ProxyHandler, options: HttpServerOptions = {}): Server {
  const connections = new WeakMap<Duplex, ConnectionState>();
  const adapter: Adapter = {
    handle,
    log: options.log ?? logJson,
    nextRequestId: options.requestId ?? newRequestId,
    now: options.now ?? (() => new Date()),
    stateOf: (socket) => {
      let state = connections.get(socket);
      if (!state) {
        state = { pending: 0, whenIdle: undefined, refused: false, closing: false };
        connections.set(socket, state);
      }
      return state;
    },
  };
  const onRequest = (request: IncomingMessage, response: ServerResponse) =>
    answerRequest(adapter, request, response);
  const server = createServer({ requireHostHeader: false }, onRequest);
  holdIdleConnections(server);
  // An expectation other than 100-continue would get Node's bare 417; HTTP lets a server ignore it (RFC 9110
  // §10.1.1 "MAY respond with 417"), so such a request is answered like any other.
  server.on('checkExpectation', onRequest);

  server.on('clientError', (error: ParserError, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    refuseOnSocket(adapter, socket, parserRefusal(error, maxHeaderSize));
  });

  // Node hands CONNECT to this event instead of the request handler (and closes the socket unanswered when
  // nobody listens): the spec's 405 before anything else.
  server.on('connect', (_request: IncomingMessage, socket: Duplex) => {
    refuseOnSocket(adapter, socket, {
      status: 405,
      error: apiError('method_not_allowed', `The method CONNECT is not allowed; use ${ALLOW_HEADER}.`),
      reason: 'CONNECT',
      method: 'CONNECT',
    });
  });
  return server;
}

/**
 * The adapter's log line for an answer it gave itself (the core logs the others); its latency counts from
 * `receivedAt`, when the adapter met the request (a refusal on a socket waits for the answers owed before it).
 */
function logRefusal(
  adapter: Adapter,
  refusal: Refusal,
  answered: { requestId: string; bytes: number; receivedAt: number },
): void {
  const { requestId, bytes, receivedAt } = answered;
  try {
    adapter.log({
      time: adapter.now().toISOString(),
      request_id: requestId,
      method: refusal.method ?? 'OTHER',
      route: 'unknown',
      status: refusal.status,
      latency_ms: latencySince(receivedAt),
      bytes,
      key_id: null,
      error: refusal.reason,
    });
  } catch {
    // A failing logger must not turn an answer into a crash.
  }
}

/** Refuse on the raw socket, after the answers still owed on it, then close it. */
function refuseOnSocket(adapter: Adapter, socket: Duplex, refusal: Refusal): void {
  const receivedAt = performance.now();
  const state = adapter.stateOf(socket);
  if (state.refused) return;
  state.refused = true;
  const send = () => {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const requestId = adapter.nextRequestId();
    const { headers, body } = refusalAnswer(refusal, requestId);
    const head = Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    socket.end(
      Buffer.concat([
        Buffer.from(`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\n${head}\r\n`),
        body,
      ]),
    );
    logRefusal(adapter, refusal, { requestId, bytes: body.byteLength, receivedAt });
  };
  if (state.pending > 0) state.whenIdle = send;
  else send();
}

/** One request of a connection: refused by the adapter (framing), or served by the core. */
function answerRequest(adapter: Adapter, request: IncomingMessage, response: ServerResponse): void {
  // The request's arrival, taken once: every log line of it counts its latency from here, whatever it waits on.
  const receivedAt = performance.now();
  const state = adapter.stateOf(request.socket);
  // Node parses every request of one write, even those behind one that closes the connection; their
  // answers could never be sent, so they are neither served (metered) nor logged (RFC 9112 §9.6).
  // Node closes the connection itself once the answers before it are written.
  if (state.closing || state.refused) return;
  const head = readHead(request);
  const refusal = framingRefusal(request, head);
  state.closing = refusal !== undefined || endsConnection(request, head);
  state.pending++;
  // `on`, not `once`: a response closes once, and the listener goes with it.
  response.on('close', () => {
    state.pending--;
    if (state.pending === 0 && state.whenIdle) {
      const then = state.whenIdle;
      state.whenIdle = undefined;
      then();
    }
  });
  // Request bodies are not part of this API: drain them so the connection can be reused.
  request.resume();
  if (refusal) {
    refuseRequest(adapter, { request, response, receivedAt }, refusal);
    return;
  }
  serve(adapter.handle, requestFromNode(request, head, receivedAt), response).catch(() =>
    answerFailure(response),
  );
}

/** A framing refusal answered on the request's response (HEAD without the body), and its log line. */
function refuseRequest(
  adapter: Adapter,
  {
    request,
    response,
    receivedAt,
  }: { request: IncomingMessage; response: ServerResponse; receivedAt: number },
  refusal: Refusal,
): void {
  const method = request.method ?? '';
  const requestId = adapter.nextRequestId();
  const { headers, body } = refusalAnswer(refusal, requestId);
  response.writeHead(refusal.status, headers);
  response.end(method === 'HEAD' ? undefined : body);
  logRefusal(
    adapter,
    { ...refusal, ...(/^[A-Z]{1,16}$/.test(method) ? { method } : {}) },
    {
      requestId,
      bytes: method === 'HEAD' ? 0 : body.byteLength,
      receivedAt,
    },
  );
}

/** The core answers every request itself; this only guards against a broken socket or a bug. */
function answerFailure(response: ServerResponse): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const body = errorBody(
    { code: 'origin_unavailable', message: 'Internal failure.' },
    fixedRequestId('unknown'),
  );
  response.writeHead(503, {
    'content-type': JSON_CONTENT_TYPE,
    'content-length': body.byteLength,
  });
  response.end(body);
}

async function serve(handle: ProxyHandler, request: ProxyRequest, response: ServerResponse): Promise<void> {
  const answer = await handle(request);
  response.writeHead(answer.status, answer.headers);
  // HEAD, 204 and 304 answers come without a body from the core.
  response.end(answer.body);
}
