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
export { CatalogueApiError, CLIENT_ERROR_CODES } from './errors.js';
export { BACKOFF, DEFAULT_MAX_RETRY_AFTER_SECONDS } from './retry.js';
export { ENVIRONMENT } from './settings.js';
export type * from './types.js';
