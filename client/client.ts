/**
 * `CatalogueClient`: the API's six GET routes as typed calls, with auto-paging, retries, conditional
 * requests and rate-limit headers. No dependency beyond the platform's `fetch` and Web Crypto (Node ≥ 20).
 */
import { type EtagCache, keyIdentity, MemoryEtagCache } from './cache.js';
import { DEFAULT_MAX_RETRY_AFTER_SECONDS, type Sleep, sleep } from './retry.js';
import { type ShapeCheck, Transport } from './transport.js';
import type {
  CallOptions,
  ListParams,
  Manufacturer,
  ManufacturerDetail,
  ManufacturerGetOptions,
  Module,
  ModuleGetOptions,
  ModuleListParams,
  Page,
  RateLimit,
  RetryEvent,
  Standard,
  Tag,
} from './types.js';

export interface CatalogueClientOptions {
  /** Ends in `/v1`, e.g. `http://127.0.0.1:8787/v1` (`npm start`) or `https://<domain>/v1`. */
  baseUrl: string;
  /** `pk_live_…`. Keep it on servers: never in browser code, URLs or logs. */
  apiKey: string;
  /** Retries after a 429, 502, 503, 504 or network failure (default 3); other errors are never retried. */
  maxRetries?: number | undefined;
  /** A 429 whose `Retry-After` is longer than this (seconds, default 60) is thrown at once instead of waited out. */
  maxRetryAfter?: number | undefined;
  /**
   * Called before each retry with the failed attempt's status and code, the retry's number and the wait, so
   * that a 429's `Retry-After` or a backoff is never waited out silently. What it throws rejects the call.
   * @example onRetry: (r) => console.warn(`HTTP ${r.status} ${r.code}: retry ${r.attempt} in ${r.waitMs} ms`)
   */
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /** Another `fetch` (default: the global one). */
  fetch?: typeof fetch | undefined;
  /** The ETag cache: `false` for none; default a {@link MemoryEtagCache} of 1000 entries, for this client. */
  cache?: EtagCache | false | undefined;
  /** Tests: the wait between attempts (must reject with `signal.reason` on abort), the jitter and the clock. */
  sleep?: Sleep | undefined;
  random?: (() => number) | undefined;
  now?: (() => number) | undefined;
}

/** The list calls of one endpoint. */
export interface ListResource<T, P extends ListParams> {
  /**
   * Every record, page after page, following `next_cursor` until it is `null`.
   * @example for await (const tag of client.tags.list({ sort: 'name' })) console.log(tag.name);
   */
  list(params?: P): AsyncGenerator<T, void, undefined>;
  /**
   * One page: `{ data, next_cursor }`. Pass `next_cursor` back as `cursor`, with the same filters and sort.
   * @example const { data, next_cursor } = await client.tags.listPage({ limit: 10 });
   */
  listPage(params?: P): Promise<Page<T>>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `{"data": [records], "page": {"next_cursor": string | null}}` */
function listShape<T>(body: unknown): Page<T> | undefined {
  // Destructured, not dotted: the fields come from an index signature (noPropertyAccessFromIndexSignature).
  if (!isRecord(body)) return undefined;
  const { data, page } = body;
  if (!Array.isArray(data) || !isRecord(page)) return undefined;
  const { next_cursor: next } = page;
  if (next !== null && typeof next !== 'string') return undefined;
  if (!data.every(isRecord)) return undefined;
  return { data: data as T[], next_cursor: next };
}

/** `{"data": {record}}` */
function detailShape<T>(body: unknown): T | undefined {
  if (!isRecord(body)) return undefined;
  const { data } = body;
  if (!isRecord(data)) return undefined;
  const { id } = data;
  return typeof id === 'number' ? (data as T) : undefined;
}

/**
 * The query string of `params`: names sorted, lists as sorted comma-joined sets (the API treats them as
 * sets, so equal requests share one URL and one cache entry), `signal` and `undefined` left out.
 * @example queryOf({ sort: 'name', fields: ['name', 'hp'], hp: 8 }) // → 'fields=hp,name&hp=8&sort=name'
 */
export function queryOf(params: object): string {
  const parts: string[] = [];
  for (const name of Object.keys(params).sort()) {
    const value = (params as Record<string, unknown>)[name];
    if (name === 'signal' || value === undefined) continue;
    let text: string;
    if (Array.isArray(value)) {
      const members = [...new Set(value.map(String))].sort();
      // No relations is no `include`; no fields is `id` only (`id` is always kept).
      if (members.length === 0 && name !== 'fields') continue;
      text = (members.length === 0 ? ['id'] : members).map(encodeURIComponent).join(',');
    } else {
      text = encodeURIComponent(String(value));
    }
    parts.push(`${encodeURIComponent(name)}=${text}`);
  }
  return parts.join('&');
}

/**
 * A client of the Catalogue Read API.
 * @example
 * const client = new CatalogueClient({ baseUrl: 'http://127.0.0.1:8787/v1', apiKey: process.env.CATALOGUE_KEY! });
 * for await (const m of client.modules.list({ manufacturer_id: 1, sort: 'name', limit: 100 })) console.log(m.name);
 * const module = await client.modules.get(101, { include: ['ins'] });
 */
export class CatalogueClient {
  readonly modules: ListResource<Module, ModuleListParams> & {
    /** One module; `include` adds relations. A missing one throws `CatalogueApiError` with code `not_found`. */
    get(id: number, options?: ModuleGetOptions): Promise<Module>;
  };
  readonly manufacturers: ListResource<Manufacturer, ListParams> & {
    /** One manufacturer; `include: ['modules']` adds its modules. */
    get(id: number, options?: ManufacturerGetOptions): Promise<ManufacturerDetail>;
  };
  readonly standards: ListResource<Standard, ListParams>;
  readonly tags: ListResource<Tag, ListParams>;

  #rateLimit: RateLimit | undefined;
  readonly #transport: Transport;

  constructor(options: CatalogueClientOptions) {
    const maxRetries = options.maxRetries ?? 3;
    if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) {
      throw new RangeError('maxRetries must be a nonnegative integer');
    }
    if (!options.apiKey) throw new TypeError('apiKey is required');
    const baseUrl = new URL(options.baseUrl).href.replace(/\/+$/, '');
    let identity: Promise<string> | undefined;
    this.#transport = new Transport({
      baseUrl,
      apiKey: options.apiKey,
      maxRetries,
      maxRetryAfterSeconds: options.maxRetryAfter ?? DEFAULT_MAX_RETRY_AFTER_SECONDS,
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      cache: options.cache === false ? undefined : (options.cache ?? new MemoryEtagCache()),
      identity: () => {
        identity ??= keyIdentity(options.apiKey);
        return identity;
      },
      sleep: options.sleep ?? sleep,
      random: options.random ?? Math.random,
      now: options.now ?? Date.now,
      onRetry: options.onRetry,
      onRateLimit: (rateLimit) => {
        this.#rateLimit = rateLimit;
      },
    });
    const module = this.#detail<Module, ModuleGetOptions>('/modules');
    const manufacturer = this.#detail<ManufacturerDetail, ManufacturerGetOptions>('/manufacturers');
    this.modules = { ...this.#list<Module, ModuleListParams>('/modules'), get: module };
    this.manufacturers = { ...this.#list<Manufacturer, ListParams>('/manufacturers'), get: manufacturer };
    this.standards = this.#list<Standard, ListParams>('/standards');
    this.tags = this.#list<Tag, ListParams>('/tags');
  }

  /** The rate-limit headers of the last answer that had them (`undefined` before the first). */
  get rateLimit(): RateLimit | undefined {
    return this.#rateLimit && { ...this.#rateLimit };
  }

  #list<T, P extends ListParams>(path: string): ListResource<T, P> {
    const transport = this.#transport;
    const listPage = (params: P = {} as P): Promise<Page<T>> =>
      transport.get(path, queryOf(params), listShape as ShapeCheck<Page<T>>, params.signal);
    return {
      listPage,
      async *list(params: P = {} as P) {
        let cursor = params.cursor;
        do {
          const page = await listPage({ ...params, cursor });
          yield* page.data;
          cursor = page.next_cursor ?? undefined;
        } while (cursor !== undefined);
      },
    };
  }

  #detail<T, O extends CallOptions>(path: string) {
    return (id: number, options: O = {} as O): Promise<T> => {
      const { signal, ...params } = options;
      return this.#transport.get(
        `${path}/${encodeURIComponent(String(id))}`,
        queryOf(params),
        detailShape as ShapeCheck<T>,
        signal,
      );
    };
  }
}
