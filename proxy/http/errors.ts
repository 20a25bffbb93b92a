/**
 * The one error module of the API: every error code, its status, and its envelope. Errors the API answers
 * with are values ({@link ApiError}); only infrastructure faults are thrown (see `proxy/errors.ts`).
 */

export const ERROR_STATUS = {
  unknown_parameter: 400,
  invalid_parameter: 400,
  unsupported_parameter: 400,
  missing_authorization: 401,
  malformed_authorization: 401,
  invalid_key: 401,
  not_found: 404,
  method_not_allowed: 405,
  rate_limit_exceeded: 429,
  configuration_error: 503,
  authentication_unavailable: 503,
  quota_unavailable: 503,
  origin_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** An answer the API gives instead of data. `message` is for humans and never holds a key or a value. */
export interface ApiError {
  code: ErrorCode;
  message: string;
}

export function apiError(code: ErrorCode, message: string): ApiError {
  return { code, message };
}

/**
 * The error envelope of docs/api.md#errors, as bytes.
 * @example errorBody(apiError('not_found', 'No module 7.'), 'req_x')
 *   // → {"error":{"code":"not_found","message":"No module 7.","request_id":"req_x"}}
 */
export function errorBody(error: ApiError, requestId: string): Buffer {
  return Buffer.from(
    JSON.stringify({ error: { code: error.code, message: error.message, request_id: requestId } }),
  );
}

/** Parameter errors rank by docs/api.md#errors: `unsupported_parameter` > `unknown_parameter` > `invalid_parameter`. */
const PARAMETER_RANK: Partial<Record<ErrorCode, number>> = {
  unsupported_parameter: 0,
  unknown_parameter: 1,
  invalid_parameter: 2,
};

/** The error to answer among several parameter errors: highest rank first, then the first found. */
export function firstByPrecedence(errors: readonly ApiError[]): ApiError | undefined {
  let best: ApiError | undefined;
  for (const error of errors) {
    if (!best || (PARAMETER_RANK[error.code] ?? 9) < (PARAMETER_RANK[best.code] ?? 9)) best = error;
  }
  return best;
}
