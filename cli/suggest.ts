/** "Did you mean …?" for a mistyped command, option or snapshot field: one rule for both CLIs and the builder. */
import { closestMatch } from 'leven';

/**
 * "; did you mean X?" when one of `candidates` is close enough to a mistyped `input` to be what was meant (two
 * edits, a swap of neighbours included, or a third of its letters for long words; one for words of up to
 * three letters), else ''. Edit distance from `leven`.
 * @example didYouMean('biuld', ['build', 'repair']) // → '; did you mean build?'
 */
export function didYouMean(
  input: string,
  candidates: readonly string[],
  format = (match: string) => match,
): string {
  const maxDistance = input.length <= 3 ? 1 : Math.max(2, Math.floor(input.length / 3));
  const match = closestMatch(input, candidates, { maxDistance });
  return match === undefined ? '' : `; did you mean ${format(match)}?`;
}
