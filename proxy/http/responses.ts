/** Building responses: the headers every kind of answer carries (docs/api.md#other-response-headers), in one place. */

import type { ProxyResponse } from '../core/types.js';
import type { RateLimitState } from '../quota/interface.js';
import { ALLOW_HEADER } from '../request/routes.js';
import type { Coding } from './coding.js';
import { type ApiError, ERROR_STATUS, errorBody } from './errors.js';
import {
  CACHEABLE,
  JSON_CONTENT_TYPE,
  LICENSE_LINK,
  NOSNIFF,
  NOT_CACHEABLE,
  VARY,
  WWW_AUTHENTICATE,
} from './headers.js';

/**
 * A 200 with a catalogue body: ETag, the licence link, private revalidated caching; `Vary: Accept-Encoding`
 * also when the body is identity (the choice depended on that header), `Content-Encoding` when it is coded.
 * `body` and `etag` are those of the representation sent (the coded bytes and their own ETag).
 */
export function okResponse(
  body: Buffer,
  etag: string,
  requestId: string,
  coding: Coding = 'identity',
): ProxyResponse {
  const headers: Record<string, string> = {
    'content-type': JSON_CONTENT_TYPE,
    'content-length': String(body.byteLength),
    etag,
    'cache-control': CACHEABLE,
    link: LICENSE_LINK,
    vary: VARY,
    'x-content-type-options': NOSNIFF,
    'x-request-id': requestId,
  };
  if (coding !== 'identity') headers['content-encoding'] = coding;
  return { status: 200, headers, body };
}

/** A 304 carries only what lets the client keep using its copy (RFC 9110 §15.4.5), no body. */
export function notModifiedResponse(etag: string, requestId: string): ProxyResponse {
  return {
    status: 304,
    headers: {
      etag,
      'cache-control': CACHEABLE,
      vary: VARY,
      'x-content-type-options': NOSNIFF,
      'x-request-id': requestId,
    },
    body: undefined,
  };
}

export function optionsResponse(requestId: string): ProxyResponse {
  return {
    status: 204,
    headers: {
      allow: ALLOW_HEADER,
      'cache-control': NOT_CACHEABLE,
      'x-content-type-options': NOSNIFF,
      'x-request-id': requestId,
    },
    body: undefined,
  };
}

/** The error envelope with its status; 405 names the allowed methods and 401 the expected scheme. */
export function errorResponse(error: ApiError, requestId: string): ProxyResponse {
  const body = errorBody(error, requestId);
  const headers: Record<string, string> = {
    'content-type': JSON_CONTENT_TYPE,
    'content-length': String(body.byteLength),
    'cache-control': NOT_CACHEABLE,
    'x-content-type-options': NOSNIFF,
    'x-request-id': requestId,
  };
  const status = ERROR_STATUS[error.code];
  if (status === 405) headers.allow = ALLOW_HEADER;
  if (status === 401) headers['www-authenticate'] = WWW_AUTHENTICATE;
  return { status, headers, body };
}

/**
 * The rate-limit headers of docs/api.md#rate-limits added to `response`, after its own, and `Retry-After` when the
 * meter refused the request (`retryAfterSeconds`, with a 429). In place, not on a copy: every answer the core
 * dresses is built for its request (by the builders above) and not yet shared, and a hot request then builds
 * one headers object instead of two.
 * @example setRateLimitHeaders(okResponse(body, etag, id), { limitMonth: 5000, remainingMonth: 4999, limitMinute: 60, remainingMinute: 59, reset: 1795000000 })
 *   // → the same response, its headers now ending with 'x-ratelimit-limit-month': '5000', …, 'x-ratelimit-reset': '1795000000'
 */
export function setRateLimitHeaders(
  response: ProxyResponse,
  state: RateLimitState,
  retryAfterSeconds?: number,
): ProxyResponse {
  const { headers } = response;
  headers['x-ratelimit-limit-month'] = limitMonthText(state.limitMonth);
  headers['x-ratelimit-remaining-month'] = String(state.remainingMonth);
  headers['x-ratelimit-limit-minute'] = limitMinuteText(state.limitMinute);
  headers['x-ratelimit-remaining-minute'] = String(state.remainingMinute);
  headers['x-ratelimit-reset'] = resetText(state.reset);
  if (retryAfterSeconds !== undefined) headers['retry-after'] = String(retryAfterSeconds);
  return response;
}

/**
 * `String(n)`, the last text kept: a key's limits are the same request after request and the window's start
 * for a minute, while writing a number as text costs more than the rest of the headers (a limit beyond 2^31
 * is a double, written digit by digit).
 */
function lastText(): (n: number) => string {
  let last = Number.NaN;
  let text = '';
  return (n) => {
    if (n !== last) {
      last = n;
      text = String(n);
    }
    return text;
  };
}
const limitMonthText = lastText();
const limitMinuteText = lastText();
const resetText = lastText();

/** HEAD: a copy of the GET answer with its headers (Content-Length included) and no body. */
export function withoutBody(response: ProxyResponse): ProxyResponse {
  return response.body === undefined ? response : { ...response, body: undefined };
}
