/**
 * admin/http/body.ts: a body read as the admin API uses it, or the reason it cannot be. Pure: any bytes give
 * an outcome (never a throw, whatever the nesting), JSON within the bound reads as JSON.parse reads it, and a
 * member name written twice is found where it is, however it is escaped. The handler's answers to bodies are
 * fuzzed in handler.bodies.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readJsonBody, writtenTwice } from '../../../admin/http/body.js';
import { BOUNDS } from '../../../admin/validate.js';

const read = (text: string) => readJsonBody(Buffer.from(text, 'utf8'));

describe('readJsonBody', () => {
  it('reads any bytes to an outcome, never a throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2_000 }), (bytes) => {
        const outcome = readJsonBody(Buffer.from(bytes));
        expect(typeof outcome.ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  it('reads JSON within the bound as JSON.parse does, and finds no name written twice in it', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: BOUNDS.bodyDepth - 1 }), (value) => {
        const text = JSON.stringify(value);
        expect(read(text)).toEqual({ ok: true, value: JSON.parse(text) });
      }),
      { numRuns: 300 },
    );
  });

  it('finds a name written twice at any place, escaped or not', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('limits', 'a', 'é"', 'x.y'), { maxLength: 4 }),
        fc.string({ maxLength: 5 }),
        fc.boolean(),
        (path, name, escaped) => {
          const second = escaped
            ? JSON.stringify(name).replace(/[a-z]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)
            : JSON.stringify(name);
          let text = `{${JSON.stringify(name)}:1,"other":[1,{${JSON.stringify(`${name}x`)}:2}],${second}:2}`;
          for (const outer of [...path].reverse())
            text = `{"before":{${JSON.stringify(name)}:0},${JSON.stringify(outer)}:${text}}`;
          const outcome = read(text);
          expect(outcome).toMatchObject({ ok: true, twice: [...path, name].join('.') });
        },
      ),
      { numRuns: 300 },
    );
  });

  it.each([
    [`${'['.repeat(BOUNDS.bodyDepth)}${']'.repeat(BOUNDS.bodyDepth)}`, true],
    [`${'['.repeat(BOUNDS.bodyDepth + 1)}${']'.repeat(BOUNDS.bodyDepth + 1)}`, false],
    [`{"a":"${'['.repeat(100)}"}`, true],
    [`${'{"a":'.repeat(200_000)}`, false],
  ])('bounds nesting, outside strings only: %#', (text, ok) => {
    expect(read(text).ok).toBe(ok);
  });

  it.each([
    [Buffer.from([0x7b, 0xff, 0x7d]), 'is not UTF-8 text'],
    [Buffer.from('{"a":1}', 'utf16le'), 'is not UTF-8 text'],
    [Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), 'starts with a byte-order mark'],
    [Buffer.from('{"a":1'), 'is not valid JSON'],
  ])('refuses %s: %s', (bytes, says) => {
    const outcome = readJsonBody(bytes);
    expect(outcome.ok).toBe(false);
    expect(!outcome.ok && outcome.problem).toMatchObject({
      field: 'body',
      problem: expect.stringContaining(says),
    });
  });

  it('names the field written twice in its problem', () => {
    expect(writtenTwice('limits.minute')).toEqual({
      field: 'limits.minute',
      problem: expect.stringContaining('send each field once'),
    });
  });
});
