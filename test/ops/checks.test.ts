/** How a check reads a request without an answer, and a deadline on work that does not end by itself. */
import { describe, expect, it } from 'vitest';
import { CheckFailure, noAnswer, timed, withinDeadline } from '../../ops/checks.js';

describe('noAnswer', () => {
  it('says refused, timed out, or the code and message of the cause', () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
    });
    expect(noAnswer(refused)).toBe('connection refused (is it running?)');
    expect(noAnswer(new DOMException('The operation was aborted due to timeout', 'TimeoutError'))).toBe(
      'no answer in time',
    );
    const reset = new TypeError('fetch failed', {
      cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    });
    expect(noAnswer(reset)).toBe('ECONNRESET: fetch failed');
    expect(noAnswer(new Error('AccessDenied'))).toBe('AccessDenied');
  });
});

describe('withinDeadline', () => {
  it('settles with the work, or fails "no answer in time" at the deadline and releases what it holds', async () => {
    let released = 0;
    await expect(withinDeadline(Promise.resolve(7), Date.now() + 1000, () => released++)).resolves.toBe(7);
    await expect(withinDeadline(new Promise(() => {}), Date.now() + 20, () => released++)).rejects.toThrow(
      new CheckFailure('no answer in time'),
    );
    expect(released).toBe(1);
  });
});

describe('timed', () => {
  it('is a pass with what was seen, a skip with why, or a failure with the error', async () => {
    expect(await timed('/docs', async () => 'seen')).toMatchObject({
      name: '/docs',
      verdict: 'pass',
      detail: 'seen',
    });
    expect(await timed('/docs', async () => ({ skip: 'why' }))).toMatchObject({
      verdict: 'skip',
      detail: 'why',
    });
    expect(
      await timed('/docs', async () => {
        throw new CheckFailure('wrong');
      }),
    ).toMatchObject({ verdict: 'fail', detail: 'wrong' });
  });
});
