/**
 * The client's public types. Records and parameter values come from `openapi-types.ts`, generated from
 * `proxy/openapi.json`, so they cannot drift from the contract the proxy is tested against.
 */
import type { components } from './openapi-types.js';

type Schemas = components['schemas'];
type Parameters = components['parameters'];

/** A module: `id`, the requested top-level fields (all by default) and the relations asked for with `include`. */
export type Module = Schemas['Module'];
/** A module's top-level fields, as `manufacturers.get(id, { include: ['modules'] })` lists them. */
export type ModuleSummary = Schemas['ModuleSummary'];
export type Manufacturer = Schemas['Manufacturer'];
export type ManufacturerDetail = Schemas['ManufacturerDetail'];
export type Standard = Schemas['Standard'];
export type Tag = Schemas['Tag'];
export type Jack = Schemas['Jack'];
export type Panel = Schemas['Panel'];
export type TagRef = Schemas['TagRef'];
/** The codes of the API's error envelope (spec §7). */
export type ApiErrorCode = Schemas['ErrorEnvelope']['error']['code'];

export type SortOrder = Parameters['sort'];
/** A module top-level field, for `fields`. */
export type ModuleField = Parameters['fields'][number];
/** A module relation, for `include`. */
export type ModuleRelation = Parameters['moduleInclude'][number];
export type ManufacturerRelation = Parameters['manufacturerInclude'][number];

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the request, or the wait before a retry; the call rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
}

/** Parameters of every list endpoint. */
export interface ListParams extends CallOptions {
  /** Records per page, 1–100 (the API's default is 50). */
  limit?: number | undefined;
  /** `page.next_cursor` of an earlier page (the auto-pager follows it for you). */
  cursor?: string | undefined;
  sort?: SortOrder | undefined;
}

/** Parameters of `modules.list` and `modules.listPage`; filters combine (AND). */
export interface ModuleListParams extends ListParams {
  manufacturer_id?: number | undefined;
  hp?: number | undefined;
  /** `0` is Eurorack 3U. */
  standard?: number | undefined;
  tag?: number | undefined;
  /** Sparse fields; `id` is always kept. Sent comma-joined, sorted (the API treats it as a set). */
  fields?: readonly ModuleField[] | undefined;
  include?: readonly ModuleRelation[] | undefined;
}

export interface ModuleGetOptions extends CallOptions {
  include?: readonly ModuleRelation[] | undefined;
}

export interface ManufacturerGetOptions extends CallOptions {
  include?: readonly ManufacturerRelation[] | undefined;
}

/** One page of a list: the records and the cursor of the next page (`null` on the last page). */
export interface Page<T> {
  data: T[];
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
