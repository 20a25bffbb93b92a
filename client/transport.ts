/**
 * One logical GET: a conditional request from the ETag cache; each request told to `onRequest`, sent with the
 * client's `User-Agent` and bounded by the `timeout`; each answer told to `onResponse`; retries (429, 502/503/504,
 * network failures and timeouts: `Retry-After` and a jittered backoff, each told to `onRetry` and warned about);
 * rate-limit headers; a warning for an answer marked `Deprecation`; and the answer checked for shape before anyone
 * sees it, returned with what it came in. Everything else about the API lives in `client.ts`.
 */
import type { CacheEntry, EtagCache } from './cache.js';
import { CatalogueApiError, CLIENT_ERROR_CODES, isApiErrorCode } from './errors.js';
import { remember, responseInfoOf } from './responses.js';
import { parseRetryAfter, retryDelay, type Sleep } from './retry.js';
import { WARNING_PREFIX, type Warn } from './settings.js';
import { requestSignal } from './timeout.js';
import type { Hook, RateLimit, RequestEvent, ResponseEvent, ResponseInfo, RetryEvent } from './types.js';

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  maxRetries: number;
  maxRetryAfterSeconds: number;
  /** Milliseconds each request may take, unless its call says otherwise. */
  timeoutMs: number;
  /** The `User-Agent` header, where the client sets one. */
  userAgent: string | undefined;
  fetch: typeof fetch;
  cache: EtagCache | undefined;
  /** Resolves to the cache-key prefix for this API key (a hash, never the key). */
  identity: () => Promise<string>;
  sleep: Sleep;
  random: () => number;
  now: () => number;
  onRateLimit: (rateLimit: RateLimit) => void;
  /** Told before each retry; what it throws rejects the call (as for every hook). */
  onRetry: ((event: RetryEvent) => void) | undefined;
  onRequest: Hook<RequestEvent> | undefined;
  onResponse: Hook<ResponseEvent> | undefined;
  /** Each wait before a retry, and the first time a path answers with `Deprecation`. */
  warn: Warn;
}

/** Checks a parsed body; `undefined` means the shape is wrong. */
export type ShapeCheck<T> = (body: unknown) => T | undefined;

/** A call's checked body and the answer it came in. */
export interface Answer<T> {
  body: T;
  response: ResponseInfo;
}

/** What a call asks for beyond its URL. */
export interface CallSettings {
  signal: AbortSignal | undefined;
  timeoutMs: number;
}

/** One call as the transport runs it. */
interface Call extends CallSettings {
  url: string;
  cached: CacheEntry | undefined;
}

/** A whole answer: its headers, its body and what the client keeps of it. */
interface Exchange {
  response: Response;
  text: string;
  info: ResponseInfo;
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

  /**
   * GET `path?query` and return its checked body with its answer; throws {@link CatalogueApiError}, or the
   * signal's reason.
   * @example await transport.get('/tags', 'limit=5', isList, { signal, timeoutMs: 30_000 })
   */
  async get<T>(
    path: string,
    query: string,
    check: ShapeCheck<T>,
    settings: CallSettings,
  ): Promise<Answer<T>> {
    const { options } = this;
    settings.signal?.throwIfAborted();
    const url = `${options.baseUrl}${path}${query ? `?${query}` : ''}`;
    const cacheKey = options.cache ? `${await options.identity()} ${url}` : undefined;
    const call: Call = {
      ...settings,
      url,
      cached: cacheKey ? await options.cache?.get(cacheKey) : undefined,
    };
    for (let retry = 0; ; retry++) {
      const exchange = await this.#exchange(call, retry);
      let failure: CatalogueApiError;
      if (exchange instanceof CatalogueApiError) {
        failure = exchange;
      } else if (exchange.response.status === 304 && call.cached) {
        return { body: checked(call.cached.body, exchange, check), response: exchange.info };
      } else if (exchange.response.status === 200) {
        const body = checked(exchange.text, exchange, check);
        const etag = exchange.response.headers.get('etag');
        if (cacheKey && etag) await options.cache?.set(cacheKey, { etag, body: exchange.text });
        return { body, response: exchange.info };
      } else {
        failure = apiErrorOf(exchange, options.now());
      }
      const wait =
        retry < options.maxRetries
          ? retryDelay(failure, retry, options.random, options.maxRetryAfterSeconds)
          : undefined;
      if (wait === undefined) throw failure;
      await this.#beforeRetry(call, retry + 1, wait, failure);
    }
  }

  /**
   * One request and its whole answer, or the failure of a request that got none (a network failure, a
   * timeout); a caller's abort rejects with its reason. The hooks are told of both.
   */
  async #exchange(call: Call, retry: number): Promise<Exchange | CatalogueApiError> {
    const { options } = this;
    const headers = new Headers({ accept: 'application/json' });
    if (options.userAgent) headers.set('user-agent', options.userAgent);
    if (call.cached) headers.set('if-none-match', call.cached.etag);
    await options.onRequest?.({ url: call.url, retry, headers });
    // After the hook: it never sees the key, and cannot replace it.
    headers.set('authorization', `Bearer ${options.apiKey}`);
    const started = options.now();
    const request = requestSignal(call.signal, call.timeoutMs);
    let response: Response;
    let text: string;
    try {
      response = await options.fetch(call.url, { headers: plain(headers), signal: request.signal });
      text = await response.text();
    } catch (error) {
      if (call.signal?.aborted) throw call.signal.reason;
      return request.timedOut() ? timeoutError(call, error) : networkError(call.url, error);
    } finally {
      request.done();
    }
    const info = responseInfoOf(response, call.url, retry);
    if (info.rateLimit) options.onRateLimit(info.rateLimit);
    this.#noticeDeprecation(call.url, response.headers);
    await options.onResponse?.({ ...info, elapsedMs: options.now() - started });
    return { response, text, info };
  }

  /** Warn and tell `onRetry`, then wait before retry number `attempt`. */
  async #beforeRetry(call: Call, attempt: number, waitMs: number, failed: CatalogueApiError): Promise<void> {
    const event: RetryEvent = {
      status: failed.status,
      code: failed.code,
      attempt,
      waitMs,
      url: call.url,
      requestId: failed.requestId,
    };
    // Never waited out silently: a script that waits 60 s for a 429 says so.
    this.options.warn({ kind: 'retry', message: retryWarning(event, this.options.maxRetries), retry: event });
    this.options.onRetry?.(event);
    await this.options.sleep(waitMs, call.signal);
  }

  /** An answer marked deprecated (RFC 9745, with RFC 8594's `Sunset`): warned about once per path. */
  #noticeDeprecation(url: string, headers: Headers): void {
    const deprecation = headers.get('deprecation');
    if (deprecation === null) return;
    const { pathname } = new URL(url);
    if (this.#deprecated.has(pathname)) return;
    this.#deprecated.add(pathname);
    const sunset = headers.get('sunset') ?? undefined;
    const link = /<([^>]*)>\s*;[^,]*rel="?deprecation"?/i.exec(headers.get('link') ?? '')?.[1];
    this.options.warn({
      kind: 'deprecated-answer',
      message: `${WARNING_PREFIX} GET ${pathname} answers with Deprecation: ${deprecation}${sunset ? `; it may stop working after ${sunset}` : ''}${link ? `; see ${link}` : ''}`,
      url,
      deprecation,
      sunset,
      link,
    });
  }
}

/** Headers as a plain record (lower-case names), as a `fetch` of the caller's may expect them. */
function plain(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}

/** The body of `text` parsed and checked; an {@link invalidResponse} otherwise. */
function checked<T>(text: string, exchange: Exchange, check: ShapeCheck<T>): T {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidResponse(exchange, 'the answer is not JSON');
  }
  const body = check(parsed);
  if (body === undefined) throw invalidResponse(exchange, 'the answer does not have the expected shape');
  return body;
}

/** An error that came with an answer, which `responseOf(error)` gives back. */
function answered(exchange: Exchange, error: CatalogueApiError): CatalogueApiError {
  remember(exchange.info, error);
  return error;
}

function invalidResponse(exchange: Exchange, what: string): CatalogueApiError {
  const { status } = exchange.response;
  return answered(
    exchange,
    new CatalogueApiError({
      status,
      code: CLIENT_ERROR_CODES.invalidResponse,
      message: `${what} (HTTP ${status} from ${new URL(exchange.info.url).pathname})`,
      requestId: exchange.info.requestId,
    }),
  );
}

/** Why a request failed, from a fetch failure (its `cause` carries the reason: ES2022 types, read without them). */
function reasonOf(cause: unknown): string {
  const inner = cause instanceof Error ? (cause as { cause?: unknown }).cause : undefined;
  return inner instanceof Error ? inner.message : cause instanceof Error ? cause.message : '';
}

function networkError(url: string, cause: unknown): CatalogueApiError {
  const reason = reasonOf(cause);
  return new CatalogueApiError({
    status: 0,
    code: CLIENT_ERROR_CODES.networkError,
    message: `no answer from ${new URL(url).origin}${reason ? `: ${reason}` : ''}`,
    cause,
  });
}

function timeoutError(call: Call, cause: unknown): CatalogueApiError {
  const { origin, pathname } = new URL(call.url);
  return new CatalogueApiError({
    status: 0,
    code: CLIENT_ERROR_CODES.timeout,
    message: `timed out: no complete answer from ${origin} to GET ${pathname} within ${call.timeoutMs} ms (the timeout option)`,
    cause,
  });
}

/** The error of a non-200 answer: its envelope, or `invalid_response` when it has none. */
function apiErrorOf(exchange: Exchange, nowMs: number): CatalogueApiError {
  const { response, text, info } = exchange;
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'), nowMs);
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
    return answered(
      exchange,
      new CatalogueApiError({
        status: response.status,
        // A code the API does not document (a newer server's) is not taken for one of the client's own.
        code: isApiErrorCode(error.code) ? error.code : CLIENT_ERROR_CODES.unknownCode,
        apiCode: error.code,
        message: error.message,
        requestId: typeof error.request_id === 'string' ? error.request_id : info.requestId,
        retryAfter,
      }),
    );
  }
  return answered(
    exchange,
    new CatalogueApiError({
      status: response.status,
      code: CLIENT_ERROR_CODES.invalidResponse,
      message: `HTTP ${response.status} without the API's error envelope`,
      requestId: info.requestId,
      retryAfter,
    }),
  );
}
