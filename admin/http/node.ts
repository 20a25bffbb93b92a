/**
 * The admin API on `node:http` (npm start): the body read (at most the API's limit), who signed it asked of
 * `authenticate` (local/admin.ts checks a SigV4 signature), then the pure handler. Every request gets an
 * answer in the API's envelope and an audit line, the malformed ones too: a header sent more than once reaches
 * the handler joined with ", " (a Host sent twice is refused there, as behind a function URL); a request Node's
 * parser cannot read is answered 400 by the handler with `Connection: close`; a body over the limit is
 * answered 413 with `Connection: close` — the rest of it is never read, so the connection cannot go on.
 */
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import type { Duplex } from 'node:stream';
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

type Handle = (request: AdminRequest) => Promise<AdminResponse>;

/** Read the body, stopping past `limit` bytes (then the answer is 413 and the rest is left unread). */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      request.off('data', take);
      request.pause();
      resolve(Buffer.concat(chunks, Math.min(size, limit + 1)));
    };
    const take = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size > limit) stop();
    };
    request.on('data', take);
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}

/** Every header by lower-case name; one sent more than once has its values joined with ", ". */
function joinedHeaders(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = Object.create(null);
  const raw = request.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    headers[name] = headers[name] === undefined ? raw[i + 1]! : `${headers[name]}, ${raw[i + 1]}`;
  }
  // HTTP/1.1 requires a Host: a missing one reaches the handler empty, and is refused there.
  if (request.httpVersion === '1.1') headers.host ??= '';
  return headers;
}

/** Who signed `received`, or why not; a check that throws is a refusal, never a dropped connection. */
async function signer(authenticate: Authenticate, received: ReceivedRequest) {
  try {
    return await authenticate(received);
  } catch {
    return {
      refusal: 'The request could not be checked: it is not signed as AWS Signature Version 4 signs.',
    };
  }
}

/** The answer to a request Node's parser refused: the handler's 400, written raw, and the socket closed. */
async function answerUnreadable(handle: Handle, error: NodeJS.ErrnoException, socket: Duplex) {
  const response = await handle({
    method: '-',
    path: '-',
    query: '',
    headers: {},
    body: Buffer.alloc(0),
    principal: undefined,
    unreadable: `could not be read as HTTP/1.1 (${error.code ?? 'parse error'})`,
  });
  const head = Object.entries({
    ...response.headers,
    'content-length': String(Buffer.byteLength(response.body)),
  })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  const reason = STATUS_CODES[response.status] ?? '';
  socket.end(`HTTP/1.1 ${response.status} ${reason}\r\n${head}connection: close\r\n\r\n${response.body}`);
}

/**
 * @example const server = createAdminServer(handle, authenticate); server.listen(0, '127.0.0.1');
 */
export function createAdminServer(handle: Handle, authenticate: Authenticate): Server {
  // No Host is answered by the handler, in the envelope, not by Node.
  const answer = async (incoming: IncomingMessage, outgoing: ServerResponse) => {
    const body = await readBody(incoming, BOUNDS.bodyBytes).catch(() => Buffer.alloc(0));
    const url = incoming.url ?? '/';
    const received: ReceivedRequest = {
      method: incoming.method ?? 'GET',
      url,
      headers: incoming.headers,
      body,
    };
    const tooLarge = body.length > BOUNDS.bodyBytes;
    const checked = tooLarge
      ? { refusal: 'The body is too large to check.' }
      : await signer(authenticate, received);
    const queryAt = url.indexOf('?');
    const response = await handle({
      method: received.method,
      path: queryAt < 0 ? url : url.slice(0, queryAt),
      query: queryAt < 0 ? '' : url.slice(queryAt + 1),
      headers: joinedHeaders(incoming),
      body,
      principal: 'principal' in checked ? checked.principal : undefined,
      ...('refusal' in checked && { refusal: checked.refusal }),
    });
    // A body cut short by the size limit leaves the rest unread: the connection ends with this answer.
    outgoing.writeHead(response.status, {
      ...response.headers,
      'content-length': String(Buffer.byteLength(response.body)),
      ...(tooLarge && { connection: 'close' }),
    });
    outgoing.end(response.body);
  };
  // The handler answers every request; only a fault of this adapter's own (never expected) drops the socket.
  const server = createServer({ requireHostHeader: false }, (incoming, outgoing) => {
    answer(incoming, outgoing).catch(() => outgoing.destroy());
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // A client gone (reset, or a socket no longer writable) has nobody to answer.
    if (error.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
    answerUnreadable(handle, error, socket).catch(() => socket.destroy());
  });
  return server;
}
