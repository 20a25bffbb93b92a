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
