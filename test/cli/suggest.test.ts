/** The one did-you-mean module: the API's rule (letter case, one edit) and a command line's, one phrase. */
import { describe, expect, it } from 'vitest';
import { didYouMean, meantPhrase, suggest, suggestionText, withinOneEdit } from '../../cli/suggest.js';

describe('withinOneEdit', () => {
  it.each([
    ['limit', 'limit', true],
    ['limt', 'limit', true], // deletion
    ['limiit', 'limit', true], // insertion
    ['limot', 'limit', true], // substitution
    ['lmiit', 'limit', true], // swap of neighbours
    ['limti', 'limit', true],
    ['lmt', 'limit', false],
    ['offset', 'limit', false],
    ['', 'q', true],
    ['ab', 'ba', true],
    ['abc', 'cba', false],
  ])('%s → %s: %s', (a, b, expected) => {
    expect(withinOneEdit(a, b)).toBe(expected);
    expect(withinOneEdit(b, a)).toBe(expected);
  });
});

describe('suggest', () => {
  const paging = ['limit', 'cursor', 'sort'];
  it.each([
    ['Limit', { names: ['limit'], caseSensitive: true }],
    ['LIMIT', { names: ['limit'], caseSensitive: true }],
    ['limt', { names: ['limit'], caseSensitive: false }],
    ['Limt', { names: ['limit'], caseSensitive: true }],
    ['srot', { names: ['sort'], caseSensitive: false }],
    ['offset', undefined],
    ['page', undefined],
    ['limit', undefined],
  ])('%s → %j', (input, expected) => {
    expect(suggest(input, paging)).toEqual(expected);
  });

  it('names every defined name one edit away', () => {
    expect(suggest('ta', ['tag', 'tab'])).toEqual({ names: ['tag', 'tab'], caseSensitive: false });
  });
});

describe('the phrase both rules end in', () => {
  it("words the API's suggestion and a command line's the same way", () => {
    expect(suggestionText({ names: ['limit'], caseSensitive: true }, 'parameter names')).toBe(
      '; parameter names are case-sensitive: did you mean `limit`?',
    );
    expect(suggestionText({ names: ['tag', 'tab'], caseSensitive: false }, 'values')).toBe(
      '; did you mean `tag` or `tab`?',
    );
    expect(didYouMean('biuld', ['build', 'repair'])).toBe('; did you mean build?');
    expect(didYouMean('zzzzz', ['build', 'repair'])).toBe('');
    expect(meantPhrase([])).toBe('');
  });

  it('answers a long mistyped name at once: no edit distance is computed across lengths apart', () => {
    expect(suggest('l'.repeat(100_000), ['limit', 'cursor'])).toBeUndefined();
  });
});
