/** docs/reference/prose.ts: the manual's sections made fit for the page. */
import { describe, expect, it } from 'vitest';
import {
  githubSlug,
  pageAnchor,
  pageProse,
  refuseStrayTags,
  wordsOfTableCode,
} from '../../../docs/reference/prose.js';

describe('pageProse', () => {
  it('keeps the sections from the first ## heading, links on the page become its anchors, others name the file', () => {
    const api = [
      '# API reference',
      '',
      '- [Paging](#paging)',
      '',
      '## Paging',
      '',
      'See [keys](keys.md#a-section), [paging](#paging), [the policy](versioning.md#compatibility) and [RFC](https://x.org).',
      '',
      '## The reference page (`/docs`)',
      '',
      'About the page itself.',
    ].join('\n');
    const versioning = '# Versioning\n\n## Compatibility\n\nText.\n';

    const prose = pageProse([
      { file: 'docs/api.md', markdown: api },
      { file: 'docs/versioning.md', markdown: versioning },
    ]);

    expect(prose).toBe(
      [
        '## Paging',
        '',
        'See keys (docs/keys.md), [paging](#/section/paging), [the policy](#/section/compatibility) and [RFC](https://x.org).',
        '',
        '## Compatibility',
        '',
        'Text.',
      ].join('\n'),
    );
  });

  it('refuses a link to a section of its own page that is not there', () => {
    expect(() => pageProse([{ file: 'docs/api.md', markdown: '## A\n\n[b](#b)\n' }])).toThrow(
      'docs/api.md: the link [b](#b) names no section of the page',
    );
  });

  it('makes anchors as GitHub and as Redoc make them', () => {
    expect(githubSlug('Licence and attribution (CC BY 4.0)')).toBe('licence-and-attribution-cc-by-40');
    expect(pageAnchor('Licence and attribution (CC BY 4.0)')).toBe(
      '/section/licence-and-attribution-(cc-by-4.0)',
    );
    expect(pageAnchor('Caching with ETags')).toBe('/section/caching-with-etags');
  });
});

describe('refuseStrayTags', () => {
  it('refuses a <word> outside code, naming file and line, and lets code and known tags be', () => {
    const page = (markdown: string) => ({ file: 'docs/api.md', markdown });

    expect(() => refuseStrayTags(page('line\nby <publisher>, licensed'))).toThrow(
      /^docs\/api\.md:2: <publisher> would be read as an HTML tag/,
    );
    expect(() =>
      refuseStrayTags(page('`<domain>` and <details><summary>x</summary></details>')),
    ).not.toThrow();
    expect(() => refuseStrayTags(page('```\nLink: <https://x>\n```'))).not.toThrow();
  });
});

describe('wordsOfTableCode', () => {
  it('splits a code span of several words in a table row into one span a word, and leaves the rest alone', () => {
    const markdown = [
      '| Header | Example |',
      '|---|---|',
      '| `Vary` | `Vary: Accept-Encoding` and ``a ` b`` |',
      '',
      'Prose keeps `Vary: Accept-Encoding` whole.',
      '```',
      '| `in a fence` |',
      '```',
    ].join('\n');

    expect(wordsOfTableCode(markdown).split('\n')).toEqual([
      '| Header | Example |',
      '|---|---|',
      '| `Vary` | `Vary:` `Accept-Encoding` and ``a ` b`` |',
      '',
      'Prose keeps `Vary: Accept-Encoding` whole.',
      '```',
      '| `in a fence` |',
      '```',
    ]);
  });
});
