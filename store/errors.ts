/**
 * Infrastructure faults. Outcomes (a missing object, an unknown key, quota exhausted) are values, not
 * errors. The object stores throw this for their faults, and the proxy's other dependencies do too; the
 * proxy maps each dependency to its 503 code and fails closed, the builder explains it to the publisher.
 */

export type Dependency = 'objects' | 'keys' | 'quota' | 'configuration';

/** A dependency failed or timed out. */
export class DependencyError extends Error {
  override name = 'DependencyError';
  constructor(
    readonly dependency: Dependency,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The message of whatever was thrown: an error's `message`, else the value as text.
 * @example errorMessage(new Error('no such bucket')) // → 'no such bucket'
 * @example errorMessage('timed out') // → 'timed out'
 */
export function errorMessage(error: unknown): string {
  const message = (error as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : String(error);
}

/**
 * The message of whatever was thrown and, when it has one, its cause's: a failure told to a person (the SDK
 * and the object stores wrap the network's error as the cause).
 * @example errorWithCause(new Error('put failed', { cause: new Error('ECONNRESET') })) // → 'put failed (ECONNRESET)'
 */
export function errorWithCause(error: unknown): string {
  const cause = (error as { cause?: { message?: unknown } | null } | null | undefined)?.cause?.message;
  return typeof cause === 'string' && cause !== ''
    ? `${errorMessage(error)} (${cause})`
    : errorMessage(error);
}

/**
 * A thrown value for a log line: an error's name and message, else the value as text.
 * @example errorText(new TypeError('x is not a function')) // → 'TypeError: x is not a function'
 */
export function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
