/**
 * The printable-text rule: what text the product publishes or stores for people to read — a snapshot's names,
 * descriptions and colours (builder/snapshot/validate.ts) and a key's label (admin/validate.ts) — may hold. One
 * rule for both, here, because both end up in the same places: an API answer shown in someone's user area, a
 * terminal, a log line. Text passes when it prints as itself and shows something:
 * - no character that does not print as itself ({@link UNPRINTABLE}): controls (NUL, tab, newline, escape…),
 *   format characters (zero-width spaces and joiners, bidirectional overrides and isolates such as U+202E, the
 *   byte-order mark, tags), lone surrogates, private-use characters (their look depends on a font), unassigned
 *   code points and noncharacters, line and paragraph separators. A description may hold line breaks (`\n`)
 *   when its caller says so: prose has paragraphs, and JSON carries a line break escaped, never raw;
 * - no blank that is not a space ({@link BLANKS}): the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the
 *   Khmer inherent vowels U+17B4 and U+17B5 (which Unicode says not to use) and the braille blank U+2800 print
 *   as nothing, yet are letters or symbols that no trimming removes: text made of them looks empty;
 * - at least one visible character: something other than spaces and combining marks;
 * - combining marks only on a character, at most {@link MAX_MARKS} in a row: no writing system stacks more than
 *   about five on one letter (Vietnamese two, pointed Hebrew with cantillation four or five); longer runs
 *   ("Zalgo" text) are drawn over the lines above and below.
 * Pure, no dependency: `builder/` and `admin/` both import it (store/ is what every side may import).
 */

/**
 * Characters that never print as themselves: every "other" (`\p{C}`: Cc controls, Cf format characters, Cs
 * surrogates, Co private use, Cn unassigned and noncharacters), the line separator and the paragraph
 * separator. To a `u` regular expression a lone surrogate is a code point of its own (Cs); a pair is the
 * character it encodes.
 */
export const UNPRINTABLE = /[\p{C}\p{Zl}\p{Zp}]/u;

/** Blanks that are not spaces: fillers and the braille blank, which print as nothing. */
export const BLANKS = /[\u115f\u1160\u3164\uffa0\u17b4\u17b5\u2800]/u;

/** The most combining marks one character may carry. */
export const MAX_MARKS = 8;

export interface TextRuleOptions {
  /** Line breaks (`\n`, U+000A) are allowed: prose with paragraphs (a module's description). */
  lineBreaks?: boolean;
}

/** How a code point is named in a message: `U+202E`. */
export const codePointName = (code: number) => `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;

/** What kind of unprintable character `character` is, for a message. */
function unprintableKind(character: string): string {
  if (/\p{Cc}/u.test(character)) return 'a control character';
  if (/\p{Cf}/u.test(character)) {
    return 'an invisible format character (zero-width, bidirectional or other format control)';
  }
  if (/\p{Cs}/u.test(character)) return 'a lone surrogate (half of a UTF-16 pair, which no text can hold)';
  if (/\p{Co}/u.test(character)) return 'a private-use character (how it looks depends on a font)';
  if (/\p{Cn}/u.test(character)) return 'an unassigned code point or a noncharacter';
  return 'a line or paragraph separator';
}

const MARK = /\p{M}/u;
const SPACE = /\p{White_Space}/u;
/**
 * Text that needs no closer look: printable ASCII with something visible (most of a catalogue: one test), or
 * text with nothing the rule speaks of and something visible.
 */
const VISIBLE_ASCII = /^ *[\x21-\x7e][\x20-\x7e]*$/;
const NEEDS_A_LOOK = /[\p{C}\p{Zl}\p{Zp}\p{M}\u115f\u1160\u3164\uffa0\u17b4\u17b5\u2800]/u;
const VISIBLE = /[^\p{White_Space}]/u;

/**
 * Why `text` is not printable text by the rule above, or undefined when it is. The reason names the first
 * offending character by code point and position (1-based, in characters) and says what to do.
 * @example textProblem('Acme') // → undefined
 * @example textProblem('Acme\u202Eppa') // → 'holds U+202E at character 5, an invisible format character (zero-width, bidirectional or other format control): remove it'
 * @example textProblem('\u3164') // → 'holds U+3164 at character 1, a blank that prints as nothing but is not a space: remove it'
 */
export function textProblem(text: string, options: TextRuleOptions = {}): string | undefined {
  if (VISIBLE_ASCII.test(text) || (!NEEDS_A_LOOK.test(text) && VISIBLE.test(text))) return undefined;
  let position = 0;
  let marks = 0;
  let visible = false;
  for (const character of text) {
    position++;
    const code = character.codePointAt(0)!;
    if (UNPRINTABLE.test(character) && !(options.lineBreaks && code === 0x0a)) {
      return `holds ${codePointName(code)} at character ${position}, ${unprintableKind(character)}: remove it`;
    }
    if (BLANKS.test(character)) {
      return `holds ${codePointName(code)} at character ${position}, a blank that prints as nothing but is not a space: remove it`;
    }
    if (!MARK.test(character)) {
      marks = 0;
      if (!SPACE.test(character)) visible = true;
      continue;
    }
    if (position === 1) {
      return `starts with the combining mark ${codePointName(code)}, which has no character to combine with: remove it`;
    }
    if (++marks > MAX_MARKS) {
      return `holds more than ${MAX_MARKS} combining marks in a row at character ${position - MAX_MARKS}: no letter carries so many; remove them`;
    }
  }
  if (!visible) {
    return text.trim() === ''
      ? 'is empty or blank: write some text'
      : 'holds no visible character (only spaces and combining marks): write some text';
  }
  return undefined;
}
