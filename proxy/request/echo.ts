/**
 * A safe way to echo what a caller sent in a 400 message. Pure; used by `plan.ts`, which words what the caller
 * probably meant by the one did-you-mean rule set (cli/suggest.ts).
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
