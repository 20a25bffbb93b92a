/**
 * The printable-text rule (store/text.ts) that a snapshot's names and descriptions and a key's label follow:
 * what it refuses and why (each reason names the code point and where it is), what it takes — the world's
 * scripts, accents, emoji with their variation selectors, a description's line breaks — and that its quick path
 * agrees with the character-by-character one for any text (property-based).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_MARKS, textProblem } from '../../store/text.js';

describe('the printable-text rule', () => {
  it.each([
    [
      'a right-to-left override',
      'Acme \u202eppa',
      'holds U+202E at character 6, an invisible format character (zero-width, bidirectional or other format control): remove it',
    ],
    [
      'a zero-width space',
      'A\u200bB',
      'holds U+200B at character 2, an invisible format character (zero-width, bidirectional or other format control): remove it',
    ],
    [
      'a byte-order mark',
      '\ufeffAcme',
      'holds U+FEFF at character 1, an invisible format character (zero-width, bidirectional or other format control): remove it',
    ],
    ['NUL', 'Acme\u0000', 'holds U+0000 at character 5, a control character: remove it'],
    ['a tab', 'A\tB', 'holds U+0009 at character 2, a control character: remove it'],
    ['a line break', 'A\nB', 'holds U+000A at character 2, a control character: remove it'],
    ['a line separator', 'A\u2028B', 'holds U+2028 at character 2, a line or paragraph separator: remove it'],
    [
      'a lone surrogate',
      'A\ud800B',
      'holds U+D800 at character 2, a lone surrogate (half of a UTF-16 pair, which no text can hold): remove it',
    ],
    [
      'a private-use character',
      'A\ue000',
      'holds U+E000 at character 2, a private-use character (how it looks depends on a font): remove it',
    ],
    [
      'a noncharacter',
      'A\uffff',
      'holds U+FFFF at character 2, an unassigned code point or a noncharacter: remove it',
    ],
    [
      'Hangul fillers only',
      '\u3164\u3164',
      'holds U+3164 at character 1, a blank that prints as nothing but is not a space: remove it',
    ],
    [
      'a Hangul choseong filler',
      '\u115f',
      'holds U+115F at character 1, a blank that prints as nothing but is not a space: remove it',
    ],
    [
      'a braille blank',
      '\u2800',
      'holds U+2800 at character 1, a blank that prints as nothing but is not a space: remove it',
    ],
    [
      'a filler after a name',
      'Acme\uffa0',
      'holds U+FFA0 at character 5, a blank that prints as nothing but is not a space: remove it',
    ],
    [
      '99 combining marks',
      '\u0301'.repeat(99),
      'starts with the combining mark U+0301, which has no character to combine with: remove it',
    ],
    [
      'a letter under 99 combining marks',
      `a${'\u0301'.repeat(99)}`,
      `holds more than ${MAX_MARKS} combining marks in a row at character 2: no letter carries so many; remove them`,
    ],
    [
      'spaces and a mark',
      ' \u0301 ',
      'holds no visible character (only spaces and combining marks): write some text',
    ],
    ['nothing', '', 'is empty or blank: write some text'],
    ['spaces', ' \u3000 ', 'is empty or blank: write some text'],
  ])('refuses %s', (_, text, reason) => {
    expect(textProblem(text)).toBe(reason);
  });

  it.each([
    'Doepfer A-100',
    'Döpfer',
    'Tiếng Việt',
    'שָׁלוֹם',
    'Москва',
    '東京',
    'नमस्ते',
    'ไทย',
    '❤️ love',
    '1️⃣',
    '👍🏽',
    `a${'\u0301'.repeat(MAX_MARKS)}`,
    'a\u00a0b',
  ])('takes %s', (text) => {
    expect(textProblem(text)).toBeUndefined();
  });

  it('takes line breaks only where the caller says (a description)', () => {
    expect(textProblem('First paragraph.\nSecond.', { lineBreaks: true })).toBeUndefined();
    expect(textProblem('First\r\nSecond', { lineBreaks: true })).toMatch(/^holds U\+000D at character 6/);
    expect(textProblem('\n\n', { lineBreaks: true })).toBe('is empty or blank: write some text');
  });

  it('the quick path and the full one agree on any text', () => {
    const unit = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 3 }),
      fc.constantFrom('a', ' ', '\u0301', '\u3164', '\u2800', '\u202e', '\n', '\ud800', '😀', '\ufe0f', 'é'),
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 20 }), (units) => {
        const text = units.join('');
        const reason = textProblem(text);
        // The full walk on its own: the text with a character the quick path never lets through appended.
        const walked = textProblem(`${text}\u0000`);
        if (reason === undefined)
          expect(walked).toBe(
            `holds U+0000 at character ${[...text].length + 1}, a control character: remove it`,
          );
        else if (!reason.startsWith('holds no visible') && !reason.startsWith('is empty'))
          expect(walked).toBe(reason);
      }),
      { numRuns: 2_000 },
    );
  });
});
