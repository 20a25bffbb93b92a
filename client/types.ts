/**
 * The client's public types. Records and parameter values come from `openapi-types.ts`, generated from
 * `proxy/openapi.json`, so they cannot drift from the contract the proxy is tested against.
 *
 * Names: what the client makes up is camelCase (methods, options, parameters, `Page.nextCursor`, errors, rate
 * limits); records are the API's JSON as it is sent, with the API's snake_case field names — the names
 * `fields` takes.
 */
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
/** The codes of the API's error envelope (docs/api.md#errors): a closed list within /v1. */
export type ApiErrorCode = Schemas['ErrorEnvelope']['error']['code'];

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
   * `manufacturer_id`, with a warning through `logger`; removed in 0.3.0.
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
  /** @deprecated Since 0.2.0: use `nextCursor` (the client's names are camelCase); removed in 0.3.0. */
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
  /** The API's `error.code` (`rate_limit_exceeded`, `origin_unavailable`, …), `invalid_response` or `network_error`. */
  code: string;
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
 * Where the client's warnings go (a wait before a retry, a deprecated name or answer): `console` by default.
 * @example logger: { warn: (message) => log.warn(message) }
 */
export interface Logger {
  warn(message: string): void;
}
