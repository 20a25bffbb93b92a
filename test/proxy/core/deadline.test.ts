import { describe, expect, it } from 'vitest';
import { callWithDeadline } from '../../../proxy/core/deadline.js';
import { DependencyError } from '../../../store/errors.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('callWithDeadline', () => {
  it('passes values through', async () => {
    await expect(callWithDeadline('keys', 100, async () => 7)).resolves.toBe(7);
  });

  it('stops waiting at the deadline even when the call ignores its signal', async () => {
    const started = Date.now();
    const slow = () => new Promise<number>((resolve) => setTimeout(() => resolve(1), 300));
    await expect(callWithDeadline('objects', 30, slow)).rejects.toMatchObject({
      name: 'DependencyError',
      dependency: 'objects',
    });
    expect(Date.now() - started).toBeLessThan(250);
    await sleep(300); // the late resolution is dropped quietly
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
    const late = () => new Promise<never>((_, reject) => setTimeout(() => reject(new Error('late')), 60));
    await expect(callWithDeadline('keys', 10, late)).rejects.toMatchObject({ dependency: 'keys' });
    await sleep(100); // vitest fails the run on an unhandled rejection
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
