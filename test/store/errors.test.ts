/**
 * Thrown values as text, written once for every side: the message of anything thrown, and the name-and-message
 * line the logs carry.
 */
import { describe, expect, it } from 'vitest';
import { DependencyError, errorMessage, errorText, errorWithCause } from '../../store/errors.js';

describe('errorMessage', () => {
  it.each([
    [new Error('no such bucket'), 'no such bucket'],
    [new DependencyError('objects', 'S3 timed out'), 'S3 timed out'],
    ['timed out', 'timed out'],
    [{ message: 'an SDK shape' }, 'an SDK shape'],
    [{ message: 42 }, '[object Object]'],
    [null, 'null'],
    [undefined, 'undefined'],
    [7, '7'],
  ])('%o → %s', (thrown, text) => {
    expect(errorMessage(thrown)).toBe(text);
  });
});

describe('errorText', () => {
  it.each([
    [new TypeError('x is not a function'), 'TypeError: x is not a function'],
    [new DependencyError('quota', 'throttled'), 'DependencyError: throttled'],
    ['plain', 'plain'],
    [{ message: 'not an Error' }, '[object Object]'],
  ])('%o → %s', (thrown, text) => {
    expect(errorText(thrown)).toBe(text);
  });
});

describe('errorWithCause', () => {
  it("adds the cause's message when there is one", () => {
    const error = new Error('put o/x failed', { cause: new Error('ECONNRESET') });
    expect(errorWithCause(error)).toBe('put o/x failed (ECONNRESET)');
  });

  it('is the message alone without a cause, with a cause that has no message, and for what is not an error', () => {
    expect(errorWithCause(new Error('no such bucket'))).toBe('no such bucket');
    expect(errorWithCause(new Error('x', { cause: 'a string' }))).toBe('x');
    expect(errorWithCause(new Error('x', { cause: new Error('') }))).toBe('x');
    expect(errorWithCause('timed out')).toBe('timed out');
    expect(errorWithCause(null)).toBe('null');
  });
});
