/**
 * Reading a snapshot's bytes exactly (builder/snapshot/exact.ts): the numbers a double does not hold as
 * written, each said with what it would be read as; the encodings that are not UTF-8; places said as an editor
 * counts them, in one pass (property-based against a naive count); and the exact reading of a record — repeated
 * names (escaped ones too), lone surrogates, bytes that are not UTF-8 — each with its field path.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ExactProblem,
  encodingReason,
  exactProblems,
  Locator,
  numberReason,
} from '../../../builder/snapshot/exact.js';

/** The problems of `text` read as one record: `field: line, column: reason`. */
function problemsOf(text: string | Buffer): string[] {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const locator = new Locator(bytes);
  const found: ExactProblem[] = [];
  exactProblems(bytes, 0, bytes.length, (problem) => found.push(problem));
  return found.map((p) => `${p.field ?? '-'}: ${locator.place(p.at)}: ${p.reason(locator.place)}`);
}

describe('numbers a double does not hold as written', () => {
  it.each([
    [
      '1e309',
      '1e309 is larger than any number a double can hold (about 1.8e308): it would be read as Infinity; write a smaller number',
    ],
    [
      '-1E400',
      '-1E400 is larger than any number a double can hold (about 1.8e308): it would be read as -Infinity; write a smaller number',
    ],
    [
      '1e-400',
      '1e-400 is too small to be told from 0 by a double (the smallest is about 5e-324): it would be read as 0; write 0, or a larger number',
    ],
    [
      '9007199254740993',
      '9007199254740993 is an integer beyond ±9,007,199,254,740,991, the largest a double holds exactly, so it would be read as 9007199254740992: write a smaller number',
    ],
    [
      '-9007199254740993',
      '-9007199254740993 is an integer beyond ±9,007,199,254,740,991, the largest a double holds exactly, so it would be read as -9007199254740992: write a smaller number',
    ],
    [
      '9007199254740992',
      '9007199254740992 is an integer beyond ±9,007,199,254,740,991, the largest a double holds exactly, so it would be read as 9007199254740992: write a smaller number',
    ],
    [
      '9007199254740993.000',
      '9007199254740993.000 is an integer beyond ±9,007,199,254,740,991, the largest a double holds exactly, so it would be read as 9007199254740992: write a smaller number',
    ],
    [
      '123456789012345678e-2',
      '123456789012345678e-2 has 18 significant digits; a double keeps at most 17, so it would be read as 1234567890123456.8: write 1234567890123456.8, or round it',
    ],
    [
      '3.141592653589793238462643383279',
      '3.141592653589793238462643383279 has 31 significant digits; a double keeps at most 17, so it would be read as 3.141592653589793: write 3.141592653589793, or round it',
    ],
    ['-0', '-0 is negative zero, which no catalogue value means (it would be published as 0): write 0'],
    [
      '-0.0e5',
      '-0.0e5 is negative zero, which no catalogue value means (it would be published as 0): write 0',
    ],
  ])('%s', (text, reason) => {
    expect(numberReason(text)).toBe(reason);
  });

  it.each([
    '0',
    '0.0',
    '0e999',
    '128.5',
    '9007199254740991',
    '-9007199254740991',
    '1.5e2',
    '1e15',
    '1e-300',
    '0.30000000000000004',
    '1e300',
    '1.7976931348623157e308',
    '5e-324',
    '-0.5',
    '100000000000000000000e-10',
    '0009007199254740991',
  ])('%s is held as written', (text) => {
    expect(numberReason(text)).toBeUndefined();
  });

  it('says nothing of a number a double holds exactly: any safe integer, written plainly or with an exponent', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (n) => {
        expect(numberReason(String(n))).toBeUndefined();
        expect(numberReason(n.toExponential())).toBeUndefined();
      }),
      { numRuns: 500 },
    );
  });
});

describe('the encoding of a file', () => {
  it.each([
    [
      [0xef, 0xbb, 0xbf, 0x5b],
      'is not valid JSON: it starts with a byte-order mark (U+FEFF); save it as UTF-8 without one',
    ],
    [
      [0xff, 0xfe, 0x5b, 0x00],
      'is UTF-16 (little-endian) text (it starts with that byte-order mark): a snapshot file is UTF-8 (RFC 8259): save it as UTF-8 without a byte-order mark',
    ],
    [
      [0xfe, 0xff, 0x00, 0x5b],
      'is UTF-16 (big-endian) text (it starts with that byte-order mark): a snapshot file is UTF-8 (RFC 8259): save it as UTF-8 without a byte-order mark',
    ],
    [
      [0xff, 0xfe, 0x00, 0x00],
      'is UTF-32 (little-endian) text (it starts with that byte-order mark): a snapshot file is UTF-8 (RFC 8259): save it as UTF-8 without a byte-order mark',
    ],
    [
      [0x00, 0x00, 0xfe, 0xff],
      'is UTF-32 (big-endian) text (it starts with that byte-order mark): a snapshot file is UTF-8 (RFC 8259): save it as UTF-8 without a byte-order mark',
    ],
    [
      [0x5b, 0x00, 0x5d, 0x00],
      'looks like UTF-16 or UTF-32 (little-endian) text (its second byte is zero): a snapshot file is UTF-8 (RFC 8259): save it as UTF-8 without a byte-order mark',
    ],
    [
      [0x00, 0x5b, 0x00, 0x5d],
      'looks like UTF-16 or UTF-32 (big-endian) text (its first byte is zero): a snapshot file is UTF-8 (RFC 8259): save it as UTF-8 without a byte-order mark',
    ],
  ])('%j', (bytes, reason) => {
    expect(encodingReason(Uint8Array.from(bytes))).toBe(reason);
  });

  it('says nothing of UTF-8 text, or of a file too short to tell', () => {
    expect(encodingReason(Buffer.from('[{"name": "Döpfer"}]'))).toBeUndefined();
    expect(encodingReason(Buffer.from('['))).toBeUndefined();
    expect(encodingReason(Buffer.alloc(0))).toBeUndefined();
  });
});

describe('places in a file', () => {
  /** Line and column as an editor counts them, from the start every time. */
  function naive(bytes: Buffer, at: number) {
    const before = bytes.subarray(0, at).toString('utf8');
    const lines = before.split('\n');
    return { line: lines.length, column: lines.at(-1)!.length + 1 };
  }

  it('are counted in lines and UTF-16 columns, asked in any order, as a count from the start gives them', () => {
    const piece = fc.constantFrom('a', ' ', '\n', 'é', '😀', '\u2028', '{"x":1}', '\r\n');
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 60 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (pieces, picks) => {
          const bytes = Buffer.from(pieces.join(''));
          // Only offsets where a character starts (a problem is always at one).
          const starts = [...Array(bytes.length + 1).keys()].filter(
            (i) => i === bytes.length || (bytes[i]! & 0xc0) !== 0x80,
          );
          const locator = new Locator(bytes);
          const asked = picks.map((pick) => starts[pick % starts.length]!);
          for (const at of [...asked, ...asked.sort((a, b) => a - b)]) {
            expect(locator.lineAndColumn(at)).toEqual(naive(bytes, at));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a million places on one line cost one pass over it', () => {
    const bytes = Buffer.from(`[${'-0,'.repeat(1_000_000)}0]`);
    const locator = new Locator(bytes);
    const started = performance.now();
    for (let at = 1; at < bytes.length; at += 3) locator.lineAndColumn(at);
    expect(locator.lineAndColumn(bytes.length - 2)).toEqual({ line: 1, column: bytes.length - 1 });
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

describe('a record read exactly', () => {
  it('a repeated name, with where the first is; in nested objects too; escaped names are the names they decode to', () => {
    expect(problemsOf('{"id": 101, "name": "A", "id": 990101}')).toEqual([
      'id: line 1, column 26: repeats a name of its object (first at line 1, column 2): JSON.parse would keep only the last of the two, so one would be lost without a word; a name may appear once in an object (RFC 7493): remove one',
    ]);
    expect(problemsOf('{"ins": [{"name": "in", "signal": "cv"}, {"name": "a",\n "name": "b"}]}')).toEqual([
      expect.stringMatching(
        /^ins\[1\]\.name: line 2, column 2: repeats a name of its object \(first at line 1, column 43\)/,
      ),
    ]);
    expect(problemsOf('{"a": 1, "\\u0061": 2}')).toEqual([
      expect.stringMatching(/^a: line 1, column 10: repeats a name/),
    ]);
    // The same name in two objects, or as a value, is no repeat.
    expect(problemsOf('{"a": {"a": "a"}, "b": [{"a": 1}, {"a": 2}]}')).toEqual([]);
  });

  it('a lone surrogate, escaped, in a value or a name; a pair is a character', () => {
    expect(problemsOf('{"name": "x\\ud800y", "\\udc00": 1, "ok": "\\ud83d\\ude00"}')).toEqual([
      'name: line 1, column 12: \\ud800 is half of a UTF-16 surrogate pair without its other half (a lone surrogate), which no text can hold: remove it, or write the whole character',
      'line 1, column 23: \\udc00 is half of a UTF-16 surrogate pair without its other half (a lone surrogate), which no text can hold: remove it, or write the whole character'.replace(
        /^/,
        '-: ',
      ),
    ]);
  });

  it('bytes that are not UTF-8, in hex, with what they would be in Windows-1252', () => {
    const latin1 = Buffer.concat([
      Buffer.from('{"name": "D'),
      Buffer.from([0xf6]),
      Buffer.from('pfer", "panels": [{"color": "'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}]}'),
    ]);
    expect(problemsOf(latin1)).toEqual([
      'name: line 1, column 12: holds bytes that are not UTF-8 (f6) in a string: in Windows-1252 or Latin-1 they would read "ö"; save the file as UTF-8 (JSON text is UTF-8, RFC 8259)',
      'panels[0].color: line 1, column 43: holds bytes that are not UTF-8 (ff fe) in a string: in Windows-1252 or Latin-1 they would read "ÿþ"; save the file as UTF-8 (JSON text is UTF-8, RFC 8259)',
    ]);
    // Encoded surrogates and overlong forms are not UTF-8 either.
    expect(problemsOf(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))[0]).toMatch(/not UTF-8 \(ed a0 80\)/);
    expect(problemsOf(Buffer.from([0x22, 0xc0, 0xaf, 0x22]))[0]).toMatch(/not UTF-8 \(c0 af\)/);
  });

  it('a number where it sits', () => {
    expect(problemsOf('{"hp": 1e309, "panels": [{"hp": -0}], "tag_ids": [1, 9007199254740993]}')).toEqual([
      expect.stringMatching(/^hp: line 1, column 8: 1e309 is larger/),
      expect.stringMatching(/^panels\[0\]\.hp: line 1, column 33: -0 is negative zero/),
      expect.stringMatching(/^tag_ids\[1\]: line 1, column 54: 9007199254740993 is an integer beyond/),
    ]);
  });

  it('anything at all: it never throws, and what it finds is inside the text', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (raw) => {
        const bytes = Buffer.from(raw);
        exactProblems(bytes, 0, bytes.length, (problem) => {
          expect(problem.at).toBeGreaterThanOrEqual(0);
          expect(problem.at).toBeLessThan(bytes.length);
          problem.reason(new Locator(bytes).place);
        });
      }),
      { numRuns: 2_000 },
    );
  });
});
