/**
 * What each result came with: the answer's status, request id, rate-limit headers and headers, kept beside the
 * result (a page, a record, each record of a walk, a thrown error) without changing its shape or its type, and
 * read back with {@link responseOf}.
 */
import type { RateLimit, ResponseInfo } from './types.js';

/** Results and the answer each came in; weak, so a result that is dropped takes its entry with it. */
const answers = new WeakMap<object, ResponseInfo>();

/**
 * The answer a result of the client came in: the page or record a call returned (each record of `list()` gives
 * its page's), or a `CatalogueApiError` that an answer caused; `undefined` for anything else (a copy of a
 * result, `{ ...record }`, has none, and neither has a network failure).
 * @example const page = await client.tags.listPage();
 * responseOf(page)?.requestId // → 'req_…'
 * responseOf(page.data[0]!)?.rateLimit?.remainingMinute // → 59
 */
export function responseOf(result: object): ResponseInfo | undefined {
  return answers.get(result);
}

/** Keep `response` as the answer of each of `results`. */
export function remember(response: ResponseInfo, ...results: object[]): void {
  for (const result of results) answers.set(result, response);
}

const RATE_LIMIT_HEADERS = {
  limitMinute: 'x-ratelimit-limit-minute',
  remainingMinute: 'x-ratelimit-remaining-minute',
  limitMonth: 'x-ratelimit-limit-month',
  remainingMonth: 'x-ratelimit-remaining-month',
  reset: 'x-ratelimit-reset',
} as const;

/**
 * The rate-limit headers as numbers, or `undefined` unless all five are there and are integers.
 * @example rateLimitOf(new Headers({ 'x-ratelimit-limit-minute': '60', … })) // → { limitMinute: 60, … }
 */
export function rateLimitOf(headers: Headers): RateLimit | undefined {
  const result: Partial<RateLimit> = {};
  for (const [field, header] of Object.entries(RATE_LIMIT_HEADERS)) {
    const text = headers.get(header);
    if (text === null || !/^\d+$/.test(text.trim())) return undefined;
    result[field as keyof RateLimit] = Number(text);
  }
  return result as RateLimit;
}

/**
 * What the client keeps of an answer.
 * @example responseInfoOf(response, 'http://127.0.0.1:8787/v1/tags', 0) // → { status: 200, requestId: 'req_…', … }
 */
export function responseInfoOf(response: Response, url: string, retry: number): ResponseInfo {
  return {
    status: response.status,
    requestId: response.headers.get('x-request-id') ?? undefined,
    rateLimit: rateLimitOf(response.headers),
    url,
    retry,
    headers: response.headers,
  };
}
