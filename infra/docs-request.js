// CloudFront Function (runtime cloudfront-js-2.0), viewer-request event of the `/docs/*` behaviour, the one that
// serves the reference's files from S3 (infra/reference.ts). Plain JavaScript with no imports or exports, as
// infra/viewer-request.js; the tests in test/infra and test/proof load this same file and call `handler`.
//
// Each page has one address: `/docs` (the API's) and `/docs/admin` (the key-administration API's). A visitor who
// types a page's folder address (`/docs/`, `/docs/admin/`, as many sites have them) is sent to the page with a
// permanent redirect instead of meeting S3's bare 403; every other path of the behaviour goes to S3 unchanged
// (`/docs/openapi.json`, `/docs/admin/openapi.json`). `npm start` answers the same (local/docs.ts); one table
// of cases (test/proof/lost-visitor-cases.ts) runs through both, and test/infra/reference.test.ts checks that
// PAGES are the pages docs/reference/build.ts builds.

const PAGES = ['/docs', '/docs/admin'];

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
  const page = PAGES.find((path) => request.uri === `${path}/`);
  if (page === undefined) return request;
  const headers = {
    location: { value: page },
    // Browsers may keep it a while; the edge caches no function answer.
    'cache-control': { value: 'public, max-age=300' },
  };
  Object.keys(SECURITY_HEADERS).forEach((name) => {
    headers[name] = { value: SECURITY_HEADERS[name] };
  });
  return { statusCode: 301, statusDescription: 'Moved Permanently', headers: headers };
}
