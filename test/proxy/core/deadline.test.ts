import { describe, expect, it } from 'vitest';
import { callWithDeadline } from '../../../proxy/core/deadline.js';
import { DependencyError } from '../../../store/errors.js';
import { lateSettlements } from '../../helpers/late.js';

describe('callWithDeadline', () => {
  it('passes values through', async () => {
    await expect(callWithDeadline('keys', 100, async () => 7)).resolves.toBe(7);
  });

  it('stops waiting at the deadline even when the call ignores its signal', async () => {
    const started = Date.now();
    const late = lateSettlements();
    await expect(callWithDeadline('objects', 30, () => late.resolve(300, 1))).rejects.toMatchObject({
      name: 'DependencyError',
      dependency: 'objects',
    });
    expect(Date.now() - started).toBeLessThan(250);
    expect(await late.settled()).toEqual([]); // the late resolution is dropped quietly
  });

  it('aborts the signal at the deadline', async () => {
    let signal: AbortSignal | undefined;
    await expect(
      callWithDeadline('quota', 20, (s) => {
        signal = s;
        return new Promise(() => {});
      }),
    ).rejects.toBeInstanceOf(DependencyError);
    expect(signal?.aborted).toBe(true);
  });

  it('a rejection after the deadline is never unhandled', async () => {
    const late = lateSettlements();
    await expect(callWithDeadline('keys', 10, () => late.reject(60))).rejects.toMatchObject({
      dependency: 'keys',
    });
    expect(await late.settled()).toEqual([]);
  });

  it.each([
    ['a plain error', () => Promise.reject(new Error('boom'))],
    [
      'a synchronous throw',
      () => {
        throw new TypeError('bug');
      },
    ],
    ['another dependency', () => Promise.reject(new DependencyError('objects', 'x'))],
  ])('names the dependency for %s', async (_, call) => {
    await expect(callWithDeadline('keys', 100, call as () => Promise<never>)).rejects.toMatchObject({
      dependency: 'keys',
    });
  });
});
