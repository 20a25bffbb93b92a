/**
 * One logical GET: conditional request from the ETag cache, retries (429 after `Retry-After`, 502/503/504
 * and network failures with backoff, each told to `onRetry` and warned about through the logger), rate-limit
 * headers, a warning for an answer marked `Deprecation`, and the answer checked for shape before anyone sees
 * it. Everything else about the API lives in `client.ts`.
 */
import type { EtagCache } from './cache.js';
import { CatalogueApiError, CLIENT_ERROR_CODES } from './errors.js';
import { BACKOFF_STATUSES, backoffDelay, parseRetryAfter, type Sleep } from './retry.js';
import { WARNING_PREFIX } from './settings.js';
import type { Logger, RateLimit, RetryEvent } from './types.js';

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  maxRetries: number;
  maxRetryAfterSeconds: number;
  fetch: typeof fetch;
  cache: EtagCache | undefined;
  /** Resolves to the cache-key prefix for this API key (a hash, never the key). */
  identity: () => Promise<string>;
  sleep: Sleep;
  random: () => number;
  now: () => number;
  onRateLimit: (rateLimit: RateLimit) => void;
  /** Told before each retry; what it throws rejects the call. */
  onRetry: ((event: RetryEvent) => void) | undefined;
  /** Warned before each retry, and the first time a path answers with `Deprecation`. */
  logger: Logger;
}

/** Checks a parsed body; `undefined` means the shape is wrong. */
export type ShapeCheck<T> = (body: unknown) => T | undefined;

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

/** A 429 without `Retry-After` (never sent by this API, maybe by something in front of it) waits at least 1 s. */
const BACKOFF_FLOOR_WITHOUT_RETRY_AFTER_MS = 1_000;

/** Raised inside the loop for failures that are retried with backoff; never leaves the transport. */
class NetworkFailure {
  constructor(readonly cause: unknown) {}
}

/**
 * The warning before a retry: what failed, how long the client waits, which retry follows.
 * @example retryWarning({ status: 429, code: 'rate_limit_exceeded', attempt: 1, waitMs: 17000, url: 'http://h/v1/tags', requestId: 'req_x' }, 3)
 * // → '[@catalogue/read-api-client] GET /v1/tags: 429 rate_limit_exceeded (req_x); waiting 17 s before retry 1 of 3'
 */
export function retryWarning(event: RetryEvent, maxRetries: number): string {
  const { pathname, search } = new URL(event.url);
  const failed = event.status === 0 ? event.code : `${event.status} ${event.code}`;
  const wait = event.waitMs >= 1000 ? `${Math.round(event.waitMs / 100) / 10} s` : `${event.waitMs} ms`;
  return `${WARNING_PREFIX} GET ${pathname}${search}: ${failed}${event.requestId ? ` (${event.requestId})` : ''}; waiting ${wait} before retry ${event.attempt} of ${maxRetries}`;
}

export class Transport {
  /** Paths whose `Deprecation` has been warned about (once each). */
  readonly #deprecated = new Set<string>();

  constructor(readonly options: TransportOptions) {}

  /** An answer marked deprecated (RFC 9745, with RFC 8594's `Sunset`): warned about once per path. */
  #noticeDeprecation(url: string, headers: Headers): void {
    const deprecation = headers.get('deprecation');
    if (deprecation === null) return;
    const { pathname } = new URL(url);
    if (this.#deprecated.has(pathname)) return;
    this.#deprecated.add(pathname);
    const sunset = headers.get('sunset');
    const link = /<([^>]*)>\s*;[^,]*rel="?deprecation"?/i.exec(headers.get('link') ?? '')?.[1];
    this.options.logger.warn(
      `${WARNING_PREFIX} GET ${pathname} answers with Deprecation: ${deprecation}${sunset ? `; it may stop working after ${sunset}` : ''}${link ? `; see ${link}` : ''}`,
    );
  }

  /**
   * GET `path?query` and return its checked body; throws {@link CatalogueApiError}, or the signal's reason.
   * @example await transport.get('/tags', 'limit=5', isList, signal)
   */
  async get<T>(path: string, query: string, check: ShapeCheck<T>, signal?: AbortSignal): Promise<T> {
    const { options } = this;
    signal?.throwIfAborted();
    const url = `${options.baseUrl}${path}${query ? `?${query}` : ''}`;
    const cacheKey = options.cache ? `${await options.identity()} ${url}` : undefined;
    const cached = cacheKey ? await options.cache?.get(cacheKey) : undefined;
    /** Tell `onRetry`, then wait before retry number `attempt + 1`. */
    const retryAfterWait = async (attempt: number, waitMs: number, failed: CatalogueApiError) => {
      const event: RetryEvent = {
        status: failed.status,
        code: failed.code,
        attempt: attempt + 1,
        waitMs,
        url,
        requestId: failed.requestId,
      };
      // Never waited out silently: a script that waits 60 s for a 429 says so.
      options.logger.warn(retryWarning(event, options.maxRetries));
      options.onRetry?.(event);
      await options.sleep(waitMs, signal);
    };
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = {
        authorization: `Bearer ${options.apiKey}`,
        accept: 'application/json',
      };
      if (cached) headers['if-none-match'] = cached.etag;
      let response: Response;
      let text: string;
      try {
        try {
          response = await options.fetch(url, { headers, signal: signal ?? null });
        } catch (error) {
          throw new NetworkFailure(error);
        }
        const rateLimit = rateLimitOf(response.headers);
        if (rateLimit) options.onRateLimit(rateLimit);
        this.#noticeDeprecation(url, response.headers);
        if (response.status === 304 && cached) return this.#checked(cached.body, 304, response, check);
        try {
          text = await response.text();
        } catch (error) {
          throw new NetworkFailure(error);
        }
      } catch (failure) {
        if (!(failure instanceof NetworkFailure)) throw failure;
        if (signal?.aborted) throw signal.reason;
        const error = networkError(url, failure.cause);
        if (attempt >= options.maxRetries) throw error;
        await retryAfterWait(attempt, backoffDelay(attempt, options.random), error);
        continue;
      }
      if (response.status === 200) {
        const body = this.#checked(text, 200, response, check);
        const etag = response.headers.get('etag');
        if (cacheKey && etag) await options.cache?.set(cacheKey, { etag, body: text });
        return body;
      }
      const error = apiErrorOf(response, text, options.now());
      if (attempt >= options.maxRetries) throw error;
      if (response.status === 429) {
        // Never sooner than the server said; a wait past the bound (a spent monthly quota) is the caller's call.
        if (error.retryAfter !== undefined && error.retryAfter > options.maxRetryAfterSeconds) throw error;
        const wait =
          error.retryAfter !== undefined
            ? error.retryAfter * 1000
            : backoffDelay(attempt, options.random) + BACKOFF_FLOOR_WITHOUT_RETRY_AFTER_MS;
        await retryAfterWait(attempt, wait, error);
        continue;
      }
      if (BACKOFF_STATUSES.has(response.status)) {
        const floor = (error.retryAfter ?? 0) * 1000;
        await retryAfterWait(attempt, Math.max(floor, backoffDelay(attempt, options.random)), error);
        continue;
      }
      throw error;
    }
  }

  #checked<T>(text: string, status: number, response: Response, check: ShapeCheck<T>): T {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw invalidResponse(status, response, 'the answer is not JSON');
    }
    const body = check(parsed);
    if (body === undefined)
      throw invalidResponse(status, response, 'the answer does not have the expected shape');
    return body;
  }
}

function invalidResponse(status: number, response: Response, what: string): CatalogueApiError {
  return new CatalogueApiError({
    status,
    code: CLIENT_ERROR_CODES.invalidResponse,
    message: `${what} (HTTP ${status} from ${new URL(response.url || 'http://unknown').pathname})`,
    requestId: response.headers.get('x-request-id') ?? undefined,
  });
}

function networkError(url: string, cause: unknown): CatalogueApiError {
  // fetch failures carry the reason in `cause` (ES2022 types: read it without them).
  const inner = cause instanceof Error ? (cause as { cause?: unknown }).cause : undefined;
  const reason = inner instanceof Error ? inner.message : cause instanceof Error ? cause.message : '';
  return new CatalogueApiError({
    status: 0,
    code: CLIENT_ERROR_CODES.networkError,
    message: `no answer from ${new URL(url).origin}${reason ? `: ${reason}` : ''}`,
    cause,
  });
}

/** The error of a non-200 answer: its envelope, or `invalid_response` when it has none. */
function apiErrorOf(response: Response, text: string, nowMs: number): CatalogueApiError {
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'), nowMs);
  const headerId = response.headers.get('x-request-id') ?? undefined;
  let envelope: unknown;
  try {
    envelope = JSON.parse(text);
  } catch {
    envelope = undefined;
  }
  const error = (envelope as { error?: unknown } | undefined)?.error as
    | { code?: unknown; message?: unknown; request_id?: unknown }
    | undefined;
  if (error && typeof error.code === 'string' && typeof error.message === 'string') {
    return new CatalogueApiError({
      status: response.status,
      code: error.code,
      message: error.message,
      requestId: typeof error.request_id === 'string' ? error.request_id : headerId,
      retryAfter,
    });
  }
  return new CatalogueApiError({
    status: response.status,
    code: CLIENT_ERROR_CODES.invalidResponse,
    message: `HTTP ${response.status} without the API's error envelope`,
    requestId: headerId,
    retryAfter,
  });
}
