/**
 * One table of what a visitor without a key meets at the addresses around the API, for both places that
 * answer them: `npm start` (local/docs.ts in front of the proxy, node:http) and the distribution (its
 * behaviours: `/docs`, `/docs/admin` and `/docs/*` from S3, the last through infra/docs-request.js; everything
 * else through infra/viewer-request.js to the proxy). The pages' addresses are `/docs` and `/docs/admin`; their
 * folder addresses are sent there; every other path still needs a key, and the 401 says where the reference
 * is. The admin page is documentation: the admin API is at no address of these (its own function URL).
 */
export type VisitorOutcome =
  /** The reference's own files answer (the page or its document). */
  | { kind: 'reference' }
  | { kind: 'redirect'; location: string }
  | { kind: 'error'; status: number; code: string };

export interface VisitorCase {
  name: string;
  method: 'GET' | 'HEAD';
  path: string;
  expected: VisitorOutcome;
}

const missingKey: VisitorOutcome = { kind: 'error', status: 401, code: 'missing_authorization' };

export const VISITOR_CASES: VisitorCase[] = [
  { name: 'the root', method: 'GET', path: '/', expected: missingKey },
  { name: 'the root, HEAD', method: 'HEAD', path: '/', expected: missingKey },
  { name: 'the page', method: 'GET', path: '/docs', expected: { kind: 'reference' } },
  { name: 'the page, HEAD', method: 'HEAD', path: '/docs', expected: { kind: 'reference' } },
  {
    name: "the page's folder address",
    method: 'GET',
    path: '/docs/',
    expected: { kind: 'redirect', location: '/docs' },
  },
  {
    name: "the page's folder address, HEAD",
    method: 'HEAD',
    path: '/docs/',
    expected: { kind: 'redirect', location: '/docs' },
  },
  {
    name: 'the OpenAPI document',
    method: 'GET',
    path: '/docs/openapi.json',
    expected: { kind: 'reference' },
  },
  { name: 'the admin page', method: 'GET', path: '/docs/admin', expected: { kind: 'reference' } },
  { name: 'the admin page, HEAD', method: 'HEAD', path: '/docs/admin', expected: { kind: 'reference' } },
  {
    name: "the admin page's folder address",
    method: 'GET',
    path: '/docs/admin/',
    expected: { kind: 'redirect', location: '/docs/admin' },
  },
  {
    name: "the admin page's OpenAPI document",
    method: 'GET',
    path: '/docs/admin/openapi.json',
    expected: { kind: 'reference' },
  },
  { name: 'the admin API on the public host', method: 'GET', path: '/v1/keys', expected: missingKey },
  { name: 'the API base', method: 'GET', path: '/v1', expected: missingKey },
  { name: 'an API path', method: 'GET', path: '/v1/modules', expected: missingKey },
  { name: 'the docs under /v1', method: 'GET', path: '/v1/docs', expected: missingKey },
  { name: 'a favicon', method: 'GET', path: '/favicon.ico', expected: missingKey },
  { name: 'a path that starts like the page', method: 'GET', path: '/docsx', expected: missingKey },
];

/** Where the 401 of a visitor without a key sends them. */
export const REFERENCE_HINT = '/docs';
