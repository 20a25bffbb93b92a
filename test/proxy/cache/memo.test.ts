/** BoundedMemo: each input worked out once while it is kept, and never more entries than its bound. */
import { describe, expect, it } from 'vitest';
import { BoundedMemo } from '../../../proxy/cache/memo.js';

describe('BoundedMemo', () => {
  it('computes a value once, then keeps it', () => {
    const memo = new BoundedMemo<string>(4);
    const seen: string[] = [];
    const upper = (key: string) => {
      seen.push(key);
      return key.toUpperCase();
    };
    expect(memo.get('a', upper)).toBe('A');
    expect(memo.get('a', upper)).toBe('A');
    expect(memo.get('b', upper)).toBe('B');
    expect(seen).toEqual(['a', 'b']);
  });

  it('is emptied when full, so a flood of distinct inputs never holds more than its bound', () => {
    const memo = new BoundedMemo<number>(3);
    let computed = 0;
    const length = (key: string) => {
      computed++;
      return key.length;
    };
    for (let i = 0; i < 1_000; i++) memo.get(`key-${i}`, length);
    expect(computed).toBe(1_000);
    // At most 3 are kept: the last few are there, the first is not.
    memo.get('key-999', length);
    expect(computed).toBe(1_000);
    memo.get('key-0', length);
    expect(computed).toBe(1_001);
  });
});
