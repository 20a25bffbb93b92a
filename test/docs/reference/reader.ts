/**
 * A reader of a reference page in headless Chromium (Debian's `chromium`, driven by playwright-core): open the
 * page, go to a section or an operation, show a sample language, unfold the exchanges, wait for the layout to
 * settle, keep a screenshot — and every script error, console error (a CSP violation shows as one) and request
 * the page made. For test/docs/reference/page.browser.test.ts.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = join(resolve(import.meta.dirname, '../../..'), 'test/.artifacts');

/** One operation of a served document, as the tests read it. */
export interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description: string;
  'x-codeSamples': { lang: string; label: string; source: string }[];
  responses: Record<string, { content?: Record<string, { examples?: Record<string, Example> }> }>;
}

export interface Example {
  summary: string;
  description: string;
  value: unknown;
}

export interface ServedDocument {
  paths: Record<string, Record<string, Operation>>;
}

/** The operations of a served document, with their address on the page (`#/<tag>/<operationid>`). */
export function operationsOf(document: ServedDocument) {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => method !== 'parameters')
      .map(([method, operation]) => ({
        path,
        method,
        route: `${operation.tags[0]}/${operation.operationId.toLowerCase()}`,
        ...operation,
      })),
  );
}

/** Chromium, once per suite. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
  return chromium.launch({
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
}

export class Reader {
  readonly requests: string[] = [];
  readonly problems: string[] = [];

  private constructor(readonly page: Page) {
    page.on('request', (request) => this.requests.push(request.url()));
    page.on('pageerror', (error) => this.problems.push(`script error: ${error.message}`));
    // A CSP violation, a failed load or an uncaught error in a handler shows as a console error.
    page.on('console', (message) => {
      if (message.type() === 'error') this.problems.push(`console error: ${message.text().slice(0, 300)}`);
    });
  }

  /** A new tab at `url`, once the page made its requests. */
  static async open(browser: Browser, url: string, viewport: { width: number; height: number }) {
    const reader = new Reader(await browser.newPage({ viewport }));
    await reader.page.goto(url, { waitUntil: 'networkidle' });
    return reader;
  }

  /** The section of `#/<route>`, once `text` shows in it: its rendered text. */
  async visit(route: string, text: string): Promise<string> {
    await this.page.evaluate((hash) => {
      // Runs in the page, where `location` is the page's.
      (globalThis as unknown as { location: { hash: string } }).location.hash = hash;
    }, `#/${route}`);
    const section = this.section(route);
    // Seconds at most, but a busy machine makes Redoc slow to render a section.
    await section.getByText(text, { exact: false }).first().waitFor({ timeout: 30_000 });
    // Redoc may render the section again as the hash settles (its text empty for a moment): read it until the
    // text is in what it shows, within the same bound.
    const until = Date.now() + 30_000;
    for (;;) {
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText, the text as rendered (what a reader sees).
      const shown = await section.innerText();
      if (shown.includes(text) || Date.now() > until) return shown;
      await this.page.waitForTimeout(100);
    }
  }

  section(route: string): Locator {
    return this.page.locator(`[data-section-id="/${route}"]`);
  }

  /**
   * The text of `locator` once it shows every one of `texts` (Redoc renders after a click, and the machine may
   * be busy), or as it is after 10 s: the assertions that follow say what is missing.
   */
  async textShowing(locator: Locator, texts: readonly string[]): Promise<string> {
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
  async showSample(section: Locator, language: string, expected: readonly string[] = []): Promise<string> {
    const button = section.getByRole('button', { name: /^(curl|TypeScript|Python)$/ }).first();
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText, the text as rendered.
    if ((await button.innerText()).trim() !== language) {
      await button.click();
      // The menu may open past the viewport's edge, where a pointer cannot reach: the item's own click.
      await this.page
        .getByRole('menuitem', { name: language, exact: true })
        .filter({ visible: true })
        .dispatchEvent('click');
      await section.getByRole('button', { name: language, exact: true }).first().waitFor();
    }
    return this.textShowing(section, expected);
  }

  /** Unfold every exchange (`<details>`) on the page. */
  async unfoldExchanges(): Promise<void> {
    await this.page.evaluate(() => {
      // biome-ignore lint/suspicious/noExplicitAny: the page's DOM.
      for (const details of (globalThis as any).document.querySelectorAll('details')) details.open = true;
    });
  }

  /**
   * Lay out the whole page, not only what is on screen. Redoc marks its sections `content-visibility: auto`, so
   * Chromium skips the layout of those off screen and their boxes are stale (an exchange unfolded there still
   * has the size it had folded); on screen the layout is the same either way. For measurements.
   */
  async layOutEverything(): Promise<void> {
    await this.page.addStyleTag({ content: '* { content-visibility: visible !important; }' });
  }

  /**
   * Wait until the layout stops moving (Redoc renders, scrolls and measures after a route change or a resize):
   * the boxes of every code block and the page's height the same twice, 150 ms apart.
   */
  async settled(): Promise<void> {
    const layout = () =>
      this.page.evaluate(() => {
        // biome-ignore lint/suspicious/noExplicitAny: the page's DOM.
        const { document } = globalThis as any;
        const boxes = [...document.querySelectorAll('pre, h1, h2')].map((element) => {
          const box = (
            element as { getBoundingClientRect(): Record<string, number> }
          ).getBoundingClientRect();
          return [box.left, box.top, box.width, box.height].map((value) => Math.round(value ?? 0)).join(',');
        });
        return `${document.documentElement.scrollHeight}|${boxes.join(';')}`;
      });
    let last = await layout();
    for (let tries = 0; tries < 40; tries++) {
      await new Promise((done) => setTimeout(done, 150));
      const now = await layout();
      if (now === last) return;
      last = now;
    }
  }

  async screenshot(name: string): Promise<void> {
    mkdirSync(ARTIFACTS, { recursive: true });
    await this.page.screenshot({ path: join(ARTIFACTS, name) });
  }
}
