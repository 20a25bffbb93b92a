/**
 * The one error module of the key-administration API: every error code, its status, and its envelope. Errors
 * the actions answer with are values ({@link AdminError}); only infrastructure faults are thrown.
 */

export const ADMIN_ERROR_STATUS = {
  invalid_request: 400,
  forbidden: 403,
  not_found: 404,
  key_not_found: 404,
  method_not_allowed: 405,
  key_not_active: 409,
  key_already_rolled: 409,
  owner_key_limit_reached: 409,
  owner_already_set: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type AdminErrorCode = keyof typeof ADMIN_ERROR_STATUS;

/** One problem of a request's input: the field (`owner`, `limits.minute`, `?limit`, `Idempotency-Key`) and why. */
export interface FieldProblem {
  field: string;
  problem: string;
}

/** An answer instead of data. `message` is for humans; it never holds a key. */
export interface AdminError {
  code: AdminErrorCode;
  message: string;
  details?: FieldProblem[];
  /** Seconds, for 503. */
  retryAfter?: number;
}

export function adminError(code: AdminErrorCode, message: string, details?: FieldProblem[]): AdminError {
  return { code, message, ...(details && { details }) };
}

/**
 * The error envelope.
 * @example errorEnvelope(adminError('key_not_found', 'No key key_x.'), 'req_x')
 *   // → { error: { code: 'key_not_found', message: 'No key key_x.', request_id: 'req_x' } }
 */
export function errorEnvelope(error: AdminError, requestId: string) {
  return {
    error: {
      code: error.code,
      message: error.message,
      request_id: requestId,
      ...(error.details && { details: error.details }),
    },
  };
}

/** Required configuration is missing or malformed; names the variable. */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}

/**
 * Other calls kept changing what this call had to read and write over (an owner's ledger, a key, an
 * Idempotency-Key record) for all its attempts: nothing is half written, and the call may be retried at once.
 * The API answers 503 with `Retry-After: 1`.
 */
export class ContentionError extends Error {
  override name = 'ContentionError';
}
