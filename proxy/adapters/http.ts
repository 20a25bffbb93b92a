/** `node:http` adapter: local runs (`npm start`) and tests serve the same core as Lambda. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { errorBody } from '../core/errors.js';
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
  return createServer((request, response) => {
    // Request bodies are not part of this API: drain them so the connection can be reused.
    request.resume();
    serve(handle, request, response).catch(() => {
      // The core answers every request itself; this only guards against a broken socket or a bug.
      if (!response.headersSent) {
        const body = errorBody({ code: 'origin_unavailable', message: 'Internal failure.' }, 'req_unknown');
        response.writeHead(503, {
          'content-type': 'application/json; charset=utf-8',
          'content-length': body.byteLength,
        });
        response.end(body);
      } else {
        response.destroy();
      }
    });
  });
}
