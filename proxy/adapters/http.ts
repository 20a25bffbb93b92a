/** `node:http` adapter: local runs (`npm start`) and tests serve the same core as Lambda. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ALLOW_HEADER, JSON_CONTENT_TYPE, NOT_CACHEABLE } from '../core/constants.js';
import { apiError, errorBody } from '../core/errors.js';
import { newRequestId } from '../core/handler.js';
import type { ProxyHandler, ProxyRequest } from '../core/types.js';

/** The core's request from a node request: raw path and query, header values joined as HTTP allows. */
export function requestFromNode(request: IncomingMessage): ProxyRequest {
  const target = request.url ?? '/';
  const question = target.indexOf('?');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return {
    method: request.method ?? 'GET',
    path: question < 0 ? target : target.slice(0, question),
    query: question < 0 ? '' : target.slice(question + 1),
    headers,
  };
}

async function serve(
  handle: ProxyHandler,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const answer = await handle(requestFromNode(request));
  response.writeHead(answer.status, answer.headers);
  // HEAD, 204 and 304 answers come without a body from the core.
  response.end(answer.body);
}

/**
 * An HTTP server for `handle`; the caller chooses where it listens (127.0.0.1 for local use).
 * @example
 * const server = createHttpServer(handle);
 * server.listen(8787, '127.0.0.1');
 */
export function createHttpServer(handle: ProxyHandler): Server {
  const server = createServer((request, response) => {
    // Request bodies are not part of this API: drain them so the connection can be reused.
    request.resume();
    serve(handle, request, response).catch(() => {
      // The core answers every request itself; this only guards against a broken socket or a bug.
      if (!response.headersSent) {
        const body = errorBody({ code: 'origin_unavailable', message: 'Internal failure.' }, 'req_unknown');
        response.writeHead(503, {
          'content-type': JSON_CONTENT_TYPE,
          'content-length': body.byteLength,
        });
        response.end(body);
      } else {
        response.destroy();
      }
    });
  });
  server.on('clientError', answerClientError);
  return server;
}

/** Node's own answers to requests its parser refuses, by parser error code (as its default handler). */
const PARSER_STATUS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

/**
 * Node's parser refuses methods it does not know (`FOO`, `A`) before a request exists, with a bare 400; the
 * API owes every method other than GET, HEAD and OPTIONS a 405 with `Allow` and the envelope (spec §5.5).
 * Other parse errors keep Node's default answer.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const busy = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
  if (error.code === 'ECONNRESET' || !socket.writable || busy) {
    socket.destroy();
    return;
  }
  if (error.code === 'HPE_INVALID_METHOD') {
    const requestId = newRequestId();
    const body = errorBody(
      apiError('method_not_allowed', `The method used is not allowed; use ${ALLOW_HEADER}.`),
      requestId,
    );
    const head =
      'HTTP/1.1 405 Method Not Allowed\r\n' +
      `Allow: ${ALLOW_HEADER}\r\nContent-Type: ${JSON_CONTENT_TYPE}\r\nContent-Length: ${body.byteLength}\r\n` +
      `Cache-Control: ${NOT_CACHEABLE}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n`;
    socket.end(Buffer.concat([Buffer.from(head), body]));
    return;
  }
  socket.end(`HTTP/1.1 ${PARSER_STATUS[error.code ?? ''] ?? '400 Bad Request'}\r\nConnection: close\r\n\r\n`);
}
