/**
 * Helping a caller who mistyped: the defined name a parameter name (or a `sort` value) was probably meant to
 * be, and a safe way to echo what they sent. Pure; used by `plan.ts` to word its 400 messages.
 */

/** Echoed names are cut to this many characters: a message must never carry unbounded input. */
export const ECHO_MAX_CHARACTERS = 40;

/**
 * `name` quoted for a message: cut to {@link ECHO_MAX_CHARACTERS} (then `…`), anything but printable ASCII
 * (and the backquote and backslash that would confuse the quoting) as `\uXXXX` or `\u{XXXXX}`. `undefined` when the name
 * holds an API key: a key is never echoed (docs/api.md#parameters).
 * @example echoName('Limit') // → '`Limit`'
 * @example echoName('a\nb') // → '`a\\u000ab`'
 * @example echoName(`pk_live_${'A'.repeat(22)}`) === undefined
 */
export function echoName(name: string): string | undefined {
  if (/pk_live_/i.test(name)) return undefined;
  const characters = [...name];
  const cut = characters.slice(0, ECHO_MAX_CHARACTERS).map((character) => {
    const code = character.codePointAt(0)!;
    return code >= 0x20 && code <= 0x7e && character !== '`' && character !== '\\'
      ? character
      : code > 0xffff
        ? `\\u{${code.toString(16)}}`
        : `\\u${code.toString(16).padStart(4, '0')}`;
  });
  return `\`${cut.join('')}${characters.length > ECHO_MAX_CHARACTERS ? '…' : ''}\``;
}

/**
 * True when `a` becomes `b` by at most one insertion, deletion, substitution or swap of two neighbours.
 * @example withinOneEdit('limt', 'limit') === true
 * @example withinOneEdit('lmiit', 'limit') === true // a swap
 * @example withinOneEdit('offset', 'limit') === false
 */
export function withinOneEdit(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.abs(a.length - b.length) > 1) return false;
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  const restA = a.slice(start);
  const restB = b.slice(start);
  return (
    restA.slice(1) === restB.slice(1) || // substitution
    restA.slice(1) === restB || // deletion from a
    restA === restB.slice(1) || // insertion into a
    (restA.length > 1 && restA[0] === restB[1] && restA[1] === restB[0] && restA.slice(2) === restB.slice(2))
  );
}

export interface Suggestion {
  /** The defined names meant, in their defined order. */
  names: string[];
  /** The input differs from them in letter case (names and values are case-sensitive). */
  caseSensitive: boolean;
}

/**
 * The defined names `input` differs from only by letter case or by one edit, if any.
 * @example suggest('Limit', ['limit', 'cursor', 'sort']) // → { names: ['limit'], caseSensitive: true }
 * @example suggest('limt', ['limit', 'cursor', 'sort']) // → { names: ['limit'], caseSensitive: false }
 * @example suggest('offset', ['limit', 'cursor', 'sort']) === undefined
 */
export function suggest(input: string, defined: readonly string[]): Suggestion | undefined {
  const lower = input.toLowerCase();
  const sameButCase = defined.filter((name) => name !== input && name.toLowerCase() === lower);
  if (sameButCase.length > 0) return { names: sameButCase, caseSensitive: true };
  const near = defined.filter((name) => name !== input && withinOneEdit(lower, name.toLowerCase()));
  return near.length > 0 ? { names: near, caseSensitive: lower !== input } : undefined;
}

/**
 * The end of a message for a suggestion: `; did you mean \`limit\`?`, with the case note when it applies.
 * @example didYouMean({ names: ['limit'], caseSensitive: true }, 'parameter names')
 *   // → '; parameter names are case-sensitive: did you mean `limit`?'
 */
export function didYouMean(suggestion: Suggestion, what: string): string {
  const names = suggestion.names.map((name) => `\`${name}\``).join(' or ');
  return `; ${suggestion.caseSensitive ? `${what} are case-sensitive: ` : ''}did you mean ${names}?`;
}
