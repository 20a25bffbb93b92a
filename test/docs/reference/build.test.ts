/**
 * docs/reference/build.ts: the page is rendered from proxy/openapi.json into the cache once per input, holds
 * no remote script, stylesheet, font or image, carries the prose of the document, and its CSP allows exactly
 * its own inline scripts.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  buildReference,
  buildReferenceSync,
  contentSecurityPolicy,
  OPENAPI_DOCUMENT,
} from '../../../docs/reference/build.js';

const cache = mkdtempSync(join(tmpdir(), 'cat-reference-'));
afterAll(() => rmSync(cache, { recursive: true, force: true }));

describe('buildReference', () => {
  it('renders one self-contained page and copies the document beside it, once per input', async () => {
    const site = await buildReference({ cacheDirectory: cache });
    const html = readFileSync(site.page, 'utf8');
    const again = buildReferenceSync({ cacheDirectory: cache });

    // Not asserted (it changes with the document and the renderer): reported for the issue.
    console.info(
      `reference page: ${statSync(site.page).size} bytes, document ${statSync(site.openapi).size} bytes`,
    );
    expect(again).toEqual(site);
    expect(readFileSync(site.openapi, 'utf8')).toBe(readFileSync(OPENAPI_DOCUMENT, 'utf8'));
    expect(html).toContain('<title>Catalogue Read API — reference</title>');
    expect(html).toContain('<link rel="icon" href="data:," />');
    // Nothing in the markup the browser would load from elsewhere (what the scripts load at run time is
    // watched in a browser: test/docs/reference/page.browser.test.ts), and Redoc's CDN logo is gone.
    expect(html).not.toMatch(/<script[^>]*\ssrc=/);
    expect(html).not.toMatch(/<(link|img|source|iframe)[^>]*(href|src)=["']?(https?:)?\/\//);
    expect(html).not.toContain('cdn.redoc.ly/redoc/logo');
  }, 60_000);

  it('allows exactly the inline scripts of the page in its CSP', () => {
    const page = '<p>x</p><script>one()</script><script type="module">two()</script>';
    const hash = (code: string) => `'sha256-${createHash('sha256').update(code).digest('base64')}'`;

    expect(contentSecurityPolicy(page)).toBe(
      `default-src 'none'; script-src ${hash('one()')} ${hash('two()')}; style-src 'unsafe-inline'; ` +
        "img-src 'self' data:; font-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; " +
        "frame-ancestors 'none'",
    );
    expect(() => contentSecurityPolicy('<script src="https://cdn.example/x.js"></script>')).toThrow(
      /every script must be inline/,
    );
  });
});
