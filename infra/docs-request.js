// CloudFront Function (runtime cloudfront-js-2.0), viewer-request event of the `/docs/*` behaviour, the one that
// serves the reference's files from S3 (infra/reference.ts). Plain JavaScript with no imports or exports, as
// infra/viewer-request.js; the tests in test/infra and test/proof load this same file and call `handler`.
//
// Each page has one address: `/docs` (the API's) and `/docs/admin` (the key-administration API's). A visitor who
// types a page's folder address (`/docs/`, `/docs/admin/`, as many sites have them) is sent to the page with a
// permanent redirect instead of meeting S3's bare 403; an OPTIONS on a document (`/docs/openapi.json`,
// `/docs/admin/openapi.json`: a browser tool's CORS preflight) is answered here; every other request of the
// behaviour goes to S3 unchanged. `npm start` answers the same (local/docs.ts); one table
// of cases (test/proof/lost-visitor-cases.ts) runs through both, and test/infra/reference.test.ts checks that
// PAGES are the pages docs/reference/build.ts builds.

const PAGES = ['/docs', '/docs/admin'];

// The OpenAPI documents, open to other origins (docs/reference/build.ts, DOCUMENT_CORS): the behaviour's response
// headers policy adds CORS to their answers; their preflight (OPTIONS) is answered here, as S3 would refuse it.
const DOCUMENTS = PAGES.map((path) => `${path}/openapi.json`);
const PREFLIGHT_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-expose-headers': 'ETag',
  'access-control-allow-methods': 'GET, HEAD, OPTIONS',
  'access-control-allow-headers': '*',
  'access-control-max-age': '86400',
  'cache-control': 'public, max-age=300',
};

// The distribution's security headers (infra/edge.ts), on this function's own answer too.
const SECURITY_HEADERS = {
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};

// biome-ignore lint/correctness/noUnusedVariables: CloudFront calls `handler` by name.
function handler(event) {
  const request = event.request;
  if (request.method === 'OPTIONS' && DOCUMENTS.indexOf(request.uri) >= 0) {
    return { statusCode: 204, statusDescription: 'No Content', headers: withSecurity(PREFLIGHT_HEADERS) };
  }
  const page = PAGES.find((path) => request.uri === `${path}/`);
  if (page === undefined) return request;
  // Browsers may keep it a while; the edge caches no function answer.
  const headers = withSecurity({ location: page, 'cache-control': 'public, max-age=300' });
  return { statusCode: 301, statusDescription: 'Moved Permanently', headers: headers };
}

// `values` and the security headers, as CloudFront Functions write headers ({ name: { value } }).
function withSecurity(values) {
  const headers = {};
  [values, SECURITY_HEADERS].forEach((set) => {
    Object.keys(set).forEach((name) => {
      headers[name] = { value: set[name] };
    });
  });
  return headers;
}
