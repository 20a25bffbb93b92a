/**
 * The prose of the reference page, taken from the manual's own pages (docs/api.md, the versioning policy and
 * the changelog) when the page is built, so the page and the manual cannot say different things: one source.
 * Pure: Markdown in, Markdown out.
 */

/** Sections of docs/api.md that are about the page itself, not the API. */
const NOT_ON_THE_PAGE = new Set(['The reference page (`/docs`)']);

/**
 * A heading's anchor as GitHub makes it (the manual's own links use these).
 * @example githubSlug('Licence and attribution (CC BY 4.0)') // → 'licence-and-attribution-cc-by-40'
 */
export function githubSlug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/**
 * A heading's anchor on the page, as Redoc makes it for a section of the description (the browser test
 * follows every one of them).
 * @example pageAnchor('Licence and attribution (CC BY 4.0)') // → '/section/licence-and-attribution-(cc-by-4.0)'
 */
export function pageAnchor(heading: string): string {
  return `/section/${heading.trim().toLowerCase().replace(/[`'"]/g, '').replace(/\s+/g, '-')}`;
}

/** The `## ` sections of a page, in order, each with its heading and its text (the heading line included). */
export function sections(markdown: string): { heading: string; text: string }[] {
  const out: { heading: string; text: string }[] = [];
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const heading = !fence && /^## (.+)$/.exec(line)?.[1];
    if (heading) out.push({ heading, text: line });
    else if (out.length > 0) out[out.length - 1]!.text += `\n${line}`;
  }
  return out;
}

/** A page of the manual whose sections go onto the reference page. */
export interface ProsePage {
  /** Its path in the repository, e.g. `docs/api.md`. */
  file: string;
  markdown: string;
}

/**
 * The sections of `pages` (each from its first `## ` heading) for the reference page, in order: a link to a
 * section that is on the page becomes the page's own anchor, a link to another file of the repository its
 * text and the file's name (the page is served alone), and sections about the page itself are left out.
 * @example pageProse([{ file: 'docs/api.md', markdown: '# T\n\n## Paging\n\nSee [keys](keys.md#x) and [paging](#paging).' }])
 * // → '## Paging\n\nSee keys (docs/keys.md) and [paging](#/section/paging).'
 */
export function pageProse(pages: readonly ProsePage[]): string {
  for (const page of pages) refuseStrayTags(page);
  const kept = pages.map((page) => ({
    ...page,
    sections: sections(page.markdown).filter((section) => !NOT_ON_THE_PAGE.has(section.heading)),
  }));
  /** `file#slug` → heading, for every section on the page. */
  const onThePage = new Map<string, string>();
  for (const page of kept) {
    for (const section of page.sections)
      onThePage.set(`${page.file}#${githubSlug(section.heading)}`, section.heading);
  }
  const prose = kept
    .flatMap((page) => {
      const folder = page.file.includes('/') ? page.file.slice(0, page.file.lastIndexOf('/') + 1) : '';
      return page.sections.map((section) =>
        section.text
          .trimEnd()
          .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (whole, text: string, target: string) => {
            if (/^[a-z]+:/i.test(target)) return whole;
            const [file = '', anchor] = target.split('#');
            const path = file === '' ? page.file : normalise(`${folder}${file}`);
            if (anchor !== undefined) {
              const heading = onThePage.get(`${path}#${anchor}`);
              if (heading) return `[${text}](#${pageAnchor(heading)})`;
              if (file === '')
                throw new Error(`${page.file}: the link ${whole} names no section of the page`);
            }
            return `${text} (${path})`;
          }),
      );
    })
    .join('\n\n');
  return wordsOfTableCode(prose);
}

/**
 * In a table row, a code span of several words becomes one code span a word: a phone's narrow column then wraps
 * it between its words, and never inside one (a code span is never broken: `Transfer-Encoding` would break at
 * its hyphen). Code fences are left as they are.
 * @example wordsOfTableCode('| a | `Vary: Accept-Encoding` |') // → '| a | `Vary:` `Accept-Encoding` |'
 */
export function wordsOfTableCode(markdown: string): string {
  let fence = false;
  return markdown
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) fence = !fence;
      if (fence || !line.startsWith('|')) return line;
      return line.replace(/(?<!`)`([^`]+)`(?!`)/g, (whole, code: string) =>
        /\S\s+\S/.test(code.trim())
          ? code
              .trim()
              .split(/\s+/)
              .map((word) => `\`${word}\``)
              .join(' ')
          : whole,
      );
    })
    .join('\n');
}

/** HTML the pages may use: what the page's own descriptions use, and inline markup. */
const HTML_TAGS = new Set(['details', 'summary', 'code', 'br', 'kbd', 'sub', 'sup']);

/**
 * Fails on a `<word>` outside code that a Markdown renderer would take for an HTML tag: on the page it opens an
 * element that swallows every section after it (and GitHub drops it). Write it in code, or `&lt;word&gt;`.
 * @example refuseStrayTags({ file: 'docs/api.md', markdown: 'by <publisher>' }) // throws: docs/api.md:1: …
 */
export function refuseStrayTags(page: ProsePage): void {
  let fence = false;
  page.markdown.split('\n').forEach((line, index) => {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) return;
    const outsideCode = line.replace(/(`+)[\s\S]*?\1/g, '');
    for (const match of outsideCode.matchAll(/<\/?([A-Za-z][\w-]*)[^>]*>/g)) {
      if (!HTML_TAGS.has(match[1]!.toLowerCase())) {
        throw new Error(
          `${page.file}:${index + 1}: ${match[0]} would be read as an HTML tag (the reference page would lose every section after it): write it in code, or as &lt;${match[1]}&gt;`,
        );
      }
    }
  });
}

/**
 * A repository path without `./` and `../` segments.
 * @example normalise('docs/../proxy/openapi.json') // → 'proxy/openapi.json'
 */
function normalise(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.' && part !== '') parts.push(part);
  }
  return parts.join('/');
}
