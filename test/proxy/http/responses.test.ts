/** The responses' builders: what each adds, and that the ones named `with…` copy, leaving their input as it was. */
import { describe, expect, it } from 'vitest';
import {
  errorResponse,
  okResponse,
  withoutBody,
  withRateLimitHeaders,
} from '../../../proxy/http/responses.js';

const STATE = {
  limitMonth: 5000,
  remainingMonth: 4999,
  limitMinute: 60,
  remainingMinute: 59,
  reset: 1795000000,
};

describe('withRateLimitHeaders', () => {
  it('adds the rate-limit headers after the answer’s own, to a copy', () => {
    const answer = okResponse(Buffer.from('{}'), '"e"', 'req_1');
    const before = { ...answer, headers: { ...answer.headers } };

    const limited = withRateLimitHeaders(answer, STATE);

    expect(answer).toEqual(before);
    expect(limited).not.toBe(answer);
    expect(limited.headers).not.toBe(answer.headers);
    expect(limited.body).toBe(answer.body);
    expect(limited.status).toBe(200);
    expect(Object.entries(limited.headers)).toEqual([
      ...Object.entries(answer.headers),
      ['x-ratelimit-limit-month', '5000'],
      ['x-ratelimit-remaining-month', '4999'],
      ['x-ratelimit-limit-minute', '60'],
      ['x-ratelimit-remaining-minute', '59'],
      ['x-ratelimit-reset', '1795000000'],
    ]);
  });

  it('adds Retry-After last when the meter refused the request', () => {
    const refusal = errorResponse({ code: 'rate_limit_exceeded', message: 'used up' }, 'req_2');
    const limited = withRateLimitHeaders(refusal, { ...STATE, remainingMinute: 0 }, 17);
    expect(Object.keys(limited.headers).at(-1)).toBe('retry-after');
    expect(limited.headers['retry-after']).toBe('17');
    expect(limited.headers['x-ratelimit-remaining-minute']).toBe('0');
    expect(refusal.headers['retry-after']).toBeUndefined();
  });
});

describe('withoutBody', () => {
  it('a copy without the body, the headers (Content-Length too) kept', () => {
    const answer = okResponse(Buffer.from('{"a":1}'), '"e"', 'req_3');
    const head = withoutBody(answer);
    expect(head).toEqual({ ...answer, body: undefined });
    expect(answer.body?.toString()).toBe('{"a":1}');
  });
});
