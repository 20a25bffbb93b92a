import { describe, expect, it } from 'vitest';
import { ifNoneMatchMatches } from '../../../proxy/http/etag.js';

describe('ifNoneMatchMatches', () => {
  const etag = '"abc"';
  it.each([
    ['"abc"', true],
    ['W/"abc"', true],
    ['*', true],
    [' * ', true],
    ['"x", "abc"', true],
    ['"x",W/"abc"', true],
    ['"x" ,  "abc" ', true],
    ['"a,b", "abc"', true],
    ['"x"', false],
    ['"abc', false],
    ['abc', false],
    ['w/"abc"', false],
    ['W/ "abc"', false],
    ['"ABC"', false],
    ['', false],
    ['"x", *', false],
    [undefined, false],
  ])('%j → %s', (header, expected) => {
    expect(ifNoneMatchMatches(header, etag)).toBe(expected);
  });

  it('an opaque tag with a comma inside is one member', () => {
    expect(ifNoneMatchMatches('"a,b"', '"a,b"')).toBe(true);
    expect(ifNoneMatchMatches('"a,b"', '"a"')).toBe(false);
  });
});
