/**
 * The API reference as a person meets it: `npm start` serves /docs, headless Chromium (Debian's `chromium`,
 * driven by playwright-core) loads it under the page's own Content-Security-Policy, and finds every endpoint
 * (each operation of proxy/openapi.json), the authentication scheme, paging, caching, rate limits and every
 * error code — with no script error, no CSP violation and no request leaving 127.0.0.1. A screenshot is kept in
 * test/.artifacts/docs.png (git-ignored). Also over plain HTTP: /docs is the only path answered without a key.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../proxy/http/errors.js';
import { type Started, startNpm, stop } from '../../helpers/npm-start.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(ROOT, 'test/.artifacts');
const KEY = `pk_live_${'D'.repeat(22)}`;
const DOCUMENT = JSON.parse(readFileSync(join(ROOT, 'proxy/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, { operationId: string; tags: string[]; summary: string }>>;
};

const local = mkdtempSync(join(tmpdir(), 'cat-docs-'));
let npm: Started;
/** `http://127.0.0.1:<port>`, where npm start serves /docs beside /v1. */
const started = { origin: '' };

beforeAll(async () => {
  npm = await startNpm(local, { CATALOGUE_DEV_KEYS: `free:${KEY}` });
  started.origin = npm.base.replace(/\/v1$/, '');
  // Ready means the API is; the page may still be building (a few seconds on a fresh clone).
  for (let tries = 0; tries < 120; tries++) {
    if ((await fetch(`${started.origin}/docs`, { method: 'HEAD' })).status === 200) return;
    await new Promise((done) => setTimeout(done, 500));
  }
  throw new Error(`/docs never answered 200:\n${npm.output()}`);
}, 180_000);

afterAll(async () => {
  if (npm) await stop(npm);
  rmSync(local, { recursive: true, force: true });
});

describe('/docs over HTTP', () => {
  it('answers the page and the OpenAPI document without a key, with the security headers', async () => {
    const page = await fetch(`${started.origin}/docs`);
    const document = await fetch(`${started.origin}/docs/openapi.json`);

    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'none'; script-src 'sha256-/);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
    expect(await page.text()).toContain('<title>Catalogue Read API — reference</title>');
    expect(document.status).toBe(200);
    expect(await document.text()).toBe(readFileSync(join(ROOT, 'proxy/openapi.json'), 'utf8'));
  });

  it('revalidates: If-None-Match with its ETag is a 304; HEAD has no body', async () => {
    const first = await fetch(`${started.origin}/docs/openapi.json`);
    const etag = first.headers.get('etag')!;

    const again = await fetch(`${started.origin}/docs/openapi.json`, { headers: { 'if-none-match': etag } });
    const head = await fetch(`${started.origin}/docs`, { method: 'HEAD' });

    expect(again.status).toBe(304);
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('is the only path answered without a key: everything else is still 401, and other methods 405', async () => {
    const paths = [
      '/',
      '/favicon.ico',
      '/docs/',
      '/docs/index.html',
      '/docs/openapi.yaml',
      '/docsx',
      '/v1',
      '/v1/docs',
      '/v1/docs/openapi.json',
      '/v1/modules',
      '/v1/modules/101',
      '/v1/tags',
    ];
    for (const path of paths) {
      const answer = await fetch(`${started.origin}${path}`);
      expect(answer.status, path).toBe(401);
      expect(((await answer.json()) as { error: { code: string } }).error.code, path).toBe(
        'missing_authorization',
      );
    }
    const post = await fetch(`${started.origin}/docs`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    // And with the key, the API answers as before.
    const modules = await fetch(`${started.origin}/v1/modules?limit=1`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(modules.status).toBe(200);
  });
});

describe('/docs in Chromium', () => {
  let browser: Browser;
  let page: Page;
  const requests: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    });
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('request', (request) => requests.push(request.url()));
    page.on('pageerror', (error) => problems.push(`script error: ${error.message}`));
    // A CSP violation, a failed load or an uncaught error in a handler shows as a console error.
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console error: ${message.text().slice(0, 300)}`);
    });
    await page.goto(`${started.origin}/docs`, { waitUntil: 'networkidle' });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  /** The page at `#/<route>`, once `text` shows in the section of that route. */
  async function visit(route: string, text: string): Promise<string> {
    await page.evaluate((hash) => {
      // Runs in the page, where `location` is the page's.
      (globalThis as unknown as { location: { hash: string } }).location.hash = hash;
    }, `#/${route}`);
    const section = page.locator(`[data-section-id="/${route}"]`);
    await section.getByText(text, { exact: false }).first().waitFor({ timeout: 10_000 });
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText, the text as rendered (what a reader sees).
    return section.innerText();
  }

  it('shows every operation of the OpenAPI document: method, path and summary', async () => {
    const operations = Object.entries(DOCUMENT.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ path, method, ...operation })),
    );
    expect(operations).toHaveLength(18);

    for (const { path, method, operationId, tags, summary } of operations) {
      const text = await visit(`${tags[0]}/${operationId.toLowerCase()}`, path);
      expect(text, operationId).toContain(summary);
      expect(text, operationId).toContain(method.toUpperCase());
      expect(text, operationId).toContain('bearerAuth');
    }
  }, 120_000);

  it('explains authentication, paging, caching and rate limits, and lists every error code', async () => {
    const authentication = await visit('section/authentication', 'Authorization: Bearer');
    const paging = await visit('section/paging', 'next_cursor');
    const caching = await visit('section/caching', 'If-None-Match');
    const limits = await visit('section/rate-limits', 'Retry-After');
    const errors = await visit('section/errors', 'request_id');

    expect(authentication).toMatch(/pk_live_/);
    expect(paging).toMatch(/cursor/);
    expect(caching).toMatch(/304/);
    expect(limits).toMatch(/X-RateLimit-Remaining-Minute/);
    for (const code of ERROR_CODES) expect(errors, code).toContain(code);
  });

  it('ran with no script error or CSP violation, and asked nothing of any host but 127.0.0.1', async () => {
    await page.evaluate(() => {
      (globalThis as unknown as { location: { hash: string } }).location.hash = '';
    });
    await page.waitForLoadState('networkidle');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'docs.png') });

    expect(problems).toEqual([]);
    const foreign = requests.filter(
      (url) => !url.startsWith(`${started.origin}/`) && !url.startsWith('data:'),
    );
    expect(foreign).toEqual([]);
    expect(requests).toContain(`${started.origin}/docs`);
  });
});
