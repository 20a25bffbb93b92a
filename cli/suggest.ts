/**
 * "Did you mean …?" for every mistyped name: a CLI's commands and options, a snapshot's fields (the builder),
 * the API's parameter names and sort values (proxy/request/plan.ts). One module, one phrase; two rules of closeness, because the callers differ: a person at a command line gets the one
 * closest name within a few edits, the API names every defined name that differs by letter case only or by
 * one edit, as docs/api.md#parameters promises. Pure: no side, only `leven`.
 */
import { closestMatch } from 'leven';

/**
 * The end of a message naming what was meant: `; did you mean X?` (`X or Y` for several), each name as
 * `format` words it, after an optional note; '' when nothing was meant.
 * @example meantPhrase(['build']) // → '; did you mean build?'
 * @example meantPhrase(['tag', 'tab'], (name) => `\`${name}\``) // → '; did you mean `tag` or `tab`?'
 */
export function meantPhrase(names: readonly string[], format = (name: string) => name, note = ''): string {
  return names.length === 0 ? '' : `; ${note}did you mean ${names.map(format).join(' or ')}?`;
}

/**
 * A command line's rule: "; did you mean X?" when one of `candidates` is close enough to a mistyped `input` to
 * be what was meant (two edits, a swap of neighbours included, or a third of its letters for long words; one
 * for words of up to three letters), else ''.
 * @example didYouMean('biuld', ['build', 'repair']) // → '; did you mean build?'
 */
export function didYouMean(
  input: string,
  candidates: readonly string[],
  format = (match: string) => match,
): string {
  const maxDistance = input.length <= 3 ? 1 : Math.max(2, Math.floor(input.length / 3));
  const match = closestMatch(input, candidates, { maxDistance });
  return meantPhrase(match === undefined ? [] : [match], format);
}

/**
 * True when `a` becomes `b` by at most one insertion, deletion, substitution or swap of two neighbours. A direct
 * comparison rather than `leven`: the proxy's bundle holds no package but the signer and the LRU
 * (test/infra/stack.test.ts), and `leven`, free of side effects, is left out of it as long as only this rule uses
 * nothing of it.
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
 * The API's rule: the defined names `input` differs from only by letter case, else by one edit, if any.
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
 * The API's words for a suggestion: `; did you mean \`limit\`?`, with the case note when it applies.
 * @example suggestionText({ names: ['limit'], caseSensitive: true }, 'parameter names')
 *   // → '; parameter names are case-sensitive: did you mean `limit`?'
 */
export function suggestionText(suggestion: Suggestion, what: string): string {
  const note = suggestion.caseSensitive ? `${what} are case-sensitive: ` : '';
  return meantPhrase(suggestion.names, (name) => `\`${name}\``, note);
}
