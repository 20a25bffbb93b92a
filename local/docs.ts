/**
 * `/docs` for `npm start`: the reference pages and their OpenAPI documents (docs/reference/build.ts) — the
 * API's at `/docs` and `/docs/openapi.json`, the key-administration API's at `/docs/admin` and
 * `/docs/admin/openapi.json` — answered without a key, as the deployed distribution answers them from the
 * bucket, with the headers it sends there; a page's folder address (`/docs/`, `/docs/admin/`) is a permanent
 * redirect to the page, as the distribution's docs-request.js answers it. The documents are open to other
 * origins (CORS, `DOCUMENT_CORS`), their preflight (OPTIONS) answered here, so browser tools load them by URL.
 * Every other request, and any other method on these paths, goes to the proxy unchanged: a key is still required
 * everywhere else (`/` included: its 401 names `/docs`), and a POST to /docs is the API's 405. The admin page is
 * documentation only: the admin API itself listens on its own port, behind its SigV4 check (local/admin.ts).
 */
import { readFile } from 'node:fs/promises';
import {
  buildReference,
  DOCUMENT_PATHS,
  documentCorsHeaders,
  PAGE_PATHS,
  type ReferenceSite,
  referenceHeaders,
  SERVED_PATHS,
  servedFiles,
} from '../docs/reference/build.js';
import type { ProxyHandler, ProxyRequest, ProxyResponse } from '../proxy/core/types.js';
import { etagOfBytes, ifNoneMatchMatches } from '../proxy/http/etag.js';
import { errorMessage } from '../store/errors.js';

interface Served {
  body: Buffer;
  headers: Record<string, string>;
}

/** The answers by path, read once. */
async function load(site: ReferenceSite): Promise<Map<string, Served>> {
  const served = new Map<string, Served>();
  for (const { file, path, contentType } of servedFiles(site)) {
    const body = await readFile(file);
    served.set(path, {
      body,
      headers: {
        ...referenceHeaders(site),
        ...(DOCUMENTS.has(path) ? documentCorsHeaders(false) : {}),
        'content-type': contentType,
        'content-length': String(body.byteLength),
        // Revalidated on every load: a restart after a change of the document shows the new page.
        'cache-control': 'no-cache',
        etag: etagOfBytes(body),
      },
    });
  }
  return served;
}

/** The security headers of an answer with no content (a redirect, a preflight), as docs-request.js sends them. */
const BARE_ANSWER_HEADERS = {
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};

/** A page's folder address (`/docs/`, `/docs/admin/`) sends to the page (infra/docs-request.js answers the same). */
const toThePage = (path: string): ProxyResponse => ({
  status: 301,
  headers: { location: path, 'cache-control': 'public, max-age=300', ...BARE_ANSWER_HEADERS },
  body: undefined,
});

/**
 * A document's answer to OPTIONS (a browser's preflight, or any OPTIONS: the same answer): what another origin
 * may send, no body, no key needed (infra/docs-request.js answers the same).
 */
const preflight = (): ProxyResponse => ({
  status: 204,
  headers: { ...documentCorsHeaders(true), 'cache-control': 'public, max-age=300', ...BARE_ANSWER_HEADERS },
  body: undefined,
});

const OWN_PATHS: ReadonlySet<string> = new Set(SERVED_PATHS);
const DOCUMENTS: ReadonlySet<string> = new Set(DOCUMENT_PATHS);

const NOT_BUILT: ProxyResponse = {
  status: 503,
  headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
  body: Buffer.from('The reference pages could not be built; npm start printed why.\n'),
};

/**
 * `handle` with the reference's pages and documents answered from the reference. The pages are built (or found
 * in their cache) from the moment this is called, and the first request for one waits for the build.
 * @example createHttpServer(withReference(createProxy(config)))
 */
export function withReference(
  handle: ProxyHandler,
  site: Promise<ReferenceSite> = buildReference(),
): ProxyHandler {
  const answers = site.then(load).catch((error: unknown) => {
    console.error(`API reference: ${errorMessage(error)}`);
    return undefined;
  });
  return async (request: ProxyRequest) => {
    if (request.method === 'OPTIONS' && DOCUMENTS.has(request.path)) return preflight();
    if (request.method !== 'GET' && request.method !== 'HEAD') return handle(request);
    const folderOf = PAGE_PATHS.find((path) => request.path === `${path}/`);
    if (folderOf) return toThePage(folderOf);
    if (!OWN_PATHS.has(request.path)) return handle(request);
    const served = (await answers)?.get(request.path);
    if (!served) return NOT_BUILT;
    if (ifNoneMatchMatches(request.headers['if-none-match'], served.headers.etag!)) {
      const { 'content-length': _length, 'content-type': _type, ...headers } = served.headers;
      return { status: 304, headers, body: undefined };
    }
    return {
      status: 200,
      headers: { ...served.headers },
      body: request.method === 'HEAD' ? undefined : served.body,
    };
  };
}
