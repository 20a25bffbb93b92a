/**
 * The admin API on `node:http` (npm start): the body read (at most the API's limit), who signed it asked of
 * `authenticate` (local/admin.ts checks a SigV4 signature), then the pure handler.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { BOUNDS } from '../validate.js';
import type { AdminRequest, AdminResponse, Principal } from './handler.js';

/** The request as received, for a signature check. */
export interface ReceivedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export type Authenticate = (
  request: ReceivedRequest,
) => Promise<{ principal: Principal } | { refusal: string }>;

/** Read the body, stopping past `limit` bytes (then the answer is 413 without the rest). */
async function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    chunks.push(chunk as Buffer);
    if (size > limit) break;
  }
  return Buffer.concat(chunks, Math.min(size, limit + 1));
}

/**
 * @example const server = createAdminServer(handle, authenticate); server.listen(0, '127.0.0.1');
 */
export function createAdminServer(
  handle: (request: AdminRequest) => Promise<AdminResponse>,
  authenticate: Authenticate,
): Server {
  return createServer(async (incoming, outgoing) => {
    try {
      const body = await readBody(incoming, BOUNDS.bodyBytes);
      const url = incoming.url ?? '/';
      const received: ReceivedRequest = {
        method: incoming.method ?? 'GET',
        url,
        headers: incoming.headers,
        body,
      };
      const checked =
        body.length > BOUNDS.bodyBytes
          ? { refusal: 'The body is too large to check.' }
          : await authenticate(received);
      const queryAt = url.indexOf('?');
      const headers: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(incoming.headers)) {
        headers[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      const response = await handle({
        method: received.method,
        path: queryAt < 0 ? url : url.slice(0, queryAt),
        query: queryAt < 0 ? '' : url.slice(queryAt + 1),
        headers,
        body,
        principal: 'principal' in checked ? checked.principal : undefined,
        ...('refusal' in checked && { refusal: checked.refusal }),
      });
      outgoing.writeHead(response.status, response.headers);
      outgoing.end(response.body);
      // A body cut short by the size limit leaves the rest unread: close the connection after the answer.
      if (body.length > BOUNDS.bodyBytes) incoming.destroy();
    } catch (error) {
      outgoing.destroy(error as Error);
    }
  });
}
