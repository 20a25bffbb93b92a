/**
 * The one error class of the client (API errors, malformed answers, network failures, timeouts) and its codes:
 * the API's, taken from the OpenAPI document's error envelope, and the client's own. `code` is a closed union, so
 * a misspelt code in a comparison or a `case` does not compile and a `switch` narrows without casts; a code
 * this version does not know (a newer server's) arrives as `unknown_code`, the server's own in `apiCode`.
 */
import { type components, errorEnvelopeErrorCodeValues } from './openapi-types.js';

/** The codes of the API's error envelope (docs/api.md#errors): a closed list within /v1. */
export type ApiErrorCode = components['schemas']['ErrorEnvelope']['error']['code'];

/** The API's codes (docs/api.md#errors), generated from the error envelope's enumeration in proxy/openapi.json. */
export const API_ERROR_CODES: readonly ApiErrorCode[] = errorEnvelopeErrorCodeValues;

/** Codes the client adds to the API's own, for failures that have no envelope or a code it does not know. */
export const CLIENT_ERROR_CODES = {
  /** The answer was not what the API sends: not JSON, or JSON of the wrong shape (also an error status without the error envelope). */
  invalidResponse: 'invalid_response',
  /** No answer at all (connection refused or reset, DNS), after the retries. */
  networkError: 'network_error',
  /** No complete answer within the `timeout`, after the retries. */
  timeout: 'timeout',
  /** The API's error envelope with a code this version of the client does not know (a newer server's): it is in `apiCode`. */
  unknownCode: 'unknown_code',
} as const;

/** A code of {@link CLIENT_ERROR_CODES}. */
export type ClientErrorCode = (typeof CLIENT_ERROR_CODES)[keyof typeof CLIENT_ERROR_CODES];

/** What `CatalogueApiError.code` can be: the API's codes and the client's own, a closed list. */
export type ErrorCode = ApiErrorCode | ClientErrorCode;

const API_CODES: ReadonlySet<string> = new Set(API_ERROR_CODES);
const KNOWN_CODES: ReadonlySet<string> = new Set([...API_ERROR_CODES, ...Object.values(CLIENT_ERROR_CODES)]);

/**
 * Whether `value` is one of the API's documented codes.
 * @example isApiErrorCode('not_found') // → true
 */
export function isApiErrorCode(value: unknown): value is ApiErrorCode {
  return typeof value === 'string' && API_CODES.has(value);
}

/**
 * Whether `value` is a code this version of the client knows (the API's or its own): narrows a code read from
 * elsewhere (a log, a queue message, `apiCode`) to {@link ErrorCode}.
 * @example isErrorCode('not_found') // → true
 * @example isErrorCode('not_foud') // → false
 */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && KNOWN_CODES.has(value);
}

export interface CatalogueApiErrorInit {
  status: number;
  /** An {@link ErrorCode}; any other becomes `unknown_code`, and is kept in `apiCode` unless `apiCode` is given. */
  code: string;
  message: string;
  requestId?: string | undefined;
  retryAfter?: number | undefined;
  /** The `error.code` of the API's envelope, as sent. */
  apiCode?: string | undefined;
  cause?: unknown;
}

/**
 * A failed call. `code` is the API's `error.code` (`invalid_parameter`, `rate_limit_exceeded`, …) or one of the
 * client's own (see {@link CLIENT_ERROR_CODES}). Aborts are not wrapped: an aborted call rejects with the
 * signal's reason. `responseOf(error)` gives the failed answer's headers (request id, rate limits).
 * @example
 * try { await client.modules.get(999999); }
 * catch (error) {
 *   if (!(error instanceof CatalogueApiError)) throw error;
 *   switch (error.code) { case 'not_found': return undefined; case 'rate_limit_exceeded': …; default: throw error; }
 * }
 */
export class CatalogueApiError extends Error {
  override name = 'CatalogueApiError';
  /** HTTP status; 0 when no complete answer came (`network_error`, `timeout`). */
  readonly status: number;
  /** The API's `error.code`, or the client's own code. A misspelt code does not compile. */
  readonly code: ErrorCode;
  /**
   * The API's `error.code` exactly as sent, when the answer had the error envelope: the same as `code` for every
   * code this version knows, and the server's new code when `code` is `unknown_code`. `undefined` otherwise.
   */
  readonly apiCode: string | undefined;
  /** `error.request_id` (or `X-Request-Id`): quote it when reporting a problem. */
  readonly requestId: string | undefined;
  /** Seconds from `Retry-After`, when the answer had one (429). */
  readonly retryAfter: number | undefined;

  constructor(init: CatalogueApiErrorInit) {
    super(init.message);
    // As `new Error(message, { cause })` sets it (own, not enumerable), without needing ES2022's constructor
    // overload: consumers that compile against ES2020 see no `cause` in the types, and still get it at run time.
    if (init.cause !== undefined) {
      Object.defineProperty(this, 'cause', { value: init.cause, writable: true, configurable: true });
    }
    const { code } = init;
    const known = isErrorCode(code);
    this.status = init.status;
    this.code = known ? code : CLIENT_ERROR_CODES.unknownCode;
    this.apiCode = init.apiCode ?? (known ? undefined : code);
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
  }
}
