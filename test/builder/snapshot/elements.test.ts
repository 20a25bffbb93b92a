/**
 * The elements of a file's top-level array, one at a time (builder/snapshot/elements.ts): read element by
 * element with JSON.parse, a text is accepted exactly when JSON.parse accepts it whole, with the same values,
 * whatever strings, nesting and whitespace hold (property-based, over valid arrays and over token soup); each
 * element's range is its own text (the bytes a module's source digest is taken of). The scan flags every record
 * the exact reading (exact.ts) finds something in — repeated names, numbers, lone surrogates — so that no such
 * record is taken unread; and it finds nesting past the bound without recursing, however deep.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstValue, MAX_DEPTH, scanArray, scanValue } from '../../../builder/snapshot/elements.js';
import { exactProblems } from '../../../builder/snapshot/exact.js';

/** The text read as the loader reads it: the elements' values, or 'refused'. */
function readElements(text: string): unknown[] | 'refused' {
  const bytes = Buffer.from(text);
  const open = firstValue(bytes);
  if (bytes[open] !== 0x5b) return 'refused';
  const values: unknown[] = [];
  let failed = false;
  const fault = scanArray(bytes, open, (start, end) => {
    try {
      values.push(JSON.parse(bytes.toString('utf8', start, end)));
      return undefined;
    } catch {
      failed = true;
      return false;
    }
  });
  return failed || fault ? 'refused' : values;
}

function wholeParse(text: string): unknown[] | 'refused' {
  try {
    const value = JSON.parse(text);
    return Array.isArray(value) ? value : 'refused';
  } catch {
    return 'refused';
  }
}

const tricky = fc.constantFrom('{', '}', '[', ']', '"', '\\', '\\"', '},{', 'é', '😀', '\u2028', '', ',');
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { maxDepth: 3 },
    fc.string(),
    fc.array(tricky).map((parts) => parts.join('')),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(fc.string(), tricky), tie('value'), { maxKeys: 4 }),
  ),
}));

describe('scanArray: a file read one record at a time', () => {
  it('gives each element as its own text, for any array however it is laid out', () => {
    fc.assert(
      fc.property(
        fc.array(json.value, { maxLength: 6 }),
        fc.constantFrom(0, 1, 2, '\t'),
        (records, space) => {
          const text = JSON.stringify(records, null, space);
          expect(readElements(text)).toEqual(JSON.parse(text));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('accepts a text exactly when JSON.parse accepts it whole (token soup, valid or not)', () => {
    const token = fc.constantFrom(
      '[',
      ']',
      '{',
      '}',
      ',',
      ':',
      ' ',
      '\n',
      '"a"',
      '"}"',
      '"\\""',
      '"',
      '1',
      '-0.5e3',
      '01',
      'true',
      'nul',
      'null',
      'x',
      '"k":',
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 14 }), (tokens) => {
        const text = `[${tokens.join('')}`;
        expect(readElements(text)).toEqual(wholeParse(text));
      }),
      { numRuns: 3000 },
    );
  });

  it('says a fault between elements in V8’s words, where it is', () => {
    const faultOf = (text: string) =>
      scanArray(Buffer.from(text), firstValue(Buffer.from(text)), () => undefined);

    expect(faultOf('[1,]')).toEqual({ position: 3, message: "Unexpected token ']'", afterComma: true });
    expect(faultOf('[1 2]')).toEqual({ position: 3, message: "Expected ',' or ']' after array element" });
    expect(faultOf('[1]x')).toEqual({
      position: 3,
      message: 'Unexpected non-whitespace character after JSON',
    });
    expect(faultOf('[1,')).toEqual({ position: 3, message: 'Unexpected end of JSON input' });
    expect(faultOf(' [ ] ')).toBeUndefined();
  });

  it('stops when told, having given the ranges of the elements before', () => {
    const ranges: [number, number][] = [];
    const text = Buffer.from('[{"a":1}, 7, "}"]');
    scanArray(text, 0, (start, end) => {
      ranges.push([start, end]);
      return ranges.length < 2 ? undefined : false;
    });
    expect(ranges).toEqual([
      [1, 8],
      [10, 11],
    ]);
  });
});

describe('scanValue: what must be read exactly is flagged, however it is written', () => {
  /** Objects whose members repeat names now and then (some escaped), with hostile numbers and strings. */
  const name = fc.constantFrom(
    '"id"',
    '"name"',
    '"a"',
    '"\\u0061"',
    '"power_12v_ma"',
    '"power_13v_ma"',
    '"ins"',
    '"x\\"y"',
  );
  const scalar = fc.constantFrom(
    '1',
    '-0',
    '1e309',
    '0.5',
    '9007199254740993',
    '12345678901234567890',
    '"s"',
    '"\\ud800"',
    '"\\ud83d\\ude00"',
    'null',
    '-0.0',
    '1E2',
  );
  const value = fc.letrec((tie) => ({
    value: fc.oneof(
      { maxDepth: 3 },
      scalar,
      tie('object'),
      fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
    ),
    object: fc
      .array(fc.tuple(name, tie('value')), { maxLength: 6 })
      .map((members) => `{${members.map(([key, item]) => `${key}: ${item}`).join(', ')}}`),
  }));

  it('every record with something to read exactly is suspect (no false negative)', () => {
    let flagged = 0;
    fc.assert(
      fc.property(value.object, (text) => {
        const bytes = Buffer.from(text);
        const scan = scanValue(bytes, 0, 1);
        expect(scan.end).toBe(bytes.length);
        const problems = exactProblems(bytes, 0, bytes.length, () => {});
        if (problems > 0) {
          expect(scan.suspect, text).toBe(true);
          flagged++;
        }
      }),
      { numRuns: 3000 },
    );
    expect(flagged).toBeGreaterThan(500);
  });

  it('an object of a million members (beyond any record) is flagged, without keeping its names', () => {
    const members = Array.from({ length: 1_000_000 }, (_, i) => `"k${i}":0`).join(',');
    const bytes = Buffer.from(`{${members}}`);
    const scan = scanValue(bytes, 0, 1);
    expect(scan).toEqual({ end: bytes.length, tooDeepAt: -1, suspect: true });
  });

  it('nesting past the bound is found where it starts, without recursion, however deep', () => {
    for (const depth of [MAX_DEPTH - 1, MAX_DEPTH, 1_000_000]) {
      const bytes = Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`);
      const scan = scanValue(bytes, 0, 1);
      expect(scan.end).toBe(bytes.length);
      expect(scan.tooDeepAt).toBe(depth + 1 > MAX_DEPTH ? MAX_DEPTH - 1 : -1);
    }
  });
});
