/**
 * A snapshot's bytes read exactly, or refused with the place (RFC 7493, I-JSON, which a publication format
 * should require): what JSON.parse would read as something else than what is written is found here, each with
 * its line, column and field, and a reason that says what is wrong and what to write instead.
 * - the encoding: UTF-8 only — a byte-order mark, UTF-16 or UTF-32 text, bytes that are not UTF-8 (named in hex:
 *   JSON.parse would replace them with U+FFFD and the API would serve that);
 * - a member name that appears twice in one object (JSON.parse keeps the last: `{"id": 101, "id": 990101}`
 *   would publish 101's data as 990101);
 * - an escaped lone surrogate (`"\ud800"`), which no text can hold;
 * - a number a double does not hold as written: beyond its range (`1e309`, read as Infinity), too small to be
 *   told from 0 (`1e-400`), an integer beyond ±(2^53 − 1) (`9007199254740993`, read as …992), more than 17
 *   significant digits, or negative zero (`-0`, published as 0).
 * The scan of elements.ts flags a record that may hold any of these (and nesting past its bound); only a flagged
 * record is read here, token by token, without recursion: linear in its bytes, whatever they hold.
 */
import { isUtf8 } from 'node:buffer';
import { MAX_DEPTH } from './elements.js';

/** How a problem names its place: `line 3, column 14` (the locator of its file). */
export type Place = (at: number) => string;

/** A place in a record where what is written cannot be read exactly. */
export interface ExactProblem {
  /** The byte offset of what is wrong, in the file. */
  at: number;
  /** The field path it sits in (`ins[0].name`), when it is inside the record. */
  field?: string;
  /** The reason, given how places are said (a duplicate names where its first occurrence is). */
  reason(place: Place): string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Line and column (1-based; the column in UTF-16 characters, as editors count) of byte offsets in one file.
 * Asked in increasing order (as problems are found) it never reads a byte twice: a file with a million
 * problems on one line costs one pass, not a million.
 */
export class Locator {
  #at = 0;
  #line = 1;
  #lineStart = 0;
  #column = 1;
  /** The first line feed at or after #at (the length when there is none): found once, not at every call. */
  #nextLineFeed = -1;
  constructor(readonly bytes: Buffer) {}

  /** `line L, column C` of byte offset `at`. */
  readonly place: Place = (at) => {
    const { line, column } = this.lineAndColumn(at);
    return `line ${line}, column ${column}`;
  };

  lineAndColumn(at: number): { line: number; column: number } {
    const { bytes } = this;
    if (at < this.#at) {
      this.#at = 0;
      this.#line = 1;
      this.#lineStart = 0;
      this.#column = 1;
      this.#nextLineFeed = -1;
    }
    const lineFeedFrom = (from: number) => {
      const found = bytes.indexOf(0x0a, from);
      return found === -1 ? bytes.length : found;
    };
    if (this.#nextLineFeed < 0) this.#nextLineFeed = lineFeedFrom(this.#at);
    while (this.#nextLineFeed < at) {
      this.#line++;
      this.#lineStart = this.#nextLineFeed + 1;
      this.#column = 1;
      this.#nextLineFeed = lineFeedFrom(this.#lineStart);
    }
    let column = this.#column;
    for (let i = Math.max(this.#at, this.#lineStart); i < at; i++) {
      const b = bytes[i]!;
      if ((b & 0xc0) !== 0x80) column += b >= 0xf0 ? 2 : 1; // a character's first byte; 4 bytes: a pair
    }
    this.#at = at;
    this.#column = column;
    return { line: this.#line, column };
  }
}

/**
 * Why a file is not UTF-8 text as a whole (a byte-order mark, UTF-16, UTF-32), or undefined.
 * @example encodingReason(Buffer.from([0xff, 0xfe, 0x5b, 0x00])) // → 'is UTF-16 (little-endian) text …'
 */
export function encodingReason(bytes: Uint8Array): string | undefined {
  const saveAs = 'a snapshot file is UTF-8 (RFC 8259): save it as UTF-8 without a byte-order mark';
  const [a, b, c, d] = [bytes[0], bytes[1], bytes[2], bytes[3]];
  if (a === 0xef && b === 0xbb && c === 0xbf) {
    return 'is not valid JSON: it starts with a byte-order mark (U+FEFF); save it as UTF-8 without one';
  }
  const marked = (what: string) => `is ${what} text (it starts with that byte-order mark): ${saveAs}`;
  if (a === 0xff && b === 0xfe)
    return marked(c === 0 && d === 0 ? 'UTF-32 (little-endian)' : 'UTF-16 (little-endian)');
  if (a === 0xfe && b === 0xff) return marked('UTF-16 (big-endian)');
  if (a === 0 && b === 0 && c === 0xfe && d === 0xff) return marked('UTF-32 (big-endian)');
  if (bytes.length >= 2 && a !== 0 && b === 0) {
    return `looks like UTF-16 or UTF-32 (little-endian) text (its second byte is zero): ${saveAs}`;
  }
  if (bytes.length >= 2 && a === 0) {
    return `looks like UTF-16 or UTF-32 (big-endian) text (its first byte is zero): ${saveAs}`;
  }
  return undefined;
}

/** Whether `bytes[start, end)` is UTF-8 (native: about 5 GB/s). */
export const isUtf8Range = (bytes: Buffer, start: number, end: number) => isUtf8(bytes.subarray(start, end));

/**
 * The length of the UTF-8 character at `at` (1–4), or 0 when the bytes there are not one: the strict
 * definition (RFC 3629): no overlong forms, no surrogates (ED A0–BF), nothing past U+10FFFF.
 */
function characterLength(bytes: Uint8Array, at: number, end: number): number {
  const b = bytes[at]!;
  if (b < 0x80) return 1;
  const cont = (i: number, low = 0x80, high = 0xbf) =>
    at + i < end && bytes[at + i]! >= low && bytes[at + i]! <= high;
  if (b >= 0xc2 && b <= 0xdf) return cont(1) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    const [low, high] = b === 0xe0 ? [0xa0, 0xbf] : b === 0xed ? [0x80, 0x9f] : [0x80, 0xbf];
    return cont(1, low, high) && cont(2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    const [low, high] = b === 0xf0 ? [0x90, 0xbf] : b === 0xf4 ? [0x80, 0x8f] : [0x80, 0xbf];
    return cont(1, low, high) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** The end of the run of bytes from `at` that are not UTF-8 (at least one byte). */
function invalidRunEnd(bytes: Uint8Array, at: number, end: number): number {
  let i = at + 1;
  while (i < end && bytes[i]! >= 0x80 && characterLength(bytes, i, end) === 0) i++;
  return i;
}

const WINDOWS_1252 = new TextDecoder('windows-1252');

/** What a run of bytes that are not UTF-8 is, and what to do. */
function notUtf8Reason(bytes: Uint8Array, start: number, end: number, where: string): string {
  const shown = bytes.subarray(start, Math.min(end, start + 12));
  const hex =
    [...shown].map((b) => b.toString(16).padStart(2, '0')).join(' ') + (end - start > 12 ? ' …' : '');
  const legacy = JSON.stringify(WINDOWS_1252.decode(shown));
  return (
    `holds bytes that are not UTF-8 (${hex})${where}: in Windows-1252 or Latin-1 they would read ${legacy}; ` +
    'save the file as UTF-8 (JSON text is UTF-8, RFC 8259)'
  );
}

/**
 * Bytes at `at` that are not UTF-8 outside any string (between records, say): the reason, or undefined when
 * the bytes there are UTF-8 (the fault is then a plain syntax error).
 */
export function notUtf8At(bytes: Uint8Array, at: number): string | undefined {
  if (at >= bytes.length || bytes[at]! < 0x80 || characterLength(bytes, at, bytes.length) > 0)
    return undefined;
  return notUtf8Reason(bytes, at, invalidRunEnd(bytes, at, bytes.length), '');
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** The bytes a JSON number is written with: digits, `.`, `e`, `E`, `+`, `-`. */
const NUMBER_BYTE = new Uint8Array(256);
for (const c of '0123456789.eE+-') NUMBER_BYTE[c.charCodeAt(0)] = 1;
const NUMBER = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/**
 * Why the JSON number `text` is not held by a double as written, or undefined when it is (up to the rounding
 * of a decimal fraction, which every JSON reader does).
 * @example numberReason('1e309') // → '1e309 is larger than any number a double can hold …'
 * @example numberReason('128.5') // → undefined
 */
export function numberReason(text: string): string | undefined {
  const value = Number(text);
  const m = NUMBER.exec(text);
  if (!m) return undefined; // not a JSON number: JSON.parse refuses it
  if (!Number.isFinite(value)) {
    return (
      `${text} is larger than any number a double can hold (about 1.8e308): it would be read as ` +
      `${value > 0 ? '' : '-'}Infinity; write a smaller number`
    );
  }
  const [, sign = '', whole = '', fraction = '', exponent] = m;
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') {
    return sign === '-'
      ? `${text} is negative zero, which no catalogue value means (it would be published as 0): write 0`
      : undefined;
  }
  if (value === 0) {
    return (
      `${text} is too small to be told from 0 by a double (the smallest is about 5e-324): it would be read ` +
      'as 0; write 0, or a larger number'
    );
  }
  const significant = digits.replace(/0+$/, '');
  if (significant.length > 17) {
    return (
      `${text} has ${significant.length} significant digits; a double keeps at most 17, so it would be read ` +
      `as ${value}: write ${value}, or round it`
    );
  }
  // Written as an integer (digits, perhaps a fraction of zeros; an exponent says a magnitude instead): a
  // double holds it exactly only within ±(2^53 − 1).
  if (exponent !== undefined || /[1-9]/.test(fraction) || whole.replace(/^0+/, '').length <= 15)
    return undefined;
  if (BigInt(whole) <= MAX_SAFE) return undefined;
  return (
    `${text} is an integer beyond ±9,007,199,254,740,991, the largest a double holds exactly, so it would ` +
    `be read as ${sign}${BigInt(Math.abs(value))}: write a smaller number`
  );
}

/** A container open while a record is read: its field path, and what it holds so far. */
interface Frame {
  path: string;
  /** An object's member names so far, with where each first appeared; undefined for an array. */
  names: Map<string, number> | undefined;
  /** An array's element index; an object's current member name. */
  index: number;
  name: string | undefined;
  /** An object expects a member name next (after `{` and `,`). */
  expectsName: boolean;
}

const join = (path: string, name: string) => (path === '' ? name : `${path}.${name}`);

/** The field path of the value that starts now, inside `frame` (undefined: the record itself). */
function valuePath(frame: Frame | undefined): string {
  if (!frame) return '';
  return frame.names ? join(frame.path, frame.name ?? '') : `${frame.path}[${frame.index}]`;
}

/** A member name as JSON.parse would read it (escapes decoded; bytes that are not UTF-8 as U+FFFD). */
function decodeName(bytes: Buffer, start: number, end: number, escaped: boolean): string {
  const text = bytes.toString('utf8', start, end);
  if (!escaped) return text.slice(1, -1);
  try {
    return JSON.parse(text) as string;
  } catch {
    return text.slice(1, -1);
  }
}

/** Four hex digits at `at` as a number, or -1. */
function hex4(bytes: Uint8Array, at: number): number {
  if (at + 4 > bytes.length) return -1;
  let value = 0;
  for (let i = at; i < at + 4; i++) {
    const c = bytes[i]!;
    const lower = c | 0x20;
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/** One record being read exactly: its bytes, where it ends, where its problems go, and how many went. */
interface Reading {
  bytes: Buffer;
  end: number;
  add(problem: ExactProblem): void;
  count: number;
}

/** Give `problem` to the reading's `add`, and count it. */
function found(reading: Reading, problem: ExactProblem): void {
  reading.count++;
  reading.add(problem);
}

/**
 * Check the string at `start` (a quote): its bytes UTF-8, its escapes no lone surrogate. Returns its end
 * (exclusive) and whether it holds an escape.
 */
function readString(
  reading: Reading,
  start: number,
  field: string | undefined,
): { end: number; escaped: boolean } {
  const { bytes, end } = reading;
  let escaped = false;
  let i = start + 1;
  while (i < end) {
    const c = bytes[i]!;
    if (c === QUOTE) return { end: i + 1, escaped };
    if (c === BACKSLASH) {
      escaped = true;
      if (bytes[i + 1] !== 0x75) {
        i += 2;
        continue;
      }
      const unit = hex4(bytes, i + 2);
      const low = bytes[i + 6] === BACKSLASH && bytes[i + 7] === 0x75 ? hex4(bytes, i + 8) : -1;
      if (unit >= 0xd800 && unit <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) {
        i += 12; // a pair: one character
        continue;
      }
      if (unit >= 0xd800 && unit <= 0xdfff) {
        const written = bytes.toString('latin1', i, i + 6);
        const at = i;
        found(reading, {
          at,
          ...(field !== undefined && { field }),
          reason: () =>
            `${written} is half of a UTF-16 surrogate pair without its other half (a lone surrogate), which no ` +
            'text can hold: remove it, or write the whole character',
        });
      }
      i += 6;
      continue;
    }
    if (c >= 0x80) {
      const length = characterLength(bytes, i, end);
      if (length > 0) {
        i += length;
        continue;
      }
      const runEnd = invalidRunEnd(bytes, i, end);
      const reason = notUtf8Reason(bytes, i, runEnd, ' in a string');
      found(reading, { at: i, ...(field !== undefined && { field }), reason: () => reason });
      i = runEnd;
      continue;
    }
    i++;
  }
  return { end, escaped };
}

/** Check a member name against the others of its object; then it is the object's current one. */
function readName(
  reading: Reading,
  frame: Frame,
  start: number,
  string: { end: number; escaped: boolean },
): void {
  const name = decodeName(reading.bytes, start, string.end, string.escaped);
  const first = frame.names!.get(name);
  frame.name = name;
  frame.expectsName = false;
  if (first === undefined) {
    frame.names!.set(name, start);
    return;
  }
  found(reading, {
    at: start,
    field: join(frame.path, name),
    reason: (place) =>
      `repeats a name of its object (first at ${place(first)}): JSON.parse would keep only the last of the two, ` +
      'so one would be lost without a word; a name may appear once in an object (RFC 7493): remove one',
  });
}

/**
 * Read the record (or any value) in `bytes[start, end)` token by token and add every place where it cannot
 * be read exactly (see above) to `add`; how many were added. Never recurses; tolerant of what is not JSON
 * (JSON.parse judges syntax): it only looks for these problems.
 * @example exactProblems(Buffer.from('{"id":1,"id":2}'), 0, 15, (p) => problems.push(p)) // → 1 (field 'id', at 8)
 */
export function exactProblems(
  bytes: Buffer,
  start: number,
  end: number,
  add: (p: ExactProblem) => void,
): number {
  const reading: Reading = { bytes, end, add, count: 0 };
  const stack: Frame[] = [];
  let i = start;
  while (i < end) {
    const c = bytes[i]!;
    const top = stack[stack.length - 1];
    if (c === 0x7b || c === 0x5b) {
      if (stack.length >= MAX_DEPTH) return reading.count; // the scan refused it already
      stack.push({
        path: valuePath(top),
        names: c === 0x7b ? new Map() : undefined,
        index: 0,
        name: undefined,
        expectsName: c === 0x7b,
      });
      i++;
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
      i++;
    } else if (c === 0x2c) {
      if (top?.names) top.expectsName = true;
      else if (top) top.index++;
      i++;
    } else if (c === QUOTE) {
      const isName = top?.names !== undefined && top.expectsName;
      const string = readString(reading, i, isName ? top.path || undefined : valuePath(top) || undefined);
      if (isName) readName(reading, top, i, string);
      i = string.end;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      while (j < end && NUMBER_BYTE[bytes[j]!] === 1) j++;
      const text = bytes.toString('latin1', i, j);
      const reason = numberReason(text);
      const field = valuePath(top);
      if (reason !== undefined)
        found(reading, { at: i, ...(field !== '' && { field }), reason: () => reason });
      i = j;
    } else if (c >= 0x80) {
      const length = characterLength(bytes, i, end);
      if (length > 0) i += length;
      else {
        const runEnd = invalidRunEnd(bytes, i, end);
        const reason = notUtf8Reason(bytes, i, runEnd, ' outside any string');
        found(reading, { at: i, reason: () => reason });
        i = runEnd;
      }
    } else i++;
  }
  return reading.count;
}
