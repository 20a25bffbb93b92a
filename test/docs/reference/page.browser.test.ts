/**
 * The API reference as a person meets it: `npm start` serves /docs, headless Chromium (Debian's `chromium`,
 * driven by playwright-core) loads it under the page's own Content-Security-Policy, and finds for every
 * operation its curl sample, its TypeScript sample and a real example of its answer (the served document's,
 * produced by the proxy from the fixture: the response samples, and the exchange it unfolds), the manual's
 * prose (authentication, paging, caching, rate limits, every error code, the HTTP layer's refusals, content
 * coding, the decisions, versioning, the changelog) with every link inside the page leading somewhere — with no
 * script error, no CSP violation and no request leaving 127.0.0.1. It measures, at 1,400 px and at a phone's
 * 390 px, that no table cell breaks an identifier and no cell is squeezed to a few words a line. Screenshots are
 * kept in test/.artifacts/ (git-ignored): docs.png (the top), docs-operation.png (an operation with its
 * samples), docs-errors-phone.png (the errors table on a phone). Also over plain HTTP: /docs is the only path
 * answered without a key, and /docs/ sends there.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../proxy/http/errors.js';
import { type Started, startNpm, stop } from '../../helpers/npm-start.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(ROOT, 'test/.artifacts');
const KEY = `pk_live_${'D'.repeat(22)}`;
interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  'x-codeSamples': { lang: string; label: string; source: string }[];
  responses: Record<string, { content?: Record<string, { examples?: Record<string, Example> }> }>;
}
interface Example {
  summary: string;
  description: string;
  value: unknown;
}
/** The served document: the contract with the page's samples and examples (docs/reference/document.ts). */
let served: { paths: Record<string, Record<string, Operation>> };
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1400, height: 1000 };

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

beforeAll(async () => {
  served = (await (await fetch(`${started.origin}/docs/openapi.json`)).json()) as typeof served;
});

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
    // The contract with the page's additions (test/docs/reference/build.test.ts compares them in full).
    const contract = JSON.parse(readFileSync(join(ROOT, 'proxy/openapi.json'), 'utf8'));
    const body = (await document.json()) as typeof contract;
    expect(Object.keys(body.paths)).toEqual(Object.keys(contract.paths));
    expect(body.components.schemas).toEqual(contract.components.schemas);
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
    const folder = await fetch(`${started.origin}/docs/`, { redirect: 'manual' });
    expect(folder.status).toBe(301);
    expect(folder.headers.get('location')).toBe('/docs');
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

/** The strings and numbers of a JSON value, as a page shows them (depth first). */
function leaves(value: unknown): string[] {
  if (typeof value === 'string' || typeof value === 'number') return [String(value)];
  if (value && typeof value === 'object') return Object.values(value).flatMap(leaves);
  return [];
}

/**
 * Runs in the page: every cell of every table of the prose; each identifier in it (a code span, a snake_case
 * word or a Header-Name) must lie on one line, and a cell whose text wraps must be at least 120 px wide (about
 * 15 characters a line).
 */
function measureTables() {
  // biome-ignore lint/suspicious/noExplicitAny: the page's DOM; the tests compile without the DOM's types.
  const { document, NodeFilter } = globalThis as any;
  const broken: string[] = [];
  const squeezed: string[] = [];
  let cells = 0;
  let identifiers = 0;
  // biome-ignore lint/suspicious/noExplicitAny: a DOM Range.
  const lines = (range: any) =>
    new Set([...range.getClientRects()].map((rect: { top: number }) => Math.round(rect.top))).size;
  const rangeOf = (node: unknown, start?: number, end?: number) => {
    const range = document.createRange();
    if (start === undefined) range.selectNodeContents(node);
    else {
      range.setStart(node, start);
      range.setEnd(node, end);
    }
    return range;
  };
  for (const cell of document.querySelectorAll('.md-table-wrapper td, .md-table-wrapper th')) {
    cells++;
    const text = String(cell.textContent ?? '').trim();
    for (const code of cell.querySelectorAll('code')) {
      identifiers++;
      if (lines(rangeOf(code)) > 1) broken.push(String(code.textContent));
    }
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement?.closest('code')) continue;
      for (const match of String(node.textContent ?? '').matchAll(
        /[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+|[A-Z][a-z0-9]*(?:-[A-Z][A-Za-z0-9]*)+/g,
      )) {
        identifiers++;
        const at = match.index ?? 0;
        if (lines(rangeOf(node, at, at + match[0].length)) > 1) broken.push(match[0]);
      }
    }
    if (text !== '' && lines(rangeOf(cell)) > 1 && cell.getBoundingClientRect().width < 120) {
      squeezed.push(text.slice(0, 40));
    }
  }
  return { cells, identifiers, broken, squeezed };
}

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
    page = await browser.newPage({ viewport: DESKTOP });
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

  /** The operations of the served document, with their route on the page. */
  function operations() {
    return Object.entries(served.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        path,
        method,
        route: `${operation.tags[0]}/${operation.operationId.toLowerCase()}`,
        ...operation,
      })),
    );
  }

  /**
   * The text of `locator` once it shows every one of `texts` (Redoc renders after a click, and the machine may
   * be busy), or as it is after 10 s: the assertions that follow say what is missing.
   */
  async function textShowing(locator: Locator, texts: readonly string[]): Promise<string> {
    let text = '';
    for (const until = Date.now() + 10_000; Date.now() < until; ) {
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText, the text as rendered.
      text = await locator.innerText();
      if (texts.every((expected) => text.includes(expected))) break;
      await new Promise((done) => setTimeout(done, 100));
    }
    return text;
  }

  /** Show the request samples of `section` in `language` (Redoc keeps the choice for every operation). */
  async function showSample(
    section: Locator,
    language: string,
    expected: readonly string[] = [],
  ): Promise<string> {
    const button = section.getByRole('button', { name: /^(curl|TypeScript)$/ }).first();
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText, the text as rendered.
    if ((await button.innerText()).trim() !== language) {
      await button.click();
      // The menu may open past the viewport's edge, where a pointer cannot reach: the item's own click.
      await page
        .getByRole('menuitem', { name: language, exact: true })
        .filter({ visible: true })
        .dispatchEvent('click');
      await section.getByRole('button', { name: language, exact: true }).first().waitFor();
    }
    return textShowing(section, expected);
  }

  /** The lines of a TypeScript sample a reader looks for: the client, the call's output, what it prints. */
  const keyLines = (source: string) =>
    source
      .split('\n')
      .filter((line) => /console\.log|\/\/ |new Catalogue|fetch\(/.test(line))
      .map((line) => line.trim());

  it('shows for every operation its curl sample and a real example of its answer', async () => {
    const all = operations();
    expect(all).toHaveLength(18);

    for (const operation of all) {
      const { route, operationId, summary, method, path } = operation;
      const text = await visit(route, summary);
      const section = page.locator(`[data-section-id="/${route}"]`);
      const [curl, typescript] = operation['x-codeSamples'];
      expect([curl?.label, typescript?.label], operationId).toEqual(['curl', 'TypeScript']);

      expect(text, operationId).toContain(summary);
      expect(text, operationId).toContain(path);
      expect(text, operationId).toContain(method.toUpperCase());
      expect(text, operationId).toContain('bearerAuth');
      const curlLine = curl!.source.split('\n')[0]!;
      expect(await showSample(section, 'curl', [curlLine]), operationId).toContain(curlLine);

      // The real exchange of the samples' request: its status line and request id, unfolded.
      const requestId = /x-request-id: (req_[A-Za-z0-9_-]+)/.exec(operation.description)?.[1];
      expect(requestId, operationId).toBeDefined();
      const exchange = section.locator('details').first();
      if ((await exchange.getAttribute('open')) === null) await exchange.locator('summary').click();
      const exchangeText = await textShowing(exchange, [`x-request-id: ${requestId}`]);
      expect(exchangeText, operationId).toMatch(/HTTP\/1\.1 (200 OK|204 No Content)/);
      expect(exchangeText, operationId).toContain(`x-request-id: ${requestId}`);

      // The response samples: the first example of the first status with a body, as the proxy answered it.
      const withBody = Object.entries(operation.responses).find(
        ([, response]) => response.content?.['application/json']?.examples,
      );
      if (method === 'head') {
        expect(withBody, `${operationId}: HEAD answers have no body`).toBeUndefined();
        continue;
      }
      const [status, response] = withBody!;
      const responsePanel = section.locator('[data-testid="right-panel"]', { hasText: 'Response' }).last();
      // OPTIONS: its 204 has no body; the samples of its first status with one.
      await responsePanel.getByText(status, { exact: true }).first().click();
      const [first] = Object.values(response.content!['application/json']!.examples!);
      const samples = await textShowing(responsePanel, [first!.description.replaceAll('`', '')]);
      // Redoc names the examples in a list when there are several.
      if (Object.keys(response.content!['application/json']!.examples!).length > 1) {
        expect(samples, operationId).toContain(first!.summary);
      }
      expect(samples, operationId).toContain(first!.description.replaceAll('`', ''));
      for (const value of leaves(first!.value).slice(0, 3))
        expect(samples, `${operationId}: ${value}`).toContain(value);
    }
  }, 240_000);

  it('shows for every operation its TypeScript sample, with what it prints', async () => {
    for (const operation of operations()) {
      const { route, operationId, summary } = operation;
      await visit(route, summary);
      const section = page.locator(`[data-section-id="/${route}"]`);
      const lines = keyLines(operation['x-codeSamples'][1]!.source);

      const shown = await showSample(section, 'TypeScript', lines);

      for (const line of lines) expect(shown, `${operationId}: ${line}`).toContain(line);
    }
  }, 240_000);

  it("carries the manual's prose: authentication, paging, caching, rate limits, errors, the HTTP layer, coding, decisions, versions", async () => {
    const authentication = await visit('section/authentication', 'Authorization: Bearer');
    const paging = await visit('section/paging', 'next_cursor');
    const caching = await visit('section/caching-with-etags', 'If-None-Match');
    const limits = await visit('section/rate-limits', 'Retry-After');
    const errors = await visit('section/errors', 'request_id');
    const refusals = await visit('section/requests-the-http-layer-refuses', 'Transfer-Encoding');
    const coding = await visit('section/content-coding', 'Accept-Encoding');
    const decisions = await visit('section/decisions-the-specification-left-open', 'Detail body');
    const versions = await visit('section/compatibility', 'error.code');
    const removal = await visit('section/how-a-removal-is-announced', 'Sunset');
    const changes = await visit('section/changes-to-the-api', 'Newest first');

    expect(authentication).toMatch(/pk_live_/);
    expect(paging).toMatch(/cursor/);
    expect(caching).toMatch(/304/);
    expect(limits).toMatch(/X-RateLimit-Remaining-Minute/);
    expect(limits).toMatch(/A 429 carries them/);
    for (const code of ERROR_CODES) expect(errors, code).toContain(code);
    expect(errors).toMatch(/answered bytes that are not what was published/);
    for (const status of ['408', '413', '414', '431', '505']) expect(refusals, status).toContain(status);
    expect(coding).toMatch(/br/);
    expect(decisions).toMatch(/next_cursor: null/);
    expect(versions).toMatch(/closed list/);
    expect(removal).toMatch(/Deprecation/);
    expect(changes).toMatch(/info\.version/);
  });

  it('leads every link to a section of the page somewhere', async () => {
    await visit('section/authentication', 'Authorization: Bearer');
    const { anchors, ids } = await page.evaluate(() => {
      // biome-ignore lint/suspicious/noExplicitAny: the page's DOM; the tests compile without the DOM's types.
      const { document } = globalThis as any;
      // biome-ignore lint/suspicious/noExplicitAny: DOM elements.
      const all = (selector: string): any[] => [...document.querySelectorAll(selector)];
      return {
        anchors: all('a[href^="#/section/"]').map((a) => String(a.getAttribute('href')).slice(1)),
        ids: all('[data-section-id]').map((e) => String(e.dataset.sectionId)),
      };
    });

    expect(anchors.length).toBeGreaterThanOrEqual(5);
    for (const anchor of new Set(anchors)) expect(ids, anchor).toContain(anchor);
  });

  it.each([
    ['1,400 px', DESKTOP],
    ['a phone', PHONE],
  ])('breaks no identifier in a table cell and squeezes no cell, at %s', async (_, viewport) => {
    await page.setViewportSize(viewport);
    try {
      await visit('section/errors', 'request_id');
      const measured = await page.evaluate(measureTables);

      expect(measured.cells, 'table cells measured').toBeGreaterThan(100);
      expect(measured.identifiers, 'identifiers measured').toBeGreaterThan(50);
      expect(measured.broken, 'identifiers broken across lines').toEqual([]);
      expect(measured.squeezed, 'cells that wrap in under 120 px').toEqual([]);
      if (viewport === PHONE) {
        await visit('section/errors', 'request_id');
        mkdirSync(ARTIFACTS, { recursive: true });
        await page.screenshot({ path: join(ARTIFACTS, 'docs-errors-phone.png') });
      }
    } finally {
      await page.setViewportSize(DESKTOP);
    }
  });

  it('keeps a screenshot of an operation with its samples', async () => {
    await visit('modules/getmodulelist', 'List modules');
    const section = page.locator('[data-section-id="/modules/getmodulelist"]');
    await showSample(section, 'TypeScript');
    await section.getByText('Responses', { exact: true }).first().scrollIntoViewIfNeeded();
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'docs-operation.png') });
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
