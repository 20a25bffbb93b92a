/** Required configuration is missing or malformed; names the variable. Dependency faults: store/errors.ts. */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}
