/** Infrastructure faults. Outcomes (unknown key, quota exhausted, not found) are values, not errors. */

export type Dependency = 'objects' | 'keys' | 'quota' | 'configuration';

/** A dependency failed or timed out; the proxy maps it to its 503 code and fails closed. */
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

/** Required configuration is missing or malformed; names the variable. */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}
