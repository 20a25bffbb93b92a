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
  signal?: AbortSignal;
}

/** Parameters of every list endpoint. */
export interface ListParams extends CallOptions {
  /** Records per page, 1–100 (the API's default is 50). */
  limit?: number;
  /** `page.next_cursor` of an earlier page (the auto-pager follows it for you). */
  cursor?: string;
  sort?: SortOrder;
}

/** Parameters of `modules.list` and `modules.listPage`; filters combine (AND). */
export interface ModuleListParams extends ListParams {
  manufacturer_id?: number;
  hp?: number;
  /** `0` is Eurorack 3U. */
  standard?: number;
  tag?: number;
  /** Sparse fields; `id` is always kept. Sent comma-joined, sorted (the API treats it as a set). */
  fields?: readonly ModuleField[];
  include?: readonly ModuleRelation[];
}

export interface ModuleGetOptions extends CallOptions {
  include?: readonly ModuleRelation[];
}

export interface ManufacturerGetOptions extends CallOptions {
  include?: readonly ManufacturerRelation[];
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
