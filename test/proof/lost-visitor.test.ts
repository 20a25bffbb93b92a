/**
 * A lost visitor meets the same answers at both doors: every case of test/proof/lost-visitor-cases.ts through
 * `npm start`'s server (local/docs.ts in front of the real proxy core, node:http, real requests) and through
 * the distribution's routing (its `/docs`, `/docs/admin` and `/docs/*` behaviours, infra/docs-request.js, and
 * infra/viewer-request.js for everything else). A page's folder address is a redirect to the page on both;
 * every other path without a key is the 401 envelope, which names the reference.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contentSecurityPolicy, PAGE_PATHS, type ReferenceSite } from '../../docs/reference/build.js';
import { withReference } from '../../local/docs.js';
import { createHttpServer } from '../../proxy/adapters/http.js';
import { createHandler } from '../../proxy/core/handler.js';
import { MemoryKeyStore } from '../../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../../proxy/quota/memory.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';
import { closeServer, listenOnLoopback } from '../helpers/loopback.js';
import { testConfig } from '../helpers/proxy.js';
import { loadDocsRequest, loadViewerRequest } from '../infra/viewer-request-code.js';
import { REFERENCE_HINT, VISITOR_CASES, type VisitorOutcome } from './lost-visitor-cases.js';

const viewerRequest = loadViewerRequest();
const docsRequest = loadDocsRequest();

interface Seen {
  outcome: VisitorOutcome;
  /** The error's message, when the answer has a body. */
  message?: string;
  headers: Record<string, string>;
}

/** The distribution: which behaviour a path takes, and what its function (if any) answers. */
function atTheEdge(method: string, path: string): Seen {
  const event = {
    version: '1.0',
    context: { eventType: 'viewer-request', requestId: 'EdgeRequestId0123==' },
    viewer: { ip: '198.51.100.7' },
    request: { method, uri: path, querystring: {}, headers: {}, cookies: {} },
  };
  // Behaviours in CloudFront's order: the pages' (no function), `/docs/*` (docs-request.js), the default.
  if (PAGE_PATHS.includes(path)) return { outcome: { kind: 'reference' }, headers: {} };
  const fn = path.startsWith('/docs/') ? docsRequest : viewerRequest;
  const result = fn(event) as {
    statusCode?: number;
    headers: Record<string, { value: string }>;
    body?: { data: string };
  };
  const headers = Object.fromEntries(
    Object.entries(result.headers).map(([name, { value }]) => [name, value]),
  );
  if (result.statusCode === undefined) {
    // Forwarded: to S3 (the reference's files) or, for the API's behaviour, to the proxy.
    return {
      outcome: path.startsWith('/docs/')
        ? { kind: 'reference' }
        : { kind: 'error', status: 0, code: 'forwarded' },
      headers,
    };
  }
  if (result.statusCode === 301) {
    return { outcome: { kind: 'redirect', location: headers.location ?? '' }, headers };
  }
  const { code, message } = (
    JSON.parse(result.body?.data ?? '{}') as { error: { code: string; message: string } }
  ).error;
  return { outcome: { kind: 'error', status: result.statusCode, code }, message, headers };
}

const scratch = mkdtempSync(join(tmpdir(), 'cat-visitor-'));
let server: Server;
let origin: string;

beforeAll(async () => {
  // Stand-ins for the built pages: what is served is local/docs.ts's business, not the renderer's.
  const html = '<!DOCTYPE html><title>reference</title><script>void 0</script>';
  const page = (name: string, path: string) => {
    writeFileSync(join(scratch, `${name}.html`), html);
    writeFileSync(join(scratch, `${name}.json`), '{}');
    return {
      path,
      openapiPath: `${path}/openapi.json`,
      directory: scratch,
      page: join(scratch, `${name}.html`),
      openapi: join(scratch, `${name}.json`),
    };
  };
  const site: ReferenceSite = {
    pages: { api: page('api', '/docs'), admin: page('admin', '/docs/admin') },
    contentSecurityPolicy: contentSecurityPolicy(html),
  };
  const proxy = createHandler({
    objects: new MemoryObjectStore(),
    keys: new MemoryKeyStore(),
    quota: new MemoryQuotaMeter(),
    config: testConfig(),
    now: () => new Date(),
    requestId: () => 'req_visitor0000000000',
    log: () => {},
  });
  server = createHttpServer(withReference(proxy, Promise.resolve(site)), { log: () => {} });
  origin = `http://127.0.0.1:${await listenOnLoopback(server)}`;
});

afterAll(async () => {
  await closeServer(server);
  rmSync(scratch, { recursive: true, force: true });
});

/** npm start's server, asked over HTTP as a browser or curl would (redirects not followed). */
async function atHome(method: string, path: string): Promise<Seen> {
  const answer = await fetch(`${origin}${path}`, { method, redirect: 'manual' });
  const headers = Object.fromEntries(answer.headers);
  const text = await answer.text();
  if (answer.status === 301)
    return { outcome: { kind: 'redirect', location: headers.location ?? '' }, headers };
  if (answer.status === 200) return { outcome: { kind: 'reference' }, headers };
  if (method === 'HEAD') {
    // No body to read the code from: the status and the authentication challenge say which 401 it is.
    return { outcome: { kind: 'error', status: answer.status, code: 'missing_authorization' }, headers };
  }
  const { code, message } = (JSON.parse(text) as { error: { code: string; message: string } }).error;
  return { outcome: { kind: 'error', status: answer.status, code }, message, headers };
}

describe.each(VISITOR_CASES)('$method $path ($name)', ({ method, path, expected }) => {
  it('npm start answers as the table says', async () => {
    const seen = await atHome(method, path);

    expect(seen.outcome).toEqual(expected);
    if (expected.kind === 'error' && method === 'GET') expect(seen.message).toContain(REFERENCE_HINT);
    if (expected.kind === 'error') expect(seen.headers['www-authenticate']).toBe('Bearer realm="catalogue"');
  });

  it('the distribution answers the same', () => {
    const seen = atTheEdge(method, path);

    expect(seen.outcome).toEqual(expected);
    if (expected.kind === 'error') expect(seen.message).toContain(REFERENCE_HINT);
  });
});

describe.each(['/docs', '/docs/admin'])('the redirect of %s/', (page) => {
  it('carries the same headers at both doors: Location, Cache-Control and the security headers', async () => {
    const home = await atHome('GET', `${page}/`);
    const edge = atTheEdge('GET', `${page}/`);
    const names = [
      'location',
      'cache-control',
      'strict-transport-security',
      'x-content-type-options',
      'x-frame-options',
      'referrer-policy',
      'content-security-policy',
    ];

    const pick = (headers: Record<string, string>) =>
      Object.fromEntries(names.map((name) => [name, headers[name]]));
    expect(pick(home.headers)).toEqual(pick(edge.headers));
    expect(edge.headers.location).toBe(page);
  });
});

describe('the /docs/* function', () => {
  it('leaves every other path of /docs/* to S3, untouched', () => {
    for (const path of [
      '/docs/openapi.json',
      '/docs/admin/openapi.json',
      '/docs/index.html',
      '/docs//',
      '/docs/admin//',
    ]) {
      const request = { method: 'GET', uri: path, querystring: {}, headers: {}, cookies: {} };

      expect(docsRequest({ version: '1.0', context: {}, viewer: {}, request })).toBe(request);
    }
  });
});
