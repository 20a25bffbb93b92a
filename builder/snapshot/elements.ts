/**
 * The elements of a snapshot file's top-level JSON array, one at a time, as byte ranges: each is then parsed
 * by JSON.parse alone (native speed, V8's own syntax checks and messages), checked and either kept or dropped.
 * So a file is never parsed whole: a 10 MiB `modules.json` of `{}` is 3.5 million small parses that keep
 * nothing, not 460 MB of empty objects, and a file refused for its first record holds no memory for the rest.
 *
 * This walk finds where each element ends (skipping strings, where brackets are text) and checks only what lies
 * between elements (`[`, `,`, `]`, whitespace), saying a fault there in V8's words; what lies inside an element
 * is JSON.parse's to judge. It also gives each module's source digest its bytes (builder/publish/reuse.ts).
 */

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const isSpace = (c: number | undefined) => c === SPACE || c === LF || c === CR || c === TAB;

/** A fault between elements: where (a byte offset) and what, as V8's JSON.parse words it. */
export interface SyntaxFault {
  position: number;
  message: string;
  /** The fault is a `]` or `}` right after a comma (JSON allows no trailing comma). */
  afterComma?: boolean;
}

/**
 * Where the text's first value starts (after whitespace), or the text's length when it holds none.
 * @example firstValue(Buffer.from('  [1]')) // → 2
 */
export function firstValue(bytes: Uint8Array, from = 0): number {
  let i = from;
  while (isSpace(bytes[i])) i++;
  return i;
}

/** The end (exclusive) of the string starting at `start` (a quote), or the text's length when it never ends. */
function stringEnd(bytes: Uint8Array, start: number): number {
  const end = bytes.length;
  for (let i = start + 1; i < end; i++) {
    const c = bytes[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return end;
}

/**
 * The end (exclusive) of the value starting at `start`: an object or array by its brackets' depth, a string by
 * its closing quote, anything else (a number, `true`, a stray word) at the next whitespace, `,` or `]`.
 * The text's length when it never ends: JSON.parse of the range then says why.
 */
function valueEnd(bytes: Uint8Array, start: number): number {
  const end = bytes.length;
  const first = bytes[start];
  if (first === QUOTE) return stringEnd(bytes, start);
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    let i = start;
    while (i < end && !isSpace(bytes[i]) && bytes[i] !== COMMA && bytes[i] !== CLOSE_BRACKET) i++;
    return i;
  }
  let depth = 0;
  for (let i = start; i < end; i++) {
    const c = bytes[i];
    if (c === QUOTE) i = stringEnd(bytes, i) - 1;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1;
  }
  return end;
}

/**
 * Walk the array that starts at `open` (a `[`): `onElement(start, end)` for each element in order (return
 * false to stop early), then undefined; or the fault between elements that ends the walk.
 * @example scanArray(Buffer.from('[{"a":1}, 2]'), 0, (start, end) => { ranges.push([start, end]); }) // ranges [[1, 8], [10, 11]]
 */
export function scanArray(
  bytes: Uint8Array,
  open: number,
  onElement: (start: number, end: number) => boolean | undefined,
): SyntaxFault | undefined {
  const length = bytes.length;
  let i = firstValue(bytes, open + 1);
  if (bytes[i] === CLOSE_BRACKET) return afterArray(bytes, i + 1);
  for (;;) {
    if (i >= length) return { position: length, message: 'Unexpected end of JSON input' };
    const c = bytes[i]!;
    if (c === COMMA || c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      return {
        position: i,
        message: `Unexpected token '${String.fromCharCode(c)}'`,
        afterComma: c !== COMMA && bytes[lastNonSpace(bytes, i)] === COMMA,
      };
    }
    const end = valueEnd(bytes, i);
    if (onElement(i, end) === false) return undefined;
    i = firstValue(bytes, end);
    if (bytes[i] === CLOSE_BRACKET) return afterArray(bytes, i + 1);
    if (bytes[i] !== COMMA) {
      // Past an element that never ended, JSON.parse of that element has said why already.
      return { position: i, message: "Expected ',' or ']' after array element" };
    }
    i = firstValue(bytes, i + 1);
  }
}

/** Only whitespace may follow the array. */
function afterArray(bytes: Uint8Array, from: number): SyntaxFault | undefined {
  const i = firstValue(bytes, from);
  return i < bytes.length
    ? { position: i, message: 'Unexpected non-whitespace character after JSON' }
    : undefined;
}

function lastNonSpace(bytes: Uint8Array, before: number): number {
  let i = before - 1;
  while (i > 0 && isSpace(bytes[i])) i--;
  return i;
}
