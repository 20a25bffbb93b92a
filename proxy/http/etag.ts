/** ETags: `If-None-Match` evaluation (RFC 9110 §13.1.2: lists, `*`, weak comparison) and the strong tags themselves. */
import { digest128 } from '../../store/layout.js';

const ENTITY_TAG = /^(?:W\/)?("[\x21\x23-\x7e\x80-\xff]*")$/;

/**
 * Whether an `If-None-Match` header value matches the current strong ETag `etag` (so a GET or HEAD gets
 * 304). Weak comparison: `W/"x"` matches `"x"`. `*` matches any current representation. A malformed member
 * of the list never matches, and a malformed header matches nothing.
 * @example ifNoneMatchMatches('"a", W/"b"', '"b"') === true
 * @example ifNoneMatchMatches('*', '"b"') === true
 * @example ifNoneMatchMatches('b', '"b"') === false
 */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  return ifNoneMatchSelects(header, [etag]) !== undefined;
}

/**
 * Which of the current strong ETags `etags` an `If-None-Match` header names: the first member of the header
 * (in the header's order) that is one of them, by weak comparison; `*` selects `etags[0]`, so callers put
 * first the tag a 200 would carry. `undefined` when none matches (or the header is absent or malformed).
 * One resource has several current tags when it has several representations (one per content coding).
 * @example ifNoneMatchSelects('"x", W/"b-gz"', ['"b"', '"b-gz"']) === '"b-gz"'
 * @example ifNoneMatchSelects('*', ['"b-br"', '"b"']) === '"b-br"'
 */
export function ifNoneMatchSelects(header: string | undefined, etags: readonly string[]): string | undefined {
  if (header === undefined || etags.length === 0) return undefined;
  const value = header.trim();
  if (value === '*') return etags[0];
  for (const member of splitEntityTags(value)) {
    const match = ENTITY_TAG.exec(member);
    if (match && etags.includes(match[1]!)) return match[1];
  }
  return undefined;
}

/** Split a list of entity tags on the commas between them (an opaque tag may itself contain commas). */
function splitEntityTags(value: string): string[] {
  const members: string[] = [];
  let current = '';
  let quoted = false;
  for (const char of value) {
    if (char === '"') quoted = !quoted;
    if (char === ',' && !quoted) {
      members.push(current.trim());
      current = '';
    } else {
      current += char;
    }
  }
  members.push(current.trim());
  return members.filter((member) => member !== '');
}

// ETags: strong, and they change exactly when the bytes of the representation change.

/**
 * ETag of a representation that is not pinned by a cursor (a first page, a detail, an empty list): a hash of
 * its bytes, so a consumer keeps its 304s across publishes that leave those bytes alone — also for sparse
 * views (`fields`, partial `include`) whose unselected fragments changed.
 */
export function etagOfBytes(bytes: Uint8Array): string {
  return `"${digest128(bytes)}"`;
}

/**
 * ETag of a cursor page: a hash of what selects its bytes (the pinned immutable object, offset, limit, fragment
 * mask, the variant and the cursor secret's fingerprint). The bytes of a cursor's URL never change, so this is
 * a strong validator, and it is known without reading the object: a 304 for a cursor page costs no read.
 */
export function etagFor(parts: readonly (string | number)[]): string {
  return `"${digest128(parts.join('\u0000'))}"`;
}
