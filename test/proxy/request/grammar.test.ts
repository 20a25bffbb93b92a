import { describe, expect, it } from 'vitest';
import {
  parseNameSet,
  parseNonnegativeInteger,
  parsePositiveInteger,
} from '../../../proxy/request/grammar.js';
import { splitQuery } from '../../../proxy/request/query.js';

describe('integer grammars', () => {
  it.each([
    ['1', 1, 1],
    ['42', 42, 42],
    ['0', undefined, 0],
    ['00', undefined, undefined],
    ['007', undefined, undefined],
    ['-1', undefined, undefined],
    ['+1', undefined, undefined],
    ['1.0', undefined, undefined],
    ['1e3', undefined, undefined],
    ['0x10', undefined, undefined],
    [' 1', undefined, undefined],
    ['1 ', undefined, undefined],
    ['١', undefined, undefined],
    ['9007199254740991', 9007199254740991, 9007199254740991],
    ['9007199254740992', undefined, undefined],
    ['99999999999999999999', undefined, undefined],
    ['', undefined, undefined],
  ])('%j → positive %s, nonnegative %s', (text, positive, nonnegative) => {
    expect(parsePositiveInteger(text)).toBe(positive);
    expect(parseNonnegativeInteger(text)).toBe(nonnegative);
  });
});

describe('parseNameSet', () => {
  const allowed = ['ins', 'outs', 'tags', 'panels'] as const;
  it.each([
    ['tags', ['tags']],
    ['panels,ins', ['ins', 'panels']],
    ['tags,tags', ['tags']],
    ['ins,outs,tags,panels', ['ins', 'outs', 'tags', 'panels']],
    ['', undefined],
    ['tags,', undefined],
    [',tags', undefined],
    ['tags,,ins', undefined],
    ['Tags', undefined],
    ['tags ,ins', undefined],
    ['modules', undefined],
  ])('%j → %j', (text, expected) => {
    expect(parseNameSet(text, allowed)).toEqual(expected);
  });
});

describe('splitQuery', () => {
  it.each([
    ['', []],
    ['a=1', [{ name: 'a', value: '1' }]],
    ['a', [{ name: 'a', value: '' }]],
    ['a=', [{ name: 'a', value: '' }]],
    ['a=1=2', [{ name: 'a', value: '1=2' }]],
    [
      'a=1&&b=2&',
      [
        { name: 'a', value: '1' },
        { name: 'b', value: '2' },
      ],
    ],
    ['a=x%2Cy', [{ name: 'a', value: 'x,y' }]],
    ['a=x+y', [{ name: 'a', value: 'x y' }]],
    ['a=%C3%A9', [{ name: 'a', value: 'é' }]],
    ['a=%', [{ name: 'a', value: undefined }]],
    ['%G0=1', [{ name: undefined, value: '1' }]],
    [
      'a=1&a=2',
      [
        { name: 'a', value: '1' },
        { name: 'a', value: '2' },
      ],
    ],
  ])('%j', (raw, expected) => {
    expect(splitQuery(raw)).toEqual(expected);
  });
});
