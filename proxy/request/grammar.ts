/** Value grammars of docs/api.md#parameters: canonical decimal integers within the safe-integer range. */

const POSITIVE = /^[1-9][0-9]*$/;
const NONNEGATIVE = /^(?:0|[1-9][0-9]*)$/;

/**
 * A positive integer in canonical decimal form, or `undefined`.
 * @example parsePositiveInteger('42') === 42
 * @example parsePositiveInteger('042') === undefined // no leading zeros
 * @example parsePositiveInteger('0') === undefined
 * @example parsePositiveInteger('9007199254740992') === undefined // beyond Number.MAX_SAFE_INTEGER
 */
export function parsePositiveInteger(text: string): number | undefined {
  return POSITIVE.test(text) ? safe(text) : undefined;
}

/**
 * A nonnegative integer in canonical decimal form, or `undefined`.
 * @example parseNonnegativeInteger('0') === 0
 * @example parseNonnegativeInteger('00') === undefined
 * @example parseNonnegativeInteger('-1') === undefined
 */
export function parseNonnegativeInteger(text: string): number | undefined {
  return NONNEGATIVE.test(text) ? safe(text) : undefined;
}

function safe(text: string): number | undefined {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * A comma-separated set of names from `allowed`, or `undefined` when a member is empty or not allowed.
 * Order and repeats do not matter: the result is in `allowed` order, without repeats.
 * @example parseNameSet('tags,ins,tags', ['ins', 'outs', 'tags']) // → ['ins', 'tags']
 * @example parseNameSet('ins,', ['ins', 'outs']) === undefined
 */
export function parseNameSet<T extends string>(text: string, allowed: readonly T[]): T[] | undefined {
  const members = new Set(text.split(','));
  if (![...members].every((member) => (allowed as readonly string[]).includes(member))) return undefined;
  return allowed.filter((name) => members.has(name));
}
