import { describe, expect, it } from 'vitest';
import { ECHO_MAX_CHARACTERS, echoName } from '../../../proxy/request/echo.js';

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
