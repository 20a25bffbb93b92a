/**
 * A request body read as the admin API uses it, or the reason it cannot be: every body it cannot use is a 400
 * that says what is wrong (never a 500 from a value nested past what a recursive reader can hold, never a
 * value read as something else than what was written). In order:
 * - bytes that are not UTF-8 text (UTF-16 and UTF-32 included), or that start with a byte-order mark (decoding
 *   would replace them with U+FFFD, and a field would be read as something else than what was sent);
 * - objects and arrays nested deeper than {@link BOUNDS}.bodyDepth (the API's bodies nest two levels): found
 *   by a scan without recursion, before anything recursive reads the body;
 * - text that is not JSON (where JSON.parse stopped, never its message: it quotes the body, which may hold a
 *   key);
 * - a member name written twice in one object (I-JSON, RFC 7493: JSON.parse keeps the last silently, so
 *   `{"owner": "a", "owner": "b"}` would act for b). The caller checks the value for key-shaped text first,
 *   so a name echoed here is never a key.
 */
import { isUtf8 } from 'node:buffer';
import { errorMessage } from '../../store/errors.js';
import type { FieldProblem } from '../errors.js';
import { BOUNDS } from '../validate.js';

/**
 * What a body holds: the value read (`twice`: the first member name written twice in one object, refused once
 * the caller has checked the value for key-shaped text), or the first problem.
 */
export type ReadBody = { ok: true; value: unknown; twice?: string } | { ok: false; problem: FieldProblem };

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** A place in the scan: the object or array open there, the name it is the value of (objects: names seen). */
interface Open {
  names: Set<string> | undefined;
  path: string;
}

/** The end (index of the closing quote) of the string whose opening quote is at `start`; the text's length if cut. */
function stringEnd(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
  return i;
}

/** The index of the first character at or after `from` that is not JSON whitespace. */
function nextSignificant(text: string, from: number): number {
  let i = from;
  while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  return i;
}

const join = (path: string, name: string) => (path ? `${path}.${name}` : name);

function decodeName(token: string): string | undefined {
  try {
    return JSON.parse(token) as string;
  } catch {
    return undefined;
  }
}

/**
 * One pass over the text, no recursion: whether it nests deeper than `depth`, and the first member name that
 * an object holds twice (meaningful only once the text is known to be JSON), as `limits.minute`.
 */
function scanJson(text: string, depth: number): { tooDeep: boolean; twice: string | undefined } {
  const open: Open[] = [];
  let name: string | undefined;
  let twice: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      const top = open[open.length - 1];
      if (top?.names && text[nextSignificant(text, end + 1)] === ':') {
        const decoded = decodeName(text.slice(i, end + 1));
        if (decoded !== undefined && top.names.has(decoded) && twice === undefined) {
          twice = join(top.path, decoded);
        }
        if (decoded !== undefined) top.names.add(decoded);
        name = decoded;
      }
      i = end;
    } else if (c === '{' || c === '[') {
      // Named as keyShapedField names a field: an object's member by its dotted path, an array's by the array's.
      const parent = open[open.length - 1];
      const path = parent?.names ? join(parent.path, name ?? '') : (parent?.path ?? '');
      open.push({ names: c === '{' ? new Set() : undefined, path });
      if (open.length > depth) return { tooDeep: true, twice };
    } else if (c === '}' || c === ']') {
      open.pop();
    }
  }
  return { tooDeep: false, twice };
}

/**
 * Read a body (not empty) as JSON, or say why it cannot be used.
 * @example readJsonBody(Buffer.from('{"owner":"u1"}')) // → { ok: true, value: { owner: 'u1' } }
 */
export function readJsonBody(bytes: Buffer): ReadBody {
  const refuse = (problem: string, field = 'body'): ReadBody => ({ ok: false, problem: { field, problem } });
  if (bytes.subarray(0, 3).equals(BOM)) {
    return refuse('starts with a byte-order mark (U+FEFF): send the JSON as UTF-8 without it');
  }
  // ASCII in UTF-16 or UTF-32 is valid UTF-8 with NULs between; JSON never holds a raw NUL.
  if (!isUtf8(bytes) || bytes.includes(0)) {
    return refuse('is not UTF-8 text (UTF-16, Latin-1 or cut bytes?): send the JSON encoded as UTF-8');
  }
  const text = bytes.toString('utf8');
  const scanned = scanJson(text, BOUNDS.bodyDepth);
  if (scanned.tooDeep) {
    return refuse(
      `nests objects and arrays deeper than ${BOUNDS.bodyDepth} levels: the API's bodies are objects of fields, limits one level inside`,
    );
  }
  try {
    const value: unknown = JSON.parse(text);
    return { ok: true, value, ...(scanned.twice !== undefined && { twice: scanned.twice }) };
  } catch (error) {
    const at = /position (\d+)/.exec(errorMessage(error))?.[1];
    return refuse(
      `is not valid JSON${at === undefined ? '' : ` (it stops making sense at character ${Number(at) + 1})`}`,
    );
  }
}

/** The problem of a name written twice, once the value was checked for key-shaped text. */
export const writtenTwice = (name: string): FieldProblem => ({
  field: name,
  problem: 'is written twice in one object: send each field once (JSON readers disagree on which one counts)',
});
