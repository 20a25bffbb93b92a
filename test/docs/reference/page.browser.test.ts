/**
 * The reference pages as a person meets them: `npm start` serves /docs (the API's) and /docs/admin (the key
 * administration API's), headless Chromium (Debian's `chromium`, driven by playwright-core) loads each under its
 * Content-Security-Policy, and finds for every operation its samples (curl and TypeScript; for the admin API
 * Python too) and a real example of its answer (the served document's: the response samples, and the exchange
 * it unfolds); on the API's page the manual's prose (authentication, paging, caching, rate limits, every error
 * code, the HTTP layer's refusals, content coding, the decisions, versioning, the changelog) with every link
 * inside the page leading somewhere, and on both what the examples' values are and which differ on a
 * deployment — with no script error, no CSP violation and no request leaving 127.0.0.1.
 *
 * At a desktop's 1,280 px and a phone's 390 px it measures, on every operation and the prose: that no control
 * or positioned element covers a word of code, nor anything fixed to the viewport (the phone's menu button) a
 * word of any text (bounding boxes: test/docs/reference/layout.ts), that no code block cuts a line (its content
 * wider than the block), that no heading
 * breaks inside a word, and that tables read — no identifier broken in a cell, no cell squeezed, nothing off
 * screen. Screenshots are kept in test/.artifacts/ (git-ignored), at both widths: docs-<width>.png (the top),
 * docs-operation-<width>.png (an operation with its samples), docs-errors-<width>.png (the errors table),
 * docs-admin-<width>.png and docs-admin-operation-<width>.png. Also over plain HTTP: the pages and their
 * OpenAPI documents are the only paths answered without a key, a page's folder address sends there, and the
 * admin API is not behind any of them. And from a page of another origin, as a browser tool loads them: both
 * documents fetched by URL (one of them after a CORS preflight), while the API itself stays unreadable there.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../proxy/http/errors.js';
import { closeServer, listenOnLoopback } from '../../helpers/loopback.js';
import { publishedFixtureIn, type Started, startNpm, stop } from '../../helpers/npm-start.js';
import { brokenHeadings, coveredCode, cutCode, measureTables } from './layout.js';
import { launchChromium, operationsOf, Reader, type ServedDocument } from './reader.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const KEY = `pk_live_${'D'.repeat(22)}`;
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const WIDTHS = [
  ['1280', DESKTOP],
  ['390', PHONE],
] as const;

const local = mkdtempSync(join(tmpdir(), 'cat-docs-'));
let npm: Started;
/** `http://127.0.0.1:<port>`, where npm start serves the reference beside /v1. */
const started = { origin: '' };
/** The served documents: each contract with its page's samples and examples. */
const served: { api: ServedDocument; admin: ServedDocument } = { api: { paths: {} }, admin: { paths: {} } };
let browser: Browser;

beforeAll(async () => {
  npm = await startNpm(await publishedFixtureIn(local), { CATALOGUE_DEV_KEYS: `free:${KEY}` });
  started.origin = npm.base.replace(/\/v1$/, '');
  // Ready means the API is; the pages may still be building (seconds on a fresh clone).
  for (let tries = 0; tries < 240; tries++) {
    const heads = await Promise.all(
      ['/docs', '/docs/admin'].map((path) => fetch(`${started.origin}${path}`, { method: 'HEAD' })),
    );
    if (heads.every((head) => head.status === 200)) break;
    if (tries === 239) throw new Error(`the reference never answered 200:\n${npm.output()}`);
    await new Promise((done) => setTimeout(done, 500));
  }
  served.api = (await (await fetch(`${started.origin}/docs/openapi.json`)).json()) as ServedDocument;
  served.admin = (await (await fetch(`${started.origin}/docs/admin/openapi.json`)).json()) as ServedDocument;
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  if (npm) await stop(npm);
  rmSync(local, { recursive: true, force: true });
});

describe('the reference over HTTP', () => {
  it.each([
    ['/docs', 'proxy/openapi.json', 'Catalogue Read API — reference'],
    ['/docs/admin', 'admin/openapi.json', 'Catalogue Read API — key administration — reference'],
  ])(
    'answers %s and its OpenAPI document without a key, with the security headers',
    async (path, contract, title) => {
      const page = await fetch(`${started.origin}${path}`);
      const document = await fetch(`${started.origin}${path}/openapi.json`);

      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'none'; script-src 'sha256-/);
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('x-content-type-options')).toBe('nosniff');
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      expect(page.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
      expect(await page.text()).toContain(`<title>${title}</title>`);
      expect(document.status).toBe(200);
      expect(document.headers.get('content-type')).toBe('application/json; charset=utf-8');
      // It parses, and is the contract with the page's additions (test/docs/reference/build.test.ts compares them in full).
      const original = JSON.parse(readFileSync(join(ROOT, contract), 'utf8'));
      const body = (await document.json()) as typeof original;
      expect(Object.keys(body.paths)).toEqual(Object.keys(original.paths));
      expect(body.components.schemas).toEqual(original.components.schemas);
    },
  );

  it('revalidates: If-None-Match with its ETag is a 304; HEAD has no body', async () => {
    for (const path of ['/docs/openapi.json', '/docs/admin/openapi.json']) {
      const first = await fetch(`${started.origin}${path}`);
      const etag = first.headers.get('etag')!;

      const again = await fetch(`${started.origin}${path}`, { headers: { 'if-none-match': etag } });

      expect(again.status, path).toBe(304);
    }
    const head = await fetch(`${started.origin}/docs/admin`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('are the only paths answered without a key: everything else is still 401, and other methods 405', async () => {
    const paths = [
      '/',
      '/favicon.ico',
      '/docs/index.html',
      '/docs/openapi.yaml',
      '/docsx',
      '/docs/admins',
      '/docs/admin/index.html',
      // The admin API is at its own address (its own port with npm start, its function URL on AWS), never here.
      '/docs/admin/v1/keys',
      '/v1/keys',
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
    for (const page of ['/docs', '/docs/admin']) {
      const folder = await fetch(`${started.origin}${page}/`, { redirect: 'manual' });
      expect(folder.status).toBe(301);
      expect(folder.headers.get('location')).toBe(page);
      const post = await fetch(`${started.origin}${page}`, { method: 'POST' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    }
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

/** The lines of a TypeScript sample a reader looks for: the client, the call's output, what it prints. */
const keyLines = (source: string) =>
  source
    .split('\n')
    .filter((line) => /console\.log|\/\/ |new Catalogue|new SignatureV4|fetch\(/.test(line))
    .map((line) => line.trim());

/**
 * An operation as a reader checks it: its summary, path and method, its first sample, the exchange of the
 * samples' request (unfolded, with its request id), and the first example of the first status with a body.
 */
async function expectOperation(reader: Reader, operation: ReturnType<typeof operationsOf>[number]) {
  const { route, operationId, summary, method, path } = operation;
  const text = await reader.visit(route, summary);
  const section = reader.section(route);
  const [first] = operation['x-codeSamples'];

  expect(text, operationId).toContain(summary);
  expect(text, operationId).toContain(path);
  expect(text, operationId).toContain(method.toUpperCase());
  const firstLine = first!.source.split('\n')[0]!;
  expect(await reader.showSample(section, first!.label, [firstLine]), operationId).toContain(firstLine);

  // The real exchange of the samples' request: its status line and request id, unfolded.
  const requestId = /x-request-id: (req_[A-Za-z0-9_-]+)/.exec(operation.description)?.[1];
  expect(requestId, operationId).toBeDefined();
  const exchange = section.locator('details').first();
  if ((await exchange.getAttribute('open')) === null) await exchange.locator('summary').click();
  const exchangeText = await reader.textShowing(exchange, [`x-request-id: ${requestId}`]);
  expect(exchangeText, operationId).toMatch(/HTTP\/1\.1 (200 OK|201 Created|204 No Content)/);
  expect(exchangeText, operationId).toContain(`x-request-id: ${requestId}`);

  // The response samples: the first example of the first status with a body, as the API answered it.
  const withBody = Object.entries(operation.responses).find(
    ([, response]) => response.content?.['application/json']?.examples,
  );
  if (method === 'head') {
    expect(withBody, `${operationId}: HEAD answers have no body`).toBeUndefined();
    return;
  }
  const [status, response] = withBody!;
  const responsePanel = section.locator('[data-testid="right-panel"]', { hasText: 'Response' }).last();
  // OPTIONS: its 204 has no body; the samples of its first status with one.
  await responsePanel.getByText(status, { exact: true }).first().click();
  const [example] = Object.values(response.content!['application/json']!.examples!);
  const samples = await reader.textShowing(responsePanel, [example!.description.replaceAll('`', '')]);
  // Redoc names the examples in a list when there are several.
  if (Object.keys(response.content!['application/json']!.examples!).length > 1) {
    expect(samples, operationId).toContain(example!.summary);
  }
  expect(samples, operationId).toContain(example!.description.replaceAll('`', ''));
  for (const value of leaves(example!.value).slice(0, 3)) {
    expect(samples, `${operationId}: ${value}`).toContain(value);
  }
}

/**
 * At `viewport`, with the whole page laid out: the page's top (with the prose) and every operation, each with
 * its exchanges unfolded — what covers code and which headings break inside a word, over all of them (Redoc
 * keeps only the sections near the one shown: each is measured while it is shown).
 */
async function measureLayout(
  reader: Reader,
  document: ServedDocument,
  viewport: { width: number; height: number },
) {
  const out = {
    blocks: 0,
    textWords: 0,
    headings: 0,
    covered: new Set<string>(),
    cut: new Set<string>(),
    broken: new Set<string>(),
    offscreen: new Set<string>(),
  };
  await reader.page.setViewportSize(viewport);
  await reader.layOutEverything();
  const measure = async () => {
    await reader.unfoldExchanges();
    await reader.settled();
    const code = await reader.page.evaluate(coveredCode);
    const cut = await reader.page.evaluate(cutCode);
    const headings = await reader.page.evaluate(brokenHeadings);
    out.blocks += code.blocks;
    out.textWords += code.textWords;
    out.headings += headings.headings;
    for (const { element, code: word } of code.covered) out.covered.add(`${element} covers ${word}`);
    for (const block of cut.cut) out.cut.add(block);
    for (const word of headings.broken) out.broken.add(word);
    for (const word of headings.offscreen) out.offscreen.add(word);
  };
  await measure();
  for (const operation of operationsOf(document)) {
    await reader.visit(operation.route, operation.summary);
    await measure();
  }
  return {
    ...out,
    covered: [...out.covered],
    cut: [...out.cut],
    broken: [...out.broken],
    offscreen: [...out.offscreen],
  };
}

/** The page ran with no script error or CSP violation, and asked nothing of any host but 127.0.0.1. */
async function expectCleanRun(reader: Reader, path: string): Promise<void> {
  await reader.page.waitForLoadState('networkidle');

  expect(reader.problems).toEqual([]);
  const foreign = reader.requests.filter(
    (url) => !url.startsWith(`${started.origin}/`) && !url.startsWith('data:'),
  );
  expect(foreign).toEqual([]);
  expect(reader.requests).toContain(`${started.origin}${path}`);
}

/** Scroll to the first code block of a section (its request sample) and keep a screenshot. */
async function screenshotOperation(reader: Reader, route: string, name: string): Promise<void> {
  await reader
    .section(route)
    .locator('[data-testid="source-code"]')
    .first()
    .evaluate((element) =>
      (element as unknown as { scrollIntoView(options: object): void }).scrollIntoView({ block: 'center' }),
    );
  await reader.settled();
  await reader.screenshot(name);
}

/** Back to the top of the page, and keep a screenshot. */
async function screenshotTop(reader: Reader, name: string): Promise<void> {
  await reader.page.evaluate(() => {
    (globalThis as unknown as { location: { hash: string } }).location.hash = '';
    (globalThis as unknown as { scrollTo(x: number, y: number): void }).scrollTo(0, 0);
  });
  await reader.settled();
  await reader.screenshot(name);
}

describe('/docs in Chromium', () => {
  let reader: Reader;

  beforeAll(async () => {
    reader = await Reader.open(browser, `${started.origin}/docs`, DESKTOP);
  }, 60_000);

  it('shows for every operation its curl sample and a real example of its answer', async () => {
    const all = operationsOf(served.api);
    expect(all).toHaveLength(18);

    for (const operation of all) {
      expect(
        operation['x-codeSamples'].map((sample) => sample.label),
        operation.operationId,
      ).toEqual(['curl', 'TypeScript']);
      await expectOperation(reader, operation);
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText, the text as rendered.
      expect(await reader.section(operation.route).innerText()).toContain('bearerAuth');
    }
  }, 240_000);

  it('shows for every operation its TypeScript sample, with what it prints', async () => {
    for (const operation of operationsOf(served.api)) {
      const { route, operationId, summary } = operation;
      await reader.visit(route, summary);
      const lines = keyLines(operation['x-codeSamples'][1]!.source);

      const shown = await reader.showSample(reader.section(route), 'TypeScript', lines);

      for (const line of lines) expect(shown, `${operationId}: ${line}`).toContain(line);
    }
  }, 240_000);

  it("carries the manual's prose: authentication, paging, caching, rate limits, errors, the HTTP layer, coding, decisions, versions", async () => {
    const authentication = await reader.visit('section/authentication', 'Authorization: Bearer');
    const paging = await reader.visit('section/paging', 'next_cursor');
    const caching = await reader.visit('section/caching-with-etags', 'If-None-Match');
    const limits = await reader.visit('section/rate-limits', 'Retry-After');
    const errors = await reader.visit('section/errors', 'request_id');
    const refusals = await reader.visit('section/requests-the-http-layer-refuses', 'Transfer-Encoding');
    const coding = await reader.visit('section/content-coding', 'Accept-Encoding');
    const decisions = await reader.visit('section/decisions-the-specification-left-open', 'Detail body');
    const versions = await reader.visit('section/compatibility', 'error.code');
    const removal = await reader.visit('section/how-a-removal-is-announced', 'Sunset');
    const changes = await reader.visit('section/changes-to-the-api', 'Newest first');

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

  it("says which of the examples' values differ on a deployment: request ids, cursors, ETags", async () => {
    const about = await reader.visit('section/about-the-examples', 'What differs on your deployment');

    expect(about).toMatch(/Request id[^\n]*X-Request-Id[^\n]*new for every request/);
    expect(about).toMatch(/Cursor[^\n]*your deployment's secret/);
    expect(about).toMatch(/ETag[^\n]*your catalogue's answers/);
    expect(about).toContain('/docs/admin');
  });

  it('leads every link to a section of the page somewhere', async () => {
    await reader.visit('section/authentication', 'Authorization: Bearer');
    const { anchors, ids } = await reader.page.evaluate(() => {
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

  it.each(WIDTHS)(
    'lets tables read at %s px: no identifier broken in a cell, no cell squeezed, nothing off screen',
    async (width, viewport) => {
      await reader.page.setViewportSize(viewport);
      try {
        await reader.visit('section/errors', 'request_id');
        await reader.settled();
        const measured = await reader.page.evaluate(measureTables);

        expect(measured.cells, 'table cells measured').toBeGreaterThan(100);
        expect(measured.identifiers, 'identifiers measured').toBeGreaterThan(50);
        expect(measured.broken, 'identifiers broken across lines').toEqual([]);
        expect(measured.squeezed, 'cells that wrap in under 120 px').toEqual([]);
        expect(measured.offscreen, 'cells with text off screen').toEqual([]);
        await reader.screenshot(`docs-errors-${width}.png`);
      } finally {
        await reader.page.setViewportSize(DESKTOP);
      }
    },
  );

  it.each(WIDTHS)(
    'lets nothing cover code (nor float over text), cuts no line of code, breaks no heading in a word, at %s px',
    async (width, viewport) => {
      try {
        const measured = await measureLayout(reader, served.api, viewport);

        expect(measured.blocks, 'code blocks measured').toBeGreaterThan(50);
        expect(measured.textWords, 'words of text measured against what floats').toBeGreaterThan(1000);
        expect(measured.headings, 'headings measured').toBeGreaterThan(100);
        expect(measured.covered, 'elements over code, and floating ones over any text').toEqual([]);
        expect(measured.cut, 'code blocks whose lines run off their panel').toEqual([]);
        expect(measured.broken, 'headings broken inside a word').toEqual([]);
        expect(measured.offscreen, 'headings past the right edge').toEqual([]);
        await reader.visit('modules/getmodulelist', 'List modules');
        await reader.showSample(reader.section('modules/getmodulelist'), 'TypeScript');
        await screenshotOperation(reader, 'modules/getmodulelist', `docs-operation-${width}.png`);
        await screenshotTop(reader, `docs-${width}.png`);
      } finally {
        await reader.page.setViewportSize(DESKTOP);
      }
    },
    240_000,
  );

  it('ran with no script error or CSP violation, and asked nothing of any host but 127.0.0.1', async () => {
    await expectCleanRun(reader, '/docs');
  });
});

describe('/docs/admin in Chromium', () => {
  let reader: Reader;

  beforeAll(async () => {
    reader = await Reader.open(browser, `${started.origin}/docs/admin`, DESKTOP);
  }, 60_000);

  it('renders every operation with its signed samples in curl, TypeScript and Python, and its examples', async () => {
    const all = operationsOf(served.admin);
    // Which 12: test/admin/openapi.test.ts (the served document is the contract's: build.test.ts).
    expect(all).toHaveLength(12);

    for (const operation of all) {
      const { route, operationId } = operation;
      expect(
        operation['x-codeSamples'].map((sample) => sample.label),
        operationId,
      ).toEqual(['curl', 'TypeScript', 'Python']);
      const [, typescript, python] = operation['x-codeSamples'];
      await expectOperation(reader, operation);
      const section = reader.section(route);
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText, the text as rendered.
      expect(await section.innerText(), operationId).toContain('sigv4');
      const typescriptLines = keyLines(typescript!.source);
      const shownTypescript = await reader.showSample(section, 'TypeScript', typescriptLines);
      for (const line of typescriptLines) expect(shownTypescript, `${operationId}: ${line}`).toContain(line);
      const pythonLine = 'SigV4Auth(credentials, "lambda", region).add_auth(request)';
      expect(python!.source).toContain(pythonLine);
      expect(await reader.showSample(section, 'Python', [pythonLine]), operationId).toContain(pythonLine);
    }
  }, 240_000);

  it("says which of the examples' values differ on a deployment, and carries the guide", async () => {
    const about = await reader.visit('section/about-the-examples', 'What differs on your deployment');
    const once = await reader.visit('section/show-the-key-once', 'nowhere else');

    expect(about).toMatch(/Request id[^\n]*new for every call/);
    expect(about).toMatch(/Key id[^\n]*drawn at random/);
    expect(about).toMatch(/Cursor[^\n]*opaque/);
    expect(about).toContain('pk_live_Example');
    expect(once).toContain('key_id');
  });

  it.each(WIDTHS)(
    'lets nothing cover code (nor float over text), cuts no code, breaks no heading in a word, tables read, at %s px',
    async (width, viewport) => {
      try {
        const measured = await measureLayout(reader, served.admin, viewport);
        await reader.visit('section/errors', 'invalid_request');
        await reader.settled();
        const tables = await reader.page.evaluate(measureTables);

        expect(measured.blocks, 'code blocks measured').toBeGreaterThan(25);
        expect(measured.textWords, 'words of text measured against what floats').toBeGreaterThan(400);
        expect(measured.covered, 'elements over code, and floating ones over any text').toEqual([]);
        expect(measured.cut, 'code blocks whose lines run off their panel').toEqual([]);
        expect(measured.broken, 'headings broken inside a word').toEqual([]);
        expect(measured.offscreen, 'headings past the right edge').toEqual([]);
        expect(tables.cells, 'table cells measured').toBeGreaterThan(50);
        expect(tables.broken, 'identifiers broken across lines').toEqual([]);
        expect(tables.squeezed, 'cells that wrap in under 120 px').toEqual([]);
        expect(tables.offscreen, 'cells with text off screen').toEqual([]);
        await reader.visit('keys/issue', 'Issue a key for an owner');
        await screenshotOperation(reader, 'keys/issue', `docs-admin-operation-${width}.png`);
        await screenshotTop(reader, `docs-admin-${width}.png`);
      } finally {
        await reader.page.setViewportSize(DESKTOP);
      }
    },
    240_000,
  );

  it('ran with no script error or CSP violation, and asked nothing of any host but 127.0.0.1', async () => {
    await expectCleanRun(reader, '/docs/admin');
  });
});

describe('the layout measures, on a page made to break each rule', () => {
  it('find code under a control, text under what is fixed, a line cut, a heading broken in a word — nothing out of view', async () => {
    const page = await browser.newPage({ viewport: PHONE });
    try {
      await page.setContent(`<!DOCTYPE html><body style="margin: 0; font: 16px monospace">
        <pre style="width: 200px; margin: 0">const covered = true; // a line far wider than its block</pre>
        <button style="position: absolute; top: 0; left: 0">Copy</button>
        <p style="margin-top: 60px">Prose under the floating menu</p>
        <div style="position: fixed; top: 60px; left: 0; width: 120px; height: 30px">menu</div>
        <h2 style="width: 60px; overflow-wrap: anywhere">Authentication</h2>
        <pre style="margin-top: 3000px">far below the viewport</pre>
        <button style="position: absolute; top: 3000px; left: 0">Below</button>
      </body>`);

      const code = await page.evaluate(coveredCode);
      const cut = await page.evaluate(cutCode);
      const headings = await page.evaluate(brokenHeadings);

      const covering = code.covered.map(({ element, code: word }) => `${element} over ${word}`);
      expect(covering).toContainEqual(expect.stringMatching(/^button: "Copy" over const$/));
      expect(covering).toContainEqual(expect.stringMatching(/^div: "menu" \(fixed\) over Prose$/));
      expect(covering.join('\n')).not.toMatch(/Below|far|viewport/);
      expect(code.blocks).toBe(2);
      expect(cut.cut).toEqual([expect.stringMatching(/^const covered = true;/)]);
      expect(headings.broken).toEqual([expect.stringMatching(/^H2 "Authentication": Authentication$/)]);
    } finally {
      await page.close();
    }
  });
});

describe('the OpenAPI documents from another origin, in Chromium', () => {
  /** A page of another origin (another loopback port), as a browser tool's (Swagger Editor's, Postman's) is. */
  let tool: Server;
  let toolOrigin: string;

  beforeAll(async () => {
    tool = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!DOCTYPE html><title>an OpenAPI tool</title>');
    });
    toolOrigin = `http://127.0.0.1:${await listenOnLoopback(tool)}`;
  });

  afterAll(async () => {
    if (tool) await closeServer(tool);
  });

  it('load by URL, with and without a preflight; the API itself stays closed to other origins', async () => {
    const page = await browser.newPage();
    // Chromium sends a preflight in its network service, unseen by page events: its DevTools protocol reports it.
    const preflights: string[] = [];
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    cdp.on(
      'Network.requestWillBeSent',
      (event: { type?: string; request: { method: string; url: string } }) => {
        if (event.request.method === 'OPTIONS') preflights.push(new URL(event.request.url).pathname);
      },
    );
    try {
      await page.goto(`${toolOrigin}/`);
      const loaded = await page.evaluate(
        async ({ origin, key }) => {
          const load = async (path: string, init?: object) => {
            try {
              const answer = await fetch(`${origin}${path}`, init);
              const body = (await answer.json()) as { openapi?: string; info?: { title?: string } };
              return `${answer.status} ${body.openapi ?? ''} ${body.info?.title ?? ''}`.trim();
            } catch (error) {
              return `refused: ${(error as Error).name}`;
            }
          };
          return {
            simple: await load('/docs/openapi.json'),
            // A header of the tool's own makes the browser ask first (a preflight OPTIONS).
            preflighted: await load('/docs/admin/openapi.json', { headers: { 'x-openapi-tool': 'import' } }),
            api: await load('/v1/modules?limit=1', { headers: { authorization: `Bearer ${key}` } }),
            // A page of the reference is for people: not open to other origins either.
            page: await load('/docs', { headers: { 'x-openapi-tool': 'import' } }),
          };
        },
        { origin: started.origin, key: KEY },
      );

      expect(loaded.simple).toBe('200 3.1.0 Catalogue Read API');
      expect(loaded.preflighted).toMatch(/^200 3\.1\.0 Catalogue Read API/);
      expect(preflights).toContain('/docs/admin/openapi.json');
      // The API sends no CORS headers: a page of another origin cannot read it (keys stay off browser pages).
      expect(loaded.api).toBe('refused: TypeError');
      expect(loaded.page).toBe('refused: TypeError');
    } finally {
      await page.close();
    }
  });
});
