/**
 * local/docs.ts: the reference's pages and documents — /docs, /docs/openapi.json, /docs/admin,
 * /docs/admin/openapi.json — are answered from the reference without a key (GET, HEAD, 304), a page's folder
 * address is a redirect to the page; the documents are open to other origins (CORS, their preflight answered);
 * every other request, and other methods on those paths, reach the proxy unchanged; a failed build is a 503 on the reference's paths only. (The redirects' agreement with the edge's
 * is test/proof/lost-visitor.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildReference, documentCorsHeaders, type ReferenceSite } from '../../docs/reference/build.js';
import { withReference } from '../../local/docs.js';
import type { ProxyRequest, ProxyResponse } from '../../proxy/core/types.js';

const PROXIED: ProxyResponse = { status: 401, headers: { 'x-from': 'proxy' }, body: Buffer.from('{}') };

/** A proxy that records what reaches it. */
function proxy() {
  const seen: ProxyRequest[] = [];
  const handle = async (request: ProxyRequest) => {
    seen.push(request);
    return PROXIED;
  };
  return { seen, handle };
}

const request = (method: string, path: string, headers: Record<string, string> = {}): ProxyRequest => ({
  method,
  path,
  query: '',
  headers,
});

describe('withReference', () => {
  const site = buildReference();

  it('answers the pages and the documents itself, with the security headers, HEAD without a body', async () => {
    const { seen, handle } = proxy();
    const serve = withReference(handle, site);
    const built = await site;

    for (const page of [built.pages.api, built.pages.admin]) {
      const html = await serve(request('GET', page.path));
      const document = await serve(request('GET', page.openapiPath));
      const head = await serve(request('HEAD', page.path));

      expect(html.status, page.path).toBe(200);
      expect(html.body?.equals(readFileSync(page.page))).toBe(true);
      expect(html.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(html.headers['content-security-policy']).toBe(built.contentSecurityPolicy);
      expect(document.body?.toString()).toBe(readFileSync(page.openapi, 'utf8'));
      expect(document.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(head).toMatchObject({ status: 200, body: undefined });
      expect(head.headers['content-length']).toBe(html.headers['content-length']);
    }
    expect(seen).toEqual([]);
    // The first test waits for the build (seconds; longer on a busy machine).
  }, 120_000);

  it('revalidates with its ETag (weak or in a list too)', async () => {
    const serve = withReference(proxy().handle, site);
    const { etag } = (await serve(request('GET', '/docs'))).headers;

    const again = await serve(request('GET', '/docs', { 'if-none-match': `"other", W/${etag}` }));

    expect(again.status).toBe(304);
    expect(again.body).toBeUndefined();
    expect(again.headers.etag).toBe(etag);
  });

  it('hands everything else to the proxy: other paths, other methods, /v1 under any name', async () => {
    const { seen, handle } = proxy();
    const serve = withReference(handle, site);
    const others = [
      request('GET', '/v1/modules'),
      request('GET', '/'),
      request('GET', '/docs/index.html'),
      request('GET', '/docs//'),
      request('GET', '/docs/admin/index.html'),
      request('GET', '/docs/admin/v1/keys'),
      request('GET', '/docs/admins'),
      request('GET', '/v1/docs'),
      request('POST', '/docs'),
      request('POST', '/docs/'),
      request('POST', '/docs/admin'),
      request('OPTIONS', '/docs'),
      request('OPTIONS', '/docs/admin'),
      request('DELETE', '/docs/openapi.json'),
    ];

    for (const other of others) expect(await serve(other)).toBe(PROXIED);

    expect(seen).toEqual(others);
  });

  it('opens the documents, and only them, to other origins: CORS on their answers, their preflight answered', async () => {
    const { seen, handle } = proxy();
    const serve = withReference(handle, site);
    const built = await site;

    for (const page of [built.pages.api, built.pages.admin]) {
      const document = await serve(request('GET', page.openapiPath, { origin: 'https://editor.example' }));
      const { etag } = document.headers;
      const revalidated = await serve(request('GET', page.openapiPath, { 'if-none-match': etag! }));
      const preflight = await serve(
        request('OPTIONS', page.openapiPath, {
          origin: 'https://editor.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'x-tool',
        }),
      );
      const html = await serve(request('GET', page.path, { origin: 'https://editor.example' }));

      expect(document.headers).toMatchObject(documentCorsHeaders(false));
      expect(revalidated).toMatchObject({ status: 304, headers: documentCorsHeaders(false) });
      expect(preflight).toMatchObject({ status: 204, body: undefined, headers: documentCorsHeaders(true) });
      expect(preflight.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS');
      expect(preflight.headers['x-content-type-options']).toBe('nosniff');
      expect(html.headers['access-control-allow-origin']).toBeUndefined();
    }
    expect(seen).toEqual([]);
  });

  it("sends a visitor of a page's folder address to the page (GET and HEAD), asking nothing of the proxy", async () => {
    const { seen, handle } = proxy();
    const serve = withReference(handle, site);

    for (const page of ['/docs', '/docs/admin']) {
      for (const method of ['GET', 'HEAD']) {
        const answer = await serve(request(method, `${page}/`));

        expect(answer).toMatchObject({ status: 301, body: undefined });
        expect(answer.headers.location).toBe(page);
        expect(answer.headers['x-frame-options']).toBe('DENY');
      }
    }
    expect(seen).toEqual([]);
  });

  it('answers 503 on the reference when it could not be built, and the API still works', async () => {
    const { handle } = proxy();
    const failed = Promise.reject(new Error('no renderer')) as Promise<ReferenceSite>;
    const errors: unknown[] = [];
    const original = console.error;
    console.error = (...args: unknown[]) => errors.push(args.join(' '));
    try {
      const serve = withReference(handle, failed);

      expect((await serve(request('GET', '/docs'))).status).toBe(503);
      expect((await serve(request('GET', '/docs/admin/openapi.json'))).status).toBe(503);
      expect(await serve(request('GET', '/v1/tags'))).toBe(PROXIED);
      expect(errors).toEqual(['API reference: no renderer']);
    } finally {
      console.error = original;
    }
  });
});
