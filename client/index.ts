/**
 * The TypeScript client of the Catalogue Read API (docs/client.md).
 * @example
 * import { CatalogueClient, CatalogueApiError } from './client/index.js';
 * const client = new CatalogueClient(); // baseUrl and apiKey from CATALOGUE_URL and CATALOGUE_KEY
 */
export { type CacheEntry, DEFAULT_CACHE_ENTRIES, type EtagCache, MemoryEtagCache } from './cache.js';
export {
  CatalogueClient,
  type CatalogueClientOptions,
  type ListResource,
  type ManufacturerResource,
  type ModuleResource,
} from './client.js';
export {
  API_ERROR_CODES,
  type ApiErrorCode,
  CatalogueApiError,
  type CatalogueApiErrorInit,
  CLIENT_ERROR_CODES,
  type ClientErrorCode,
  type ErrorCode,
  isErrorCode,
} from './errors.js';
export { responseOf } from './responses.js';
export { BACKOFF, DEFAULT_MAX_RETRY_AFTER_SECONDS } from './retry.js';
export { ENVIRONMENT } from './settings.js';
export { DEFAULT_TIMEOUT_MS } from './timeout.js';
export type * from './types.js';
export { VERSION } from './version.js';
