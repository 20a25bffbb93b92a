/**
 * The elements of a snapshot file's top-level JSON array, one at a time, as byte ranges: each is then parsed
 * by JSON.parse alone (native speed, V8's own syntax checks and messages), checked and either kept or dropped.
 * So a file is never parsed whole: a 10 MiB `modules.json` of `{}` is 3.5 million small parses that keep
 * nothing, not 460 MB of empty objects, and a file refused for its first record holds no memory for the rest.
 *
 * This walk finds where each element ends (skipping strings, where brackets are text) and checks only what lies
 * between elements (`[`, `,`, `]`, whitespace), saying a fault there in V8's words; what lies inside an element
 * is JSON.parse's to judge. It also gives each module's source digest its bytes (builder/publish/reuse.ts).
 *
 * On the way it finds what JSON.parse would read otherwise than it is written (RFC 7493, I-JSON): nesting past
 * {@link MAX_DEPTH}, and — to be looked at exactly by exact.ts, which names the place — a repeated member name
 * (JSON.parse keeps the last), a number a double cannot hold as written, an escaped lone surrogate. One pass, no
 * recursion and no allocation per name: a file of any nesting is scanned in bounded stack and memory, and the
 * common record costs a hash per member name.
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

/** How deep a snapshot file may nest arrays and objects, its own top-level array counting as the first level. */
export const MAX_DEPTH = 64;

/** What scanning one value found besides its end ({@link scanValue}). */
export interface ValueScan {
  /** Where the value ends (exclusive); the text's length when it never ends (JSON.parse then says why). */
  end: number;
  /** Where the nesting first went deeper than {@link MAX_DEPTH}, or -1. */
  tooDeepAt: number;
  /**
   * Something the exact reading (exact.ts) must look at, because JSON.parse alone would read it as something
   * else than what is written: a number that may not be held exactly, an escaped surrogate, a member name
   * repeated (or escaped, or in an object of very many members: then the scan does not compare them).
   */
  suspect: boolean;
}

const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
const DOT = 0x2e;
const LOWER_E = 0x65;
const UPPER_E = 0x45;
const PLUS = 0x2b;
const LOWER_U = 0x75;
/** Members of one object whose names the scan compares; an object with more goes to the exact reading. */
const COMPARED_MEMBERS = 64;
/** A number token of at most this many digits and no exponent is held exactly by a double (2^53 has 16). */
const EXACT_DIGITS = 15;

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

/** Whether the escape at `at` (a backslash) is `\uD800`–`\uDFFF`: half of a surrogate pair, to be checked. */
function surrogateEscape(bytes: Uint8Array, at: number): boolean {
  if (bytes[at + 1] !== LOWER_U || (bytes[at + 2]! | 0x20) !== 0x64) return false; // \ud or \uD
  const third = bytes[at + 3]! | 0x20;
  return (third >= 0x38 && third <= 0x39) || (third >= 0x61 && third <= 0x66); // 8-9, a-f
}

/** The end of the number (or stray word) at `start`, and whether a double may not hold it as written. */
function numberEnd(bytes: Uint8Array, start: number, scan: ValueScan): number {
  const end = bytes.length;
  let i = start;
  let digits = 0;
  let suspect = bytes[i] === MINUS && bytes[i + 1] === ZERO; // -0, -0.5: negative zero is looked at
  for (; i < end; i++) {
    const c = bytes[i]!;
    if (c >= ZERO && c <= NINE) digits++;
    else if (c === LOWER_E || c === UPPER_E) suspect = true;
    else if (c !== DOT && c !== MINUS && c !== PLUS) break;
  }
  if (suspect || digits > EXACT_DIGITS) scan.suspect = true;
  return i;
}

/**
 * A member name as the scan compares it: FNV-1a of its length, its first 8 bytes and its last one (names that
 * differ only in between collide, and are then compared exactly: a record's names rarely do).
 */
function nameHash(bytes: Uint8Array, start: number, end: number): number {
  let hash = Math.imul(0x811c9dc5 ^ (end - start), 0x01000193);
  const stop = Math.min(end, start + 8);
  for (let i = start; i < stop; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return Math.imul(hash ^ (bytes[end - 1] ?? 0), 0x01000193);
}

/**
 * The names of the open objects' members so far, flat (each object's from where it opened), reused: at most
 * COMPARED_MEMBERS an object and MAX_DEPTH objects open, so the scan of a file of any size keeps 16 KiB.
 */
const names = new Int32Array(MAX_DEPTH * COMPARED_MEMBERS);

/**
 * Scan the value at `start` (within a container nested `depth` deep: 1 for a record of a file's array): where
 * it ends, whether it nests deeper than {@link MAX_DEPTH}, and whether it holds anything JSON.parse would read
 * as something else than what is written ({@link ValueScan}). One pass over the bytes; it never recurses, and
 * it judges no syntax (JSON.parse of the range does).
 * @example scanValue(Buffer.from('{"a":1,"a":2}'), 0, 1) // → { end: 13, tooDeepAt: -1, suspect: true }
 */
export function scanValue(bytes: Uint8Array, start: number, depth: number): ValueScan {
  const scan: ValueScan = { end: bytes.length, tooDeepAt: -1, suspect: false };
  const first = bytes[start];
  if (first === QUOTE) {
    scan.end = stringEnd(bytes, start);
    for (let i = start + 1; i < scan.end; i++)
      if (bytes[i] === BACKSLASH && surrogateEscape(bytes, i++)) scan.suspect = true;
    return scan;
  }
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // Up to where a value ends; JSON.parse judges what is in between (`12abc` is its to refuse).
    scan.end = wordEnd(bytes, start);
    if (first === MINUS || (first! >= ZERO && first! <= NINE)) numberEnd(bytes, start, scan);
    return scan;
  }
  return scanContainer(bytes, start, depth, scan);
}

/** The end of a stray word (`true`, `nul`, anything): at the next whitespace, `,` or `]`. */
function wordEnd(bytes: Uint8Array, start: number): number {
  let i = start;
  while (i < bytes.length && !isSpace(bytes[i]) && bytes[i] !== COMMA && bytes[i] !== CLOSE_BRACKET) i++;
  return i;
}

/** For each open container (at most MAX_DEPTH): where its names start in `names` (an object), or -1 (an array). */
const OPEN = new Int32Array(MAX_DEPTH + 1);
/** For each open object: one bit per name seen, by the top 5 bits of its hash. */
const SEEN = new Int32Array(MAX_DEPTH + 1);

/** {@link scanValue} of an object or array: brackets counted, strings skipped, names and numbers looked at. */
function scanContainer(bytes: Uint8Array, start: number, depth: number, scan: ValueScan): ValueScan {
  const end = bytes.length;
  const open = OPEN;
  let level = 0;
  let top = 0;
  for (let i = start; i < end; i++) {
    const c = bytes[i]!;
    if (c === QUOTE) {
      const quote = i;
      let j = i + 1;
      let escaped = false;
      for (; j < end; j++) {
        const d = bytes[j];
        if (d === BACKSLASH) {
          escaped = true;
          if (surrogateEscape(bytes, j)) scan.suspect = true;
          j++;
        } else if (d === QUOTE) break;
      }
      i = j;
      const from = open[level - 1]!;
      if (from < 0) continue; // in an array: a value
      let k = j + 1;
      while (isSpace(bytes[k])) k++;
      if (bytes[k] !== COLON) continue; // a member's value
      // A member's name: compared with its object's others while the scan has found nothing to look at.
      i = k;
      if (escaped) scan.suspect = true;
      if (scan.suspect) continue;
      if (top - from >= COMPARED_MEMBERS) {
        scan.suspect = true;
        continue;
      }
      const hash = nameHash(bytes, quote + 1, j);
      // Compared with the others only when the object's 32-bit summary of its names says it may repeat one.
      const bit = 1 << (hash >>> 27);
      if ((SEEN[level - 1]! & bit) !== 0) {
        for (let n = from; n < top; n++) if (names[n] === hash) scan.suspect = true;
      }
      SEEN[level - 1]! |= bit;
      names[top++] = hash;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (depth + level + 1 > MAX_DEPTH) {
        scan.tooDeepAt = i;
        scan.end = containerEnd(bytes, i, level + 1);
        return scan;
      }
      SEEN[level] = 0;
      open[level++] = c === OPEN_BRACE ? top : -1;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (level === 0) continue; // a stray bracket: JSON.parse says so
      const from = open[--level]!;
      if (from >= 0) top = from;
      if (level === 0) {
        scan.end = i + 1;
        return scan;
      }
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      i = numberEnd(bytes, i, scan) - 1;
    }
  }
  return scan;
}

/** The end of a container whose bracket `depth` levels in starts at `from`: brackets counted, strings skipped. */
function containerEnd(bytes: Uint8Array, from: number, depth: number): number {
  const end = bytes.length;
  let open = depth - 1;
  for (let i = from; i < end; i++) {
    const c = bytes[i];
    if (c === QUOTE) i = stringEnd(bytes, i) - 1;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) open++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --open === 0) return i + 1;
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
  onElement: (start: number, end: number, scan: ValueScan) => boolean | undefined,
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
    const scan = scanValue(bytes, i, 1);
    if (onElement(i, scan.end, scan) === false) return undefined;
    i = firstValue(bytes, scan.end);
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
