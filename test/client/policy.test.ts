/** The retry policy's pure parts, and the client's query strings. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { queryOf } from '../../client/client.js';
import { rateLimitOf } from '../../client/responses.js';
import { BACKOFF, backoffDelay, parseRetryAfter, retryDelay, sleep } from '../../client/retry.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-10-21T07:27:58.500Z');
  it.each([
    ['17', 17],
    [' 0 ', 0],
    ['Wed, 21 Oct 2026 07:28:00 GMT', 2], // 1.5 s away, rounded up: never less than asked
    ['Wed, 21 Oct 2026 07:00:00 GMT', 0], // in the past
    ['-1', undefined],
    ['1.5', undefined],
    ['soon', undefined],
    [null, undefined],
  ])('%j → %j', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('backoffDelay', () => {
  it('is full jitter under a doubling ceiling, capped', () => {
    const ceilings = [0, 1, 2, 3, 4, 5, 10].map((attempt) => backoffDelay(attempt, () => 0.999_999));
    expect(ceilings).toEqual([499, 999, 1999, 3999, 7999, 7999, 7999]);
    expect(backoffDelay(3, () => 0)).toBe(0);
    expect(BACKOFF).toEqual({ baseMs: 500, capMs: 8000 });
  });
});

describe('retryDelay', () => {
  it('is Retry-After (never less) plus a full jitter under the doubling, capped ceiling; nothing past maxRetryAfter', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(0, 429, 502, 503, 504),
        fc.option(fc.integer({ min: 0, max: 120 }), { nil: undefined }),
        fc.integer({ min: 0, max: 20 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.integer({ min: 1, max: 90 }),
        (status, retryAfter, attempt, draw, maxRetryAfter) => {
          const wait = retryDelay({ status, retryAfter }, attempt, () => draw, maxRetryAfter);
          if (retryAfter !== undefined && retryAfter > maxRetryAfter) return wait === undefined;
          const floor = retryAfter !== undefined ? retryAfter * 1000 : status === 429 ? 1000 : 0;
          const ceiling = Math.min(BACKOFF.capMs, BACKOFF.baseMs * 2 ** attempt);
          return wait !== undefined && wait >= floor && wait < floor + ceiling && Number.isInteger(wait);
        },
      ),
    );
  });

  it.each([
    [{ status: 429, retryAfter: 17 }, 0, 17_250],
    [{ status: 429, retryAfter: undefined }, 0, 1_250],
    [{ status: 503, retryAfter: undefined }, 2, 1_000],
    [{ status: 503, retryAfter: 61 }, 0, undefined],
    [{ status: 0, retryAfter: undefined }, 30, 4_000],
    [{ status: 400, retryAfter: undefined }, 0, undefined],
    [{ status: 404, retryAfter: 5 }, 0, undefined],
    [{ status: 500, retryAfter: undefined }, 0, undefined],
  ])('%j, retry %i → %j (draw 0.5, maxRetryAfter 60)', (failure, attempt, expected) => {
    expect(retryDelay(failure, attempt, () => 0.5, 60)).toBe(expected);
  });
});

describe('sleep', () => {
  it('waits at least as long as asked', async () => {
    const started = performance.now();
    await sleep(30);
    expect(performance.now() - started).toBeGreaterThanOrEqual(30);
  });

  it('rejects at once with the reason of an aborted signal', async () => {
    const reason = new Error('gone');
    await expect(sleep(60_000, AbortSignal.abort(reason))).rejects.toBe(reason);
  });
});

describe('queryOf', () => {
  it.each([
    [{}, ''],
    [{ limit: 5, signal: AbortSignal.timeout(1000) }, 'limit=5'],
    [{ limit: 5, timeout: 2000 }, 'limit=5'],
    [{ sort: 'name', fields: ['name', 'hp'], hp: 8 }, 'fields=hp,name&hp=8&sort=name'],
    [{ include: [] }, ''],
    [{ fields: [] }, 'fields=id'],
    [{ cursor: 'a+b/c=' }, 'cursor=a%2Bb%2Fc%3D'],
    [{ standard: 0, tag: undefined }, 'standard=0'],
  ])('%j → %s', (params, expected) => {
    expect(queryOf(params)).toBe(expected);
  });
});

describe('rateLimitOf', () => {
  it('needs all five headers as integers', () => {
    const all = {
      'x-ratelimit-limit-minute': '60',
      'x-ratelimit-remaining-minute': '59',
      'x-ratelimit-limit-month': '5000',
      'x-ratelimit-remaining-month': '4999',
      'x-ratelimit-reset': '1795000000',
    };
    expect(rateLimitOf(new Headers(all))).toEqual({
      limitMinute: 60,
      remainingMinute: 59,
      limitMonth: 5000,
      remainingMonth: 4999,
      reset: 1795000000,
    });
    expect(rateLimitOf(new Headers({ ...all, 'x-ratelimit-reset': 'soon' }))).toBeUndefined();
    const { 'x-ratelimit-limit-month': _dropped, ...four } = all;
    expect(rateLimitOf(new Headers(four))).toBeUndefined();
  });
});
