/**
 * What a client is made with when an option is left out: the base URL and the key from the environment
 * (`CATALOGUE_URL`, `CATALOGUE_KEY`: the names `npm start` prints and the docs use), warnings to `console`
 * (or to `onWarning` alone). Errors name the option and the variable, so a script started without its key says
 * what to set.
 */
import type { ClientWarning, Logger } from './types.js';

/** The environment variables the client reads when `baseUrl` or `apiKey` is not given. */
export const ENVIRONMENT = { baseUrl: 'CATALOGUE_URL', apiKey: 'CATALOGUE_KEY' } as const;

/** The prefix of every warning, so it can be told from the application's own. */
export const WARNING_PREFIX = '[@catalogue/read-api-client]';

/**
 * A variable of the environment, where there is one (Node.js, Bun, Deno with `--allow-env`); `undefined` in a
 * browser or a worker, and for an empty value.
 * @example environmentVariable('CATALOGUE_KEY') // → 'pk_live_…' or undefined
 */
export function environmentVariable(name: string): string | undefined {
  try {
    const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
    const value = process?.env?.[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  } catch {
    // Deno without --allow-env throws on access: as if unset.
    return undefined;
  }
}

/**
 * The key: the option, else `CATALOGUE_KEY`; a clear error when neither is there.
 * @example apiKeyOf(undefined) // throws TypeError: No API key: pass { apiKey } …, or set CATALOGUE_KEY …
 */
export function apiKeyOf(option: string | undefined): string {
  if (option !== undefined) {
    if (option.trim() === '') {
      throw new TypeError(
        `apiKey is empty: pass the key (pk_live_…), or leave apiKey out and set the ${ENVIRONMENT.apiKey} environment variable`,
      );
    }
    return option;
  }
  const fromEnvironment = environmentVariable(ENVIRONMENT.apiKey);
  if (fromEnvironment === undefined) {
    throw new TypeError(
      `No API key: pass { apiKey: 'pk_live_…' } to new CatalogueClient(), or set the ${ENVIRONMENT.apiKey} environment variable (npm start prints a key: export ${ENVIRONMENT.apiKey}=pk_live_…)`,
    );
  }
  return fromEnvironment;
}

/**
 * The base URL without trailing slashes: the option, else `CATALOGUE_URL`; a clear error when neither is there
 * or it is not a URL.
 * @example baseUrlOf('http://127.0.0.1:8787/v1/') // → 'http://127.0.0.1:8787/v1'
 */
export function baseUrlOf(option: string | undefined): string {
  const value = option ?? environmentVariable(ENVIRONMENT.baseUrl);
  if (value === undefined) {
    throw new TypeError(
      `No base URL: pass { baseUrl: 'https://<your domain>/v1' } to new CatalogueClient(), or set the ${ENVIRONMENT.baseUrl} environment variable (npm start prints export ${ENVIRONMENT.baseUrl}=http://127.0.0.1:8787/v1)`,
    );
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    const where = option === undefined ? ENVIRONMENT.baseUrl : 'baseUrl';
    throw new TypeError(`${where} is not a URL (expected e.g. https://<your domain>/v1)`);
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * Where warnings go: the logger given, `console` by default; `false` for nowhere.
 * @example loggerOf(false).warn('x') // → nothing
 */
export function loggerOf(option: Logger | false | undefined): Logger {
  if (option === false) return { warn: () => {} };
  if (option !== undefined) return option;
  const console = (globalThis as { console?: Logger }).console;
  return { warn: (message) => console?.warn(message) };
}

/** Sends a warning where the options say. */
export type Warn = (warning: ClientWarning) => void;

/**
 * Where each warning goes: to `onWarning` when given, as an object; to the logger as its message — the logger
 * given, or `console` unless `onWarning` takes the warnings instead (or `logger: false`).
 * @example warnerOf(undefined, (w) => metrics.count(w.kind)) // → warnings to the hook only, none to the console
 */
export function warnerOf(logger: Logger | false | undefined, onWarning: Warn | undefined): Warn {
  const log = loggerOf(onWarning !== undefined && logger === undefined ? false : logger);
  return (warning) => {
    log.warn(warning.message);
    onWarning?.(warning);
  };
}
