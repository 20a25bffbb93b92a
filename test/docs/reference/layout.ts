/**
 * Measurements of the reference pages' layout, run in the page (`page.evaluate(fn)`: each function is
 * self-contained, the tests compile without the DOM's types): what covers code, headings broken inside a word,
 * tables a reader cannot read. Used by test/docs/reference/page.browser.test.ts at a desktop's and a phone's
 * width.
 */

/** An element drawn over a line of code: what it is, and the code it covers. */
export interface Covering {
  element: string;
  code: string;
}

/**
 * Every element that covers code or text, measured by bounding boxes at the page's current scroll position:
 * each word of every code block (`pre`: samples, response examples, exchanges, the prose's blocks), clipped to
 * what its block shows, against every control (buttons, links, fields, anything focusable or with a role a
 * pointer acts on) and every positioned element (absolute, fixed, sticky) that is drawn and is not the word's own
 * ancestor; and each word of any text drawn on the page (code or prose, inline code badges included), clipped to
 * what its scrolling boxes show, against every element fixed or sticky to the viewport (a floating menu button
 * is drawn over whatever scrolls under it: there it must cover nothing). The tests call it at every operation
 * and at the top, so each position they visit is measured. `elements` counts those in the viewport.
 */
export function coveredCode(): {
  blocks: number;
  words: number;
  textWords: number;
  elements: number;
  covered: Covering[];
} {
  // biome-ignore lint/suspicious/noExplicitAny: the page's DOM; the tests compile without the DOM's types.
  const { document, getComputedStyle, innerWidth, innerHeight, NodeFilter } = globalThis as any;
  type Box = { left: number; top: number; right: number; bottom: number };
  const CONTROL =
    'button, a[href], input, select, textarea, summary, [role="button"], [role="tab"], [role="menuitem"], [role="switch"], [role="combobox"], [tabindex]:not([tabindex="-1"])';
  // biome-ignore lint/suspicious/noExplicitAny: DOM elements.
  const drawn = (element: any) => {
    const style = getComputedStyle(element);
    const box = element.getBoundingClientRect();
    return style.visibility !== 'hidden' && Number(style.opacity) > 0 && box.width > 0.5 && box.height > 0.5;
  };
  const overlap = (a: Box, b: Box) =>
    Math.min(a.right, b.right) - Math.max(a.left, b.left) > 0.5 &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 0.5;
  const clip = (a: Box, b: Box): Box => ({
    left: Math.max(a.left, b.left),
    top: Math.max(a.top, b.top),
    right: Math.min(a.right, b.right),
    bottom: Math.min(a.bottom, b.bottom),
  });
  // biome-ignore lint/suspicious/noExplicitAny: a DOM element.
  const describe = (element: any) =>
    `${String(element.tagName).toLowerCase()}${element.getAttribute('aria-label') ? `[aria-label="${element.getAttribute('aria-label')}"]` : ''}${element.dataset?.testid ? `[data-testid="${element.dataset.testid}"]` : ''}: "${String(
      element.textContent ?? '',
    )
      .trim()
      .slice(0, 30)}"`;
  /** What of an element's content is shown: the viewport cut by every box between it and the page that clips. */
  const viewport: Box = { left: 0, top: 0, right: innerWidth, bottom: innerHeight };
  // biome-ignore lint/suspicious/noExplicitAny: DOM elements.
  const shownMemo = new Map<any, Box>();
  // biome-ignore lint/suspicious/noExplicitAny: a DOM element.
  const shownBy = (element: any): Box => {
    if (!element || element === document.body) return viewport;
    let shown = shownMemo.get(element);
    if (!shown) {
      shown = shownBy(element.parentElement);
      if (getComputedStyle(element).overflow !== 'visible')
        shown = clip(shown, element.getBoundingClientRect());
      shownMemo.set(element, shown);
    }
    return shown;
  };

  /** The words of the text nodes under `root` (but `skip`'s), each box clipped to what `root` shows. */
  // biome-ignore lint/suspicious/noExplicitAny: DOM nodes.
  const wordsOf = (root: any, shown: Box, skip: (node: any) => boolean) => {
    // biome-ignore lint/suspicious/noExplicitAny: DOM nodes.
    const found: { box: Box; text: string; node: any }[] = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      // A node wholly outside what is shown has no word there (each word's boxes lie within the node's): its
      // words are not measured one by one. Most of a long page is out of the viewport.
      const whole = document.createRange();
      whole.selectNodeContents(node);
      const bounds = clip(whole.getBoundingClientRect(), shown);
      if (bounds.right - bounds.left <= 0.5 || bounds.bottom - bounds.top <= 0.5) continue;
      if (skip(node)) continue;
      for (const match of String(node.textContent ?? '').matchAll(/\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index ?? 0);
        range.setEnd(node, (match.index ?? 0) + match[0].length);
        for (const rect of range.getClientRects()) {
          const box = clip(rect, shown);
          if (box.right - box.left > 0.5 && box.bottom - box.top > 0.5)
            found.push({ box, text: match[0], node });
        }
      }
    }
    return found;
  };

  // Code: a control's own text inside the code (a toggle) is not code; the block itself may be focusable.
  const blocks = [...document.querySelectorAll('pre')].filter(drawn);
  const words = blocks.flatMap((block) =>
    wordsOf(block, clip(block.getBoundingClientRect(), shownBy(block)), (node) => {
      const control = node.parentElement?.closest(CONTROL);
      return Boolean(control && control !== block && block.contains(control));
    }),
  );
  // All text drawn (code blocks included), for what floats over the page.
  const text = wordsOf(document.body, viewport, (node) => {
    const parent = node.parentElement;
    return !parent || parent.closest('script, style, noscript, template') !== null || !drawn(parent);
  }).flatMap((word) => {
    const box = clip(word.box, shownBy(word.node.parentElement));
    return box.right - box.left > 0.5 && box.bottom - box.top > 0.5 ? [{ ...word, box }] : [];
  });

  // Every word measured lies in the viewport: an element outside it covers none.
  // biome-ignore lint/suspicious/noExplicitAny: DOM elements.
  const elements = [...document.querySelectorAll('body *')].filter((element: any) => {
    if (!overlap(element.getBoundingClientRect(), viewport)) return false;
    const position = getComputedStyle(element).position;
    const positioned = position === 'absolute' || position === 'fixed' || position === 'sticky';
    return (positioned || element.matches(CONTROL)) && drawn(element);
  });
  const covered: Covering[] = [];
  for (const element of elements) {
    const box: Box = element.getBoundingClientRect();
    const position = getComputedStyle(element).position;
    const floating = position === 'fixed' || position === 'sticky';
    for (const word of floating ? text : words) {
      if (element.contains(word.node)) continue;
      if (overlap(box, word.box)) {
        covered.push({ element: `${describe(element)}${floating ? ` (${position})` : ''}`, code: word.text });
      }
    }
  }
  return {
    blocks: blocks.length,
    words: words.length,
    textWords: text.length,
    elements: elements.length,
    covered,
  };
}

/**
 * Code blocks that cut their code: a `pre` whose content is wider than the block (`scrollWidth` over
 * `clientWidth`), so a line runs off its panel and shows only when scrolled sideways. Each block's first line
 * names it.
 */
export function cutCode(): { blocks: number; cut: string[] } {
  // biome-ignore lint/suspicious/noExplicitAny: the page's DOM.
  const { document } = globalThis as any;
  // biome-ignore lint/suspicious/noExplicitAny: DOM elements.
  const blocks: any[] = [...document.querySelectorAll('pre')].filter((block) => block.clientWidth > 0);
  const cut = blocks
    .filter((block) => block.scrollWidth > block.clientWidth + 1)
    .map((block) => {
      const first =
        String(block.textContent ?? '')
          .trim()
          .split('\n')[0] ?? '';
      return `${first.slice(0, 60)} (${block.scrollWidth} px in ${block.clientWidth})`;
    });
  return { blocks: blocks.length, cut };
}

/**
 * Headings broken inside a word: every word of every heading drawn (h1–h6) must lie on one line — a hyphenated
 * compound may break after its hyphen (`per-` / `day`), as print breaks it, never elsewhere. Also what reaches
 * past the viewport's right edge.
 */
export function brokenHeadings(): { headings: number; words: number; broken: string[]; offscreen: string[] } {
  // biome-ignore lint/suspicious/noExplicitAny: the page's DOM.
  const { document, innerWidth, NodeFilter } = globalThis as any;
  const broken: string[] = [];
  const offscreen: string[] = [];
  let words = 0;
  const headings = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].filter(
    // biome-ignore lint/suspicious/noExplicitAny: DOM elements.
    (heading: any) => heading.getBoundingClientRect().width > 0,
  );
  for (const heading of headings) {
    const walker = document.createTreeWalker(heading, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of String(node.textContent ?? '').matchAll(/[^\s-]+-?|-/g)) {
        words++;
        const range = document.createRange();
        range.setStart(node, match.index ?? 0);
        range.setEnd(node, (match.index ?? 0) + match[0].length);
        const rects = [...range.getClientRects()];
        const lines = new Set(rects.map((rect: { top: number }) => Math.round(rect.top))).size;
        if (lines > 1) broken.push(`${heading.tagName} "${String(heading.textContent).trim()}": ${match[0]}`);
        if (rects.some((rect: { right: number }) => rect.right > innerWidth + 0.5)) {
          offscreen.push(`${heading.tagName} "${String(heading.textContent).trim()}": ${match[0]}`);
        }
      }
    }
  }
  return { headings: headings.length, words, broken, offscreen };
}

/**
 * Every table cell of the prose: each identifier in it (a word of a code span, a snake_case word or a
 * Header-Name) must lie on one line unless it is longer than the cell is wide; a cell whose text wraps must be at least 120 px wide (about 15 characters a line); and nothing of
 * a cell may lie outside what its table shows within the viewport (a reader would have to scroll it sideways).
 */
export function measureTables() {
  // biome-ignore lint/suspicious/noExplicitAny: the page's DOM.
  const { document, innerWidth, NodeFilter } = globalThis as any;
  const broken: string[] = [];
  const squeezed: string[] = [];
  const offscreen: string[] = [];
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
    if (cell.getBoundingClientRect().width === 0) continue;
    cells++;
    const text = String(cell.textContent ?? '').trim();
    // An identifier longer than the cell is wide may break (else it would be off screen); no other may.
    const room = cell.clientWidth;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const inCode = Boolean(node.parentElement?.closest('code'));
      const pattern = inCode
        ? /\S+/g
        : /[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+|[A-Z][a-z0-9]*(?:-[A-Z][A-Za-z0-9]*)+/g;
      for (const match of String(node.textContent ?? '').matchAll(pattern)) {
        identifiers++;
        const at = match.index ?? 0;
        const range = rangeOf(node, at, at + match[0].length);
        const width = [...range.getClientRects()].reduce(
          (sum: number, rect: { width: number }) => sum + rect.width,
          0,
        );
        if (lines(range) > 1 && width <= room) broken.push(match[0]);
      }
    }
    if (text !== '' && lines(rangeOf(cell)) > 1 && cell.getBoundingClientRect().width < 120) {
      squeezed.push(text.slice(0, 40));
    }
    // What the reader sees of the table: its scrolling box, within the viewport.
    const frame = (cell.closest('.md-table-wrapper') ?? cell).getBoundingClientRect();
    const [left, right] = [Math.max(0, frame.left), Math.min(innerWidth, frame.right)];
    const content = [...rangeOf(cell).getClientRects()] as { left: number; right: number }[];
    if (content.some((rect) => rect.left < left - 0.5 || rect.right > right + 0.5)) {
      offscreen.push(text.slice(0, 40));
    }
  }
  return { cells, identifiers, broken, squeezed, offscreen };
}
