/**
 * `CatalogueClient`: the API's six GET routes as typed calls, with auto-paging, retries, conditional
 * requests and rate-limit headers. No dependency beyond the platform's `fetch` and Web Crypto (Node ≥ 20).
 */
import { type EtagCache, keyIdentity, MemoryEtagCache } from './cache.js';
import { remember } from './responses.js';
import { DEFAULT_MAX_RETRY_AFTER_SECONDS, type Sleep, sleep } from './retry.js';
import { apiKeyOf, baseUrlOf, WARNING_PREFIX, type Warn, warnerOf } from './settings.js';
import { DEFAULT_TIMEOUT_MS, timeoutOf } from './timeout.js';
import { type CallSettings, type ShapeCheck, Transport } from './transport.js';
import type {
  CallOptions,
  ClientWarning,
  Hook,
  ListParams,
  Logger,
  Manufacturer,
  ManufacturerDetailOf,
  ManufacturerGetOptions,
  ManufacturerRelation,
  ModuleDetailOf,
  ModuleField,
  ModuleGetOptions,
  ModuleListParams,
  ModuleOf,
  ModuleRelation,
  Page,
  RateLimit,
  RequestEvent,
  ResponseEvent,
  RetryEvent,
  Standard,
  Tag,
} from './types.js';
import { type RuntimeGlobals, userAgentOf } from './version.js';

export interface CatalogueClientOptions {
  /**
   * Ends in `/v1`, e.g. `http://127.0.0.1:8787/v1` (`npm start`) or `https://<domain>/v1`.
   * @default the `CATALOGUE_URL` environment variable
   */
  baseUrl?: string | undefined;
  /**
   * `pk_live_…`. Keep it on servers: never in browser code, URLs or logs.
   * @default the `CATALOGUE_KEY` environment variable
   */
  apiKey?: string | undefined;
  /** Retries after a 429, 502, 503, 504, network failure or timeout (default 3); other errors are never retried. */
  maxRetries?: number | undefined;
  /** A 429 or 503 whose `Retry-After` is longer than this (seconds, default 60) is thrown at once instead of waited out. */
  maxRetryAfter?: number | undefined;
  /**
   * Milliseconds each request may take, to the answer's last byte, before it is given up (and retried, as a
   * network failure is); after the last retry the call throws `CatalogueApiError` with code `timeout`. A call's
   * own `timeout` overrides it; `Infinity` for none. Your `signal` still aborts at any time.
   * @default 30000
   */
  timeout?: number | undefined;
  /**
   * Called before each retry with the failed attempt's status and code, the retry's number and the wait: an
   * event for your code (the warning through `logger` is sent as well). What it throws rejects the call.
   * @example onRetry: (r) => metrics.count(`catalogue.retry.${r.code}`)
   */
  onRetry?: ((event: RetryEvent) => void) | undefined;
  /**
   * Called before each request (the first and each retry) with its URL and headers, which it may change (e.g.
   * add `traceparent`); the key is added after it. Awaited; what it throws rejects the call.
   * @example onRequest: ({ headers }) => headers.set('traceparent', currentTraceparent())
   */
  onRequest?: Hook<RequestEvent> | undefined;
  /**
   * Called with each answer, whole, before the client acts on it — errors, 304s and answers that will be
   * retried included — with its status, request id, rate limits, headers and time taken. Awaited; what it throws
   * rejects the call.
   * @example onResponse: (r) => metrics.timing('catalogue.request', r.elapsedMs, { status: r.status })
   */
  onResponse?: Hook<ResponseEvent> | undefined;
  /**
   * Each warning as an object (`kind`, `message` and what it is about): when given, warnings go here instead
   * of the console (and to `logger` as well if you pass one). What it throws rejects the call.
   * @example onWarning: (warning) => log.warn(warning, warning.message)
   */
  onWarning?: ((warning: ClientWarning) => void) | undefined;
  /**
   * Where warnings go as text — each wait before a retry (a `Retry-After`, a backoff), a deprecated name, an
   * answer marked `Deprecation` — so that nothing is waited out silently. `false` silences them.
   * @default console, unless `onWarning` is given
   */
  logger?: Logger | false | undefined;
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
   * Every record, page after page, following the cursor until the last page.
   * @example for await (const tag of client.tags.list({ sort: 'name' })) console.log(tag.name);
   */
  list(params?: P): AsyncGenerator<T, void, undefined>;
  /**
   * One page: `{ data, nextCursor }`. Pass `nextCursor` back as `cursor`, with the same filters and sort.
   * @example const { data, nextCursor } = await client.tags.listPage({ limit: 10 });
   */
  listPage(params?: P): Promise<Page<T>>;
}

/**
 * The calls of `/modules`: the records' type follows `fields` and `include` (a literal list narrows it: with
 * `fields: ['name']` a record is `{ id, name }`, with `include: ['tags']` it has `tags`).
 */
export interface ModuleResource {
  /**
   * Every module, page after page.
   * @example for await (const m of client.modules.list({ manufacturerId: 1, fields: ['name'] })) m.name;
   */
  list<
    const F extends readonly ModuleField[] | undefined = undefined,
    const I extends readonly ModuleRelation[] | undefined = undefined,
  >(params?: ModuleListParams<F, I>): AsyncGenerator<ModuleOf<F, I>, void, undefined>;
  /**
   * One page: `{ data, nextCursor }`.
   * @example const { data } = await client.modules.listPage({ limit: 2, fields: ['name', 'hp'] }); // data[0]: { id, name, hp }
   */
  listPage<
    const F extends readonly ModuleField[] | undefined = undefined,
    const I extends readonly ModuleRelation[] | undefined = undefined,
  >(params?: ModuleListParams<F, I>): Promise<Page<ModuleOf<F, I>>>;
  /**
   * One module: every top-level field, and the relations asked for. A missing one throws `CatalogueApiError`
   * with code `not_found`.
   * @example const m = await client.modules.get(101, { include: ['tags'] }); m.name.length; m.tags.length;
   */
  get<const I extends readonly ModuleRelation[] | undefined = undefined>(
    id: number,
    options?: ModuleGetOptions<I>,
  ): Promise<ModuleDetailOf<I>>;
}

/** The calls of `/manufacturers`. */
export interface ManufacturerResource extends ListResource<Manufacturer, ListParams> {
  /**
   * One manufacturer; `include: ['modules']` adds its modules.
   * @example const m = await client.manufacturers.get(1, { include: ['modules'] }); m.modules.length;
   */
  get<const I extends readonly ManufacturerRelation[] | undefined = undefined>(
    id: number,
    options?: ManufacturerGetOptions<I>,
  ): Promise<ManufacturerDetailOf<I>>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `{"data": [records], "page": {"next_cursor": string | null}}` as a {@link Page}. */
function listShape<T>(body: unknown): Page<T> | undefined {
  // Destructured, not dotted: the fields come from an index signature (noPropertyAccessFromIndexSignature).
  if (!isRecord(body)) return undefined;
  const { data, page } = body;
  if (!Array.isArray(data) || !isRecord(page)) return undefined;
  const { next_cursor: next } = page;
  if (next !== null && typeof next !== 'string') return undefined;
  if (!data.every(isRecord)) return undefined;
  // next_cursor: the 0.1 name, kept until 0.4.0 (Page's @deprecated).
  return { data: data as T[], nextCursor: next, next_cursor: next };
}

/** `{"data": {record}}` */
function detailShape<T>(body: unknown): T | undefined {
  if (!isRecord(body)) return undefined;
  const { data } = body;
  if (!isRecord(data)) return undefined;
  const { id } = data;
  return typeof id === 'number' ? (data as T) : undefined;
}

/** The API's names of the client's parameters that differ (the client's are camelCase). */
const API_NAMES: Readonly<Record<string, string>> = { manufacturerId: 'manufacturer_id' };

/** Options of a call that are the client's, not parameters of the API. */
const CALL_OPTIONS: ReadonlySet<string> = new Set(['signal', 'timeout'] satisfies (keyof CallOptions)[]);

/**
 * The query string of `params`: the API's names, sorted; lists as sorted comma-joined sets (the API treats
 * them as sets, so equal requests share one URL and one cache entry); `signal`, `timeout` and `undefined` left out.
 * @example queryOf({ sort: 'name', fields: ['name', 'hp'], manufacturerId: 1 }) // → 'fields=hp,name&manufacturer_id=1&sort=name'
 */
export function queryOf(params: object): string {
  const parts: string[] = [];
  const named = Object.entries(params).map(([name, value]) => [API_NAMES[name] ?? name, value] as const);
  for (const [name, value] of named.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (CALL_OPTIONS.has(name) || value === undefined) continue;
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
 * // baseUrl and apiKey from CATALOGUE_URL and CATALOGUE_KEY (or pass them: { baseUrl, apiKey })
 * const client = new CatalogueClient();
 * for await (const m of client.modules.list({ manufacturerId: 1, sort: 'name', limit: 100 })) console.log(m.name);
 * const module = await client.modules.get(101, { include: ['ins'] }); // module.ins: Jack[]
 */
export class CatalogueClient {
  readonly modules: ModuleResource;
  readonly manufacturers: ManufacturerResource;
  readonly standards: ListResource<Standard, ListParams>;
  readonly tags: ListResource<Tag, ListParams>;

  #rateLimit: RateLimit | undefined;
  readonly #transport: Transport;
  readonly #warn: Warn;
  readonly #timeoutMs: number;
  /** Deprecated names this client has warned about (once each). */
  readonly #warned = new Set<string>();

  constructor(options: CatalogueClientOptions = {}) {
    const maxRetries = options.maxRetries ?? 3;
    if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) {
      throw new RangeError('maxRetries must be a nonnegative integer');
    }
    const apiKey = apiKeyOf(options.apiKey);
    const baseUrl = baseUrlOf(options.baseUrl);
    this.#timeoutMs = timeoutOf(options.timeout ?? DEFAULT_TIMEOUT_MS, 'timeout');
    this.#warn = warnerOf(options.logger, options.onWarning);
    let identity: Promise<string> | undefined;
    this.#transport = new Transport({
      baseUrl,
      apiKey,
      maxRetries,
      maxRetryAfterSeconds: options.maxRetryAfter ?? DEFAULT_MAX_RETRY_AFTER_SECONDS,
      timeoutMs: this.#timeoutMs,
      userAgent: userAgentOf(globalThis as RuntimeGlobals),
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      cache: options.cache === false ? undefined : (options.cache ?? new MemoryEtagCache()),
      identity: () => {
        identity ??= keyIdentity(apiKey);
        return identity;
      },
      sleep: options.sleep ?? sleep,
      random: options.random ?? Math.random,
      now: options.now ?? Date.now,
      onRetry: options.onRetry,
      onRequest: options.onRequest,
      onResponse: options.onResponse,
      warn: this.#warn,
      onRateLimit: (rateLimit) => {
        this.#rateLimit = rateLimit;
      },
    });
    // The generic signatures of ModuleResource describe what these untyped calls return.
    this.modules = {
      ...this.#list<never, ModuleListParams>('/modules'),
      get: this.#detail<never, CallOptions>('/modules'),
    } as unknown as ModuleResource;
    this.manufacturers = {
      ...this.#list<Manufacturer, ListParams>('/manufacturers'),
      get: this.#detail<never, CallOptions>('/manufacturers'),
    } as unknown as ManufacturerResource;
    this.standards = this.#list<Standard, ListParams>('/standards');
    this.tags = this.#list<Tag, ListParams>('/tags');
  }

  /** The rate-limit headers of the last answer that had them (`undefined` before the first). */
  get rateLimit(): RateLimit | undefined {
    return this.#rateLimit && { ...this.#rateLimit };
  }

  /** The parameters as sent: a deprecated name becomes the current one, with a warning the first time. */
  #current<P extends ListParams>(params: P): P {
    if (!('manufacturer_id' in params) || params.manufacturer_id === undefined) return params;
    const { manufacturer_id: old, ...rest } = params as P & ModuleListParams;
    if (rest.manufacturerId !== undefined && rest.manufacturerId !== old) {
      throw new TypeError(
        `manufacturerId (${rest.manufacturerId}) and its deprecated name manufacturer_id (${old}) differ`,
      );
    }
    if (!this.#warned.has('manufacturer_id')) {
      this.#warned.add('manufacturer_id');
      this.#warn({
        kind: 'deprecated-name',
        message: `${WARNING_PREFIX} manufacturer_id is deprecated since 0.2.0: use manufacturerId (removed in 0.4.0)`,
        name: 'manufacturer_id',
        replacement: 'manufacturerId',
      });
    }
    return { ...rest, manufacturerId: old } as P;
  }

  /** What the transport needs of a call's options: its signal, and its timeout or the client's. */
  #settings(options: CallOptions): CallSettings {
    const timeoutMs = options.timeout === undefined ? this.#timeoutMs : timeoutOf(options.timeout, 'timeout');
    return { signal: options.signal, timeoutMs };
  }

  #list<T, P extends ListParams>(path: string): ListResource<T, P> {
    const transport = this.#transport;
    // async: a wrong parameter rejects the call, as every other failure does.
    const listPage = async (params: P = {} as P): Promise<Page<T>> => {
      const query = queryOf(this.#current(params));
      const check = listShape as ShapeCheck<Page<T>>;
      const { body, response } = await transport.get(path, query, check, this.#settings(params));
      // Each record of the page answers `responseOf` too, as `list()` yields them one by one.
      remember(response, body, ...(body.data as object[]));
      return body;
    };
    return {
      listPage,
      async *list(params: P = {} as P) {
        let cursor = params.cursor;
        do {
          const page = await listPage({ ...params, cursor });
          yield* page.data;
          cursor = page.nextCursor ?? undefined;
        } while (cursor !== undefined);
      },
    };
  }

  #detail<T extends object, O extends CallOptions>(path: string) {
    return async (id: number, options: O = {} as O): Promise<T> => {
      const { body, response } = await this.#transport.get(
        `${path}/${encodeURIComponent(String(id))}`,
        queryOf(options),
        detailShape as ShapeCheck<T>,
        this.#settings(options),
      );
      remember(response, body);
      return body;
    };
  }
}
