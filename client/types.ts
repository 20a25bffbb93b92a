/**
 * The client's public types. Records and parameter values come from `openapi-types.ts`, generated from
 * `proxy/openapi.json`, so they cannot drift from the contract the proxy is tested against.
 *
 * Names: what the client makes up is camelCase (methods, options, parameters, `Page.nextCursor`, errors, rate
 * limits); records are the API's JSON as it is sent, with the API's snake_case field names — the names
 * `fields` takes.
 */
import type { ErrorCode } from './errors.js';
import type { components } from './openapi-types.js';

type Schemas = components['schemas'];
type Parameters = components['parameters'];

/** `T` as one object type: editors show `{ id: number; name: string }`, not an intersection. */
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** Every top-level field of a module: what a detail always carries, and a list without `fields`. */
export type ModuleFields = Schemas['ModuleSummary'];
/** A module top-level field, for `fields`. */
export type ModuleField = Parameters['fields'][number];
/** The related data of a module, each asked for with `include`. */
export interface ModuleRelations {
  ins: Jack[];
  outs: Jack[];
  tags: TagRef[];
  panels: Panel[];
}
/** A module relation, for `include`. */
export type ModuleRelation = Parameters['moduleInclude'][number];

/**
 * A module as `modules.get` answers it: every top-level field, and the relations `R` asked for with `include`.
 * @example const m: Module<'tags'> = await client.modules.get(101, { include: ['tags'] }); m.tags.length;
 */
export type Module<R extends ModuleRelation = never> = Simplify<ModuleFields & Pick<ModuleRelations, R>>;
/** A module's top-level fields, as `manufacturers.get(id, { include: ['modules'] })` lists them. */
export type ModuleSummary = ModuleFields;
/**
 * A module of a list: `id` and the fields `F` asked for with `fields` (every top-level field without it), and
 * the relations `R` asked for with `include`.
 * @example ModuleListItem<'name'> // → { id: number; name: string }
 */
export type ModuleListItem<F extends ModuleField = ModuleField, R extends ModuleRelation = never> = Simplify<
  Pick<ModuleFields, 'id' | F> & Pick<ModuleRelations, R>
>;

export type Manufacturer = Schemas['Manufacturer'];
/** The related data of a manufacturer, asked for with `include`. */
export interface ManufacturerRelations {
  modules: ModuleSummary[];
}
export type ManufacturerRelation = Parameters['manufacturerInclude'][number];
/** A manufacturer as `manufacturers.get` answers it, with the relations `R` asked for with `include`. */
export type ManufacturerDetail<R extends ManufacturerRelation = never> = Simplify<
  Manufacturer & Pick<ManufacturerRelations, R>
>;
export type Standard = Schemas['Standard'];
export type Tag = Schemas['Tag'];
export type Jack = Schemas['Jack'];
export type Panel = Schemas['Panel'];
export type TagRef = Schemas['TagRef'];
export type SortOrder = Parameters['sort'];

/**
 * The relations an `include` of type `I` brings: exactly those of a literal list, each maybe for a list whose
 * members are not known when compiling (a `ModuleRelation[]` variable), none without `include`.
 */
type Included<Relations, I> = I extends readonly (keyof Relations)[]
  ? number extends I['length']
    ? Partial<Relations>
    : Pick<Relations, I[number]>
  : unknown;

/** The top-level fields a `fields` of type `F` keeps, likewise (all of them without `fields`; `id` always). */
type Selected<F> = F extends readonly ModuleField[]
  ? number extends F['length']
    ? Pick<ModuleFields, 'id'> & Partial<ModuleFields>
    : Pick<ModuleFields, 'id' | F[number]>
  : ModuleFields;

/** A module of `modules.list` / `listPage` with these `fields` and `include`. */
export type ModuleOf<F, I> = Simplify<Selected<F> & Included<ModuleRelations, I>>;
/** A module of `modules.get` with this `include`. */
export type ModuleDetailOf<I> = Simplify<ModuleFields & Included<ModuleRelations, I>>;
/** A manufacturer of `manufacturers.get` with this `include`. */
export type ManufacturerDetailOf<I> = Simplify<Manufacturer & Included<ManufacturerRelations, I>>;

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the request, or the wait before a retry; the call rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /**
   * Milliseconds each request of this call may take, to its last byte, before it is given up as a `timeout`
   * (and retried like a network failure): overrides the client's `timeout`. `Infinity` for none.
   */
  timeout?: number | undefined;
}

/** Parameters of every list endpoint. */
export interface ListParams extends CallOptions {
  /** Records per page, 1–100 (the API's default is 50). */
  limit?: number | undefined;
  /** `nextCursor` of an earlier page (the auto-pager follows it for you). */
  cursor?: string | undefined;
  sort?: SortOrder | undefined;
}

/**
 * Parameters of `modules.list` and `modules.listPage`; filters combine (AND). `F` and `I` are the types of
 * `fields` and `include`: the records' type follows them.
 */
export interface ModuleListParams<
  F extends readonly ModuleField[] | undefined = readonly ModuleField[] | undefined,
  I extends readonly ModuleRelation[] | undefined = readonly ModuleRelation[] | undefined,
> extends ListParams {
  /** Only modules of this manufacturer (the API's `manufacturer_id`). */
  manufacturerId?: number | undefined;
  /**
   * @deprecated Since 0.2.0: use `manufacturerId` (the client's names are camelCase). Still sent as
   * `manufacturer_id`, with a warning through `logger`; removed in 0.4.0.
   */
  manufacturer_id?: number | undefined;
  hp?: number | undefined;
  /** `0` is Eurorack 3U. */
  standard?: number | undefined;
  tag?: number | undefined;
  /** Sparse fields; `id` is always kept. Sent comma-joined, sorted (the API treats it as a set). */
  fields?: F;
  include?: I;
}

export interface ModuleGetOptions<
  I extends readonly ModuleRelation[] | undefined = readonly ModuleRelation[] | undefined,
> extends CallOptions {
  include?: I;
}

export interface ManufacturerGetOptions<
  I extends readonly ManufacturerRelation[] | undefined = readonly ManufacturerRelation[] | undefined,
> extends CallOptions {
  include?: I;
}

/** One page of a list: the records and the cursor of the next page (`null` on the last page). */
export interface Page<T> {
  data: T[];
  /** The API's `page.next_cursor`: pass it back as `cursor`; `null` on the last page. */
  nextCursor: string | null;
  /** @deprecated Since 0.2.0: use `nextCursor` (the client's names are camelCase); removed in 0.4.0. */
  next_cursor: string | null;
}

/**
 * The rate-limit headers of the last answer that carried them (every answer to an authenticated request
 * does, 304 and 429 included). `reset` is the Unix time in seconds of the start of the current minute window.
 */
export interface RateLimit {
  limitMinute: number;
  remainingMinute: number;
  limitMonth: number;
  remainingMonth: number;
  reset: number;
}

/**
 * What `onRetry` is told before each retry: why the attempt failed and how long the client now waits.
 * @example { status: 429, code: 'rate_limit_exceeded', attempt: 1, waitMs: 17000, url: 'http://127.0.0.1:8787/v1/tags', requestId: 'req_…' }
 */
export interface RetryEvent {
  /** HTTP status of the failed attempt: 429, 502, 503 or 504; `0` when no answer came (network failure). */
  status: number;
  /** The API's `error.code` (`rate_limit_exceeded`, `origin_unavailable`, …), `invalid_response`, `network_error` or `timeout`. */
  code: ErrorCode;
  /** Which retry this is: 1 before the first retry, up to `maxRetries`. */
  attempt: number;
  /** Milliseconds the client waits before sending the retry. */
  waitMs: number;
  /** The URL being retried (it never holds the API key). */
  url: string;
  /** The failed answer's request id, when it had one. */
  requestId: string | undefined;
}

/**
 * One answer of the API, as the client saw it: `responseOf(result)` for what a call returned (a page, a record,
 * each record of a walk) or threw, and what `onResponse` is told.
 * @example { status: 200, requestId: 'req_…', rateLimit: { limitMinute: 60, remainingMinute: 59, … }, url: 'http://127.0.0.1:8787/v1/tags', retry: 0, headers }
 */
export interface ResponseInfo {
  /** 200; 304 when the ETag cache's copy was still current (the result is that copy); an error's own status. */
  status: number;
  /** `X-Request-Id`: quote it when reporting a problem. */
  requestId: string | undefined;
  /** The answer's rate-limit headers (every answer to an authenticated request has them). */
  rateLimit: RateLimit | undefined;
  /** The URL requested (it never holds the API key). */
  url: string;
  /** 0 when the first request was answered, else the number of the retry that was. */
  retry: number;
  /** All of the answer's headers. */
  headers: Headers;
}

/** A hook of the client: told of an event; may be async (it is awaited). */
export type Hook<E> = ((event: E) => void) | ((event: E) => Promise<void>);

/** What `onRequest` is told before each request (the first and every retry). */
export interface RequestEvent {
  /** The URL about to be requested (it never holds the API key). */
  url: string;
  /** 0 for the first request of a call, else the retry's number (as `RetryEvent.attempt`). */
  retry: number;
  /**
   * The headers about to be sent, which the hook may change (add `traceparent`, replace `user-agent`). Without
   * `Authorization`: the key is added after the hook, so a hook that logs them never logs the key.
   */
  headers: Headers;
}

/** What `onResponse` is told of each answer, whole, before the client acts on it (errors and 304s included). */
export interface ResponseEvent extends ResponseInfo {
  /** Milliseconds from sending the request to the answer's last byte. */
  elapsedMs: number;
}

/**
 * A warning, as `onWarning` is given it: `message` is what `logger` is given; the rest says what it is about.
 * @example { kind: 'retry', message: '[@catalogue/read-api-client] GET /v1/tags: 429 rate_limit_exceeded (req_…); waiting 17.3 s before retry 1 of 3', retry: { status: 429, … } }
 */
export type ClientWarning =
  | { kind: 'retry'; message: string; retry: RetryEvent }
  | { kind: 'deprecated-name'; message: string; name: string; replacement: string }
  | {
      kind: 'deprecated-answer';
      message: string;
      url: string;
      /** The `Deprecation` header (RFC 9745), e.g. `@1798761600`. */
      deprecation: string;
      /** The `Sunset` header (RFC 8594), an HTTP date after which it may stop working. */
      sunset: string | undefined;
      /** The notice the `Link` header points to with `rel="deprecation"`. */
      link: string | undefined;
    };

/**
 * Where the client's warnings go (a wait before a retry, a deprecated name or answer): `console` by default.
 * @example logger: { warn: (message) => log.warn(message) }
 */
export interface Logger {
  warn(message: string): void;
}
