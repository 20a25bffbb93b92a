/**
 * Thrown values as text, written once for every side: the message of anything thrown, and the name-and-message
 * line the logs carry.
 */
import { describe, expect, it } from 'vitest';
import { DependencyError, errorMessage, errorText } from '../../store/errors.js';

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
