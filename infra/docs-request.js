// CloudFront Function (runtime cloudfront-js-2.0), viewer-request event of the `/docs/*` behaviour, the one that
// serves the reference's files from S3 (infra/reference.ts). Plain JavaScript with no imports or exports, as
// infra/viewer-request.js; the tests in test/infra and test/proof load this same file and call `handler`.
//
// The page has one address, `/docs`. A visitor who types `/docs/` (a folder's address, as many sites have it)
// is sent there with a permanent redirect instead of meeting S3's bare 403; every other path of the behaviour
// goes to S3 unchanged (`/docs/openapi.json`). `npm start` answers the same (local/docs.ts); one table of
// cases (test/proof/lost-visitor-cases.ts) runs through both.

const PAGE = '/docs';

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
  if (request.uri !== `${PAGE}/`) return request;
  const headers = {
    location: { value: PAGE },
    // Browsers may keep it a while; the edge caches no function answer.
    'cache-control': { value: 'public, max-age=300' },
  };
  Object.keys(SECURITY_HEADERS).forEach((name) => {
    headers[name] = { value: SECURITY_HEADERS[name] };
  });
  return { statusCode: 301, statusDescription: 'Moved Permanently', headers: headers };
}
