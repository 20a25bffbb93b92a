/**
 * The responses' builders: what each adds; `withoutBody` copies, leaving its input as it was, and
 * `setRateLimitHeaders` dresses the answer it is given (one the core has just built for its request).
 */
import { describe, expect, it } from 'vitest';
import {
  errorResponse,
  okResponse,
  setRateLimitHeaders,
  withoutBody,
} from '../../../proxy/http/responses.js';

const STATE = {
  limitMonth: 5000,
  remainingMonth: 4999,
  limitMinute: 60,
  remainingMinute: 59,
  reset: 1795000000,
};

describe('setRateLimitHeaders', () => {
  it('adds the rate-limit headers after the answer’s own, to the answer itself', () => {
    const answer = okResponse(Buffer.from('{}'), '"e"', 'req_1');
    const own = Object.entries(answer.headers);
    const body = answer.body;

    const limited = setRateLimitHeaders(answer, STATE);

    expect(limited).toBe(answer);
    expect(limited.body).toBe(body);
    expect(limited.status).toBe(200);
    expect(Object.entries(limited.headers)).toEqual([
      ...own,
      ['x-ratelimit-limit-month', '5000'],
      ['x-ratelimit-remaining-month', '4999'],
      ['x-ratelimit-limit-minute', '60'],
      ['x-ratelimit-remaining-minute', '59'],
      ['x-ratelimit-reset', '1795000000'],
    ]);
  });

  it('adds Retry-After last when the meter refused the request', () => {
    const refusal = errorResponse({ code: 'rate_limit_exceeded', message: 'used up' }, 'req_2');
    const limited = setRateLimitHeaders(refusal, { ...STATE, remainingMinute: 0 }, 17);
    expect(Object.keys(limited.headers).at(-1)).toBe('retry-after');
    expect(limited.headers['retry-after']).toBe('17');
    expect(limited.headers['x-ratelimit-remaining-minute']).toBe('0');
  });

  it('each builder makes a new answer per call: dressing one leaves the next undressed', () => {
    const first = okResponse(Buffer.from('{}'), '"e"', 'req_3');
    setRateLimitHeaders(first, STATE);
    const second = okResponse(Buffer.from('{}'), '"e"', 'req_4');
    expect(second.headers['x-ratelimit-limit-month']).toBeUndefined();
    expect(second.headers).not.toBe(first.headers);
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
