/**
 * `/docs` for `npm start`: the API reference page and its OpenAPI document (docs/reference/build.ts), answered
 * without a key — as the deployed distribution answers them from the bucket — with the headers it sends there;
 * `/docs/` is a permanent redirect to `/docs`, as the distribution's docs-request.js answers it. Every other
 * request, and any method but GET and HEAD on these paths, goes to the proxy unchanged: a key is still
 * required everywhere else (`/` included: its 401 names `/docs`), and a POST to /docs is the API's 405.
 */
import { readFile } from 'node:fs/promises';
import { buildReference, REFERENCE, type ReferenceSite, referenceHeaders } from '../docs/reference/build.js';
import type { ProxyHandler, ProxyRequest, ProxyResponse } from '../proxy/core/types.js';
import { etagOfBytes, ifNoneMatchMatches } from '../proxy/http/etag.js';
import { errorMessage } from '../store/errors.js';

interface Served {
  body: Buffer;
  headers: Record<string, string>;
}

/** The two answers, read once. */
async function load(site: ReferenceSite): Promise<Map<string, Served>> {
  const served = new Map<string, Served>();
  for (const { file, path, contentType } of [REFERENCE.page, REFERENCE.openapi]) {
    const body = await readFile(`${site.directory}/${file}`);
    served.set(path, {
      body,
      headers: {
        ...referenceHeaders(site),
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

/** `/docs/`, a folder's address: the page's own is `/docs` (infra/docs-request.js answers the same). */
const TO_THE_PAGE: ProxyResponse = {
  status: 301,
  headers: {
    location: REFERENCE.page.path,
    'cache-control': 'public, max-age=300',
    'strict-transport-security': 'max-age=31536000; includeSubDomains',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  },
  body: undefined,
};

const NOT_BUILT: ProxyResponse = {
  status: 503,
  headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
  body: Buffer.from('The API reference could not be built; npm start printed why.\n'),
};

/**
 * `handle` with `/docs` and `/docs/openapi.json` answered from the reference. The page is built (or found in
 * its cache) from the moment this is called, and the first request for it waits for the build.
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
    if (request.method !== 'GET' && request.method !== 'HEAD') return handle(request);
    if (request.path === `${REFERENCE.page.path}/`)
      return { ...TO_THE_PAGE, headers: { ...TO_THE_PAGE.headers } };
    const own = request.path === REFERENCE.page.path || request.path === REFERENCE.openapi.path;
    if (!own) return handle(request);
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
