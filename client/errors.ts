/** The one error class of the client: API errors, malformed answers and network failures. */

/** Codes the client adds to the API's own (docs/api.md#errors) for failures that have no envelope. */
export const CLIENT_ERROR_CODES = {
  /** The answer was not what the API sends: not JSON, or JSON of the wrong shape (also an error status without the error envelope). */
  invalidResponse: 'invalid_response',
  /** No answer at all (connection refused or reset, DNS), after the retries. */
  networkError: 'network_error',
} as const;

export interface CatalogueApiErrorInit {
  status: number;
  code: string;
  message: string;
  requestId?: string | undefined;
  retryAfter?: number | undefined;
  cause?: unknown;
}

/**
 * A failed call. `code` is the API's `error.code` (`invalid_parameter`, `rate_limit_exceeded`, …), or
 * `invalid_response` / `network_error` (see {@link CLIENT_ERROR_CODES}). Aborts are not wrapped: an aborted
 * call rejects with the signal's reason.
 * @example
 * try { await client.modules.get(999999); }
 * catch (error) { if (error instanceof CatalogueApiError && error.code === 'not_found') … }
 */
export class CatalogueApiError extends Error {
  override name = 'CatalogueApiError';
  /** HTTP status; 0 for `network_error`. */
  readonly status: number;
  readonly code: string;
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
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
  }
}
