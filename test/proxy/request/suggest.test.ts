import { describe, expect, it } from 'vitest';
import { ECHO_MAX_CHARACTERS, echoName, suggest, withinOneEdit } from '../../../proxy/request/suggest.js';

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

describe('echoName', () => {
  it('quotes plain names', () => {
    expect(echoName('Limit')).toBe('`Limit`');
  });

  it('escapes what is not printable ASCII, and the quote and escape characters', () => {
    expect(echoName('a\nb\u0000c')).toBe('`a\\u000ab\\u0000c`');
    expect(echoName('x`y\\z')).toBe('`x\\u0060y\\u005cz`');
    expect(echoName('é😀')).toBe('`\\u00e9\\u{1f600}`');
  });

  it('cuts long names', () => {
    const echoed = echoName('a'.repeat(10_000))!;
    expect(echoed).toBe(`\`${'a'.repeat(ECHO_MAX_CHARACTERS)}…\``);
  });

  it('never echoes a key, in any case', () => {
    expect(echoName('pk_live_AAAAAAAAAAAAAAAAAAAAAA')).toBeUndefined();
    expect(echoName('xPK_LIVE_abc')).toBeUndefined();
  });
});
