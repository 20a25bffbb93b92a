/** `If-None-Match` evaluation (RFC 9110 §13.1.2): lists, `*`, and weak comparison. */

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
  if (header === undefined) return false;
  const value = header.trim();
  if (value === '*') return true;
  for (const member of splitEntityTags(value)) {
    const match = ENTITY_TAG.exec(member);
    if (match && match[1] === etag) return true;
  }
  return false;
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
