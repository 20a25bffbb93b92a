/**
 * The reference oracle: a deliberately naive implementation of docs/api.md and its decisions, straight
 * from a snapshot. It filters, sorts, pages, projects and joins per request, on plain objects, and builds
 * every body with JSON.stringify. It shares no code with the builder or the proxy: only the snapshot types
 * and the constant field lists of the object format are imported.
 *
 * Cursors are opaque, so the oracle cannot make or read them. Instead a test keeps a {@link CursorBook}: when
 * the system under test hands out a cursor for a page the oracle also says has a successor, the test records
 * which (variant, offset) the cursor stands for, and the oracle answers a later request carrying it from that
 * offset.
 */
import type { Manufacturer, Module, Snapshot, Standard, Tag } from '../../builder/snapshot/snapshot.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../proxy/request/plan.js';
import {
  FRAGMENTS,
  MANUFACTURER_FIELDS,
  MODULE_FIELDS,
  MODULE_RELATIONS,
  STANDARD_FIELDS,
  TAG_FIELDS,
} from '../../store/schema.js';

/** Stands for a non-null `next_cursor` in the oracle's bodies; see {@link normaliseCursor}. */
export const CURSOR_PLACEHOLDER = '<cursor>';

export interface OracleRequest {
  method: string;
  /** The path, e.g. `/v1/modules/3`, without the query. */
  path: string;
  /** The raw query string without `?` ('' when none). */
  query: string;
  /** The `Authorization` header value, undefined when absent. */
  authorization?: string | undefined;
}

export interface NextPage {
  /** The oracle's own canonical name of the list variant (endpoint, filters, sort). */
  variant: string;
  offset: number;
}

export interface OracleResponse {
  status: number;
  /** The error code, for error responses. */
  code?: string;
  /** The JSON body of a 200 (also for HEAD: the body a GET would carry), cursor as {@link CURSOR_PLACEHOLDER}. */
  body?: string;
  /** The page after this one, when the body offers one. */
  next?: NextPage;
}

/** Which (variant, offset) each cursor handed out by the system under test stands for. */
export class CursorBook {
  readonly #pages = new Map<string, NextPage>();

  remember(cursor: string, next: NextPage): void {
    const known = this.#pages.get(cursor);
    if (known && (known.variant !== next.variant || known.offset !== next.offset)) {
      throw new Error(
        `cursor ${cursor} stands for two pages: ${JSON.stringify(known)} and ${JSON.stringify(next)}`,
      );
    }
    this.#pages.set(cursor, next);
  }

  lookup(cursor: string): NextPage | undefined {
    return this.#pages.get(cursor);
  }
}

/**
 * Replace the opaque `next_cursor` string of a list body with {@link CURSOR_PLACEHOLDER}, returning the body
 * and the cursor. Bodies are compared byte for byte otherwise.
 */
export function normaliseCursor(body: string): { body: string; cursor: string | null } {
  const match = /"next_cursor":("(?:[^"\\]|\\.)*")\}\}$/.exec(body);
  if (!match) return { body, cursor: null };
  const cursor = JSON.parse(match[1]!) as string;
  return {
    body: `${body.slice(0, match.index)}"next_cursor":${JSON.stringify(CURSOR_PLACEHOLDER)}}}`,
    cursor,
  };
}

// ---------------------------------------------------------------------------------------------------------

const POSITIVE = /^[1-9][0-9]*$/;
const NONNEGATIVE = /^(0|[1-9][0-9]*)$/;
const KEY_FORM = /^[Bb][Ee][Aa][Rr][Ee][Rr] (pk_live_[A-Za-z0-9_-]{22})$/;

type Endpoint = 'modules' | 'manufacturers' | 'standards' | 'tags';
type Route =
  | { kind: 'list'; endpoint: Endpoint }
  | { kind: 'module'; rawId: string }
  | { kind: 'manufacturer'; rawId: string };

const LIST_PARAMS = ['limit', 'cursor', 'sort'];
/** Parameters whose value is a set of names: `fields=a&fields=b` is `fields=a,b`. */
const LIST_VALUED_PARAMS = ['fields', 'include'];
const MODULE_FILTER_NAMES = ['manufacturer_id', 'hp', 'standard', 'tag'] as const;

/** Parameters each route defines (`q` is reserved everywhere and handled first). */
function parametersOf(route: Route): string[] {
  if (route.kind === 'module' || route.kind === 'manufacturer') return ['include'];
  if (route.endpoint === 'modules') return [...LIST_PARAMS, 'fields', 'include', ...MODULE_FILTER_NAMES];
  return LIST_PARAMS;
}

function routeOf(path: string): Route | undefined {
  const list = /^\/v1\/(modules|manufacturers|standards|tags)$/.exec(path);
  if (list) return { kind: 'list', endpoint: list[1] as Endpoint };
  const detail = /^\/v1\/(modules|manufacturers)\/([^/]+)$/.exec(path);
  if (detail) return { kind: detail[1] === 'modules' ? 'module' : 'manufacturer', rawId: detail[2]! };
  return undefined;
}

function decode(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

function integer(raw: string, pattern: RegExp): number | undefined {
  if (!pattern.test(raw)) return undefined;
  const value = Number(raw);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** A comma-separated set whose every member is in `allowed`; undefined when any is not. */
function nameSet(raw: string, allowed: readonly string[]): Set<string> | undefined {
  const names = raw.split(',');
  if (names.some((name) => !allowed.includes(name))) return undefined;
  return new Set(names);
}

/** Keys of nested objects in code-unit order, as a stable stringify writes them. */
function stable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stable);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) out[key] = stable((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

function pick(record: object, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = stable((record as Record<string, unknown>)[key]);
  return out;
}

const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

function ordered<T extends { id: number; name: string }>(records: readonly T[], sort: 'id' | 'name'): T[] {
  const copy = [...records];
  return sort === 'id'
    ? copy.sort((a, b) => a.id - b.id)
    : copy.sort((a, b) => collator.compare(a.name, b.name) || a.id - b.id);
}

function error(status: number, code: string): OracleResponse {
  return { status, code };
}

export interface OracleOptions {
  snapshot: Snapshot;
  /** Keys (plaintext) the key store accepts. */
  keys?: Iterable<string>;
}

export class Oracle {
  readonly #snapshot: Snapshot;
  readonly #keys: Set<string>;

  constructor(options: OracleOptions) {
    this.#snapshot = options.snapshot;
    this.#keys = new Set(options.keys ?? []);
  }

  /** Answer one request; `book` resolves cursors (an unknown cursor is `invalid_parameter`). */
  answer(request: OracleRequest, book: CursorBook = new CursorBook()): OracleResponse {
    if (!['GET', 'HEAD', 'OPTIONS'].includes(request.method)) return error(405, 'method_not_allowed');
    if (!request.authorization) return error(401, 'missing_authorization');
    const key = KEY_FORM.exec(request.authorization);
    if (!key) return error(401, 'malformed_authorization');
    if (!this.#keys.has(key[1]!)) return error(401, 'invalid_key');
    const route = routeOf(request.path);
    if (!route) return error(404, 'not_found');

    // Members split on '&' (empty ones skipped), name and value at the first '=', '+' is a space, then
    // percent-decoding as UTF-8; a name that does not decode is unknown, a value that does not is invalid.
    // A list-valued parameter of the route may also be spelled `name[]` (axios's repeated form).
    const defined = parametersOf(route);
    const params = new Map<string, (string | undefined)[]>();
    let undecodableName = false;
    for (const member of request.query.split('&')) {
      if (member === '') continue;
      const at = member.indexOf('=');
      const spelled = decode(at < 0 ? member : member.slice(0, at));
      const stem = spelled?.endsWith('[]') ? spelled.slice(0, -2) : undefined;
      const name = stem && LIST_VALUED_PARAMS.includes(stem) && defined.includes(stem) ? stem : spelled;
      const value = decode(at < 0 ? '' : member.slice(at + 1));
      if (name === undefined) undecodableName = true;
      else params.set(name, [...(params.get(name) ?? []), value]);
    }
    if (params.has('q')) return error(400, 'unsupported_parameter');
    if (undecodableName || [...params.keys()].some((name) => !defined.includes(name))) {
      return error(400, 'unknown_parameter');
    }
    // Every value given must be non-empty; a list-valued parameter given repeated is one comma list of all
    // its values, any other parameter is given once.
    const value = new Map<string, string>();
    for (const [name, values] of params) {
      if (values.some((v) => v === undefined || v === '')) return error(400, 'invalid_parameter');
      if (values.length !== 1 && !LIST_VALUED_PARAMS.includes(name)) return error(400, 'invalid_parameter');
      value.set(name, values.join(','));
    }
    const answer =
      route.kind === 'list' ? this.#list(route.endpoint, value, book) : this.#detail(route, value);
    // OPTIONS is routed and its parameters checked like a GET, but reads nothing: a well-formed request for
    // an absent record is still 204, while a cursor not made for this query is 400 as for GET.
    if (request.method === 'OPTIONS') return answer.status === 400 ? answer : { status: 204 };
    return answer;
  }

  #detail(route: Route & { rawId: string }, params: Map<string, string>): OracleResponse {
    const id = integer(route.rawId, POSITIVE);
    if (id === undefined) return error(400, 'invalid_parameter');
    const rawInclude = params.get('include');
    const relations = route.kind === 'module' ? MODULE_RELATIONS : ['modules'];
    const include = rawInclude === undefined ? new Set<string>() : nameSet(rawInclude, relations);
    if (!include) return error(400, 'invalid_parameter');
    if (route.kind === 'module') {
      const module = this.#snapshot.modules.find((m) => m.id === id);
      if (!module) return error(404, 'not_found');
      return { status: 200, body: JSON.stringify({ data: this.#moduleRecord(module, undefined, include) }) };
    }
    const manufacturer = this.#snapshot.manufacturers.find((m) => m.id === id);
    if (!manufacturer) return error(404, 'not_found');
    const record = pick(manufacturer, MANUFACTURER_FIELDS);
    if (include.has('modules')) {
      record.modules = ordered(
        this.#snapshot.modules.filter((m) => m.manufacturer_id === id),
        'id',
      ).map((m) => pick(m, MODULE_FIELDS));
    }
    return { status: 200, body: JSON.stringify({ data: record }) };
  }

  #list(endpoint: Endpoint, params: Map<string, string>, book: CursorBook): OracleResponse {
    let limit = DEFAULT_LIMIT;
    const rawLimit = params.get('limit');
    if (rawLimit !== undefined) {
      const parsed = integer(rawLimit, POSITIVE);
      if (parsed === undefined || parsed > MAX_LIMIT) return error(400, 'invalid_parameter');
      limit = parsed;
    }
    const rawSort = params.get('sort') ?? 'id';
    if (rawSort !== 'id' && rawSort !== 'name') return error(400, 'invalid_parameter');
    const sort: 'id' | 'name' = rawSort;

    let fields: Set<string> | undefined;
    let include = new Set<string>();
    const filters: Partial<Record<(typeof MODULE_FILTER_NAMES)[number], number>> = {};
    if (endpoint === 'modules') {
      const rawFields = params.get('fields');
      if (rawFields !== undefined) {
        fields = nameSet(rawFields, MODULE_FIELDS);
        if (!fields) return error(400, 'invalid_parameter');
      }
      const rawInclude = params.get('include');
      if (rawInclude !== undefined) {
        const parsed = nameSet(rawInclude, MODULE_RELATIONS);
        if (!parsed) return error(400, 'invalid_parameter');
        include = parsed;
      }
      for (const name of MODULE_FILTER_NAMES) {
        const raw = params.get(name);
        if (raw === undefined) continue;
        const parsed = integer(raw, name === 'standard' ? NONNEGATIVE : POSITIVE);
        if (parsed === undefined) return error(400, 'invalid_parameter');
        filters[name] = parsed;
      }
    }
    const variant = [
      endpoint,
      `sort=${sort}`,
      ...MODULE_FILTER_NAMES.filter((n) => filters[n] !== undefined).map((n) => `${n}=${filters[n]}`),
    ].join('&');

    let offset = 0;
    const cursor = params.get('cursor');
    if (cursor !== undefined) {
      const page = book.lookup(cursor);
      if (!page || page.variant !== variant) return error(400, 'invalid_parameter');
      offset = page.offset;
    }

    const records = this.#records(endpoint, filters, sort, fields, include);
    const data = records.slice(offset, offset + limit);
    const more = offset + limit < records.length;
    const body = JSON.stringify({ data, page: { next_cursor: more ? CURSOR_PLACEHOLDER : null } });
    return more ? { status: 200, body, next: { variant, offset: offset + limit } } : { status: 200, body };
  }

  #records(
    endpoint: Endpoint,
    filters: Partial<Record<(typeof MODULE_FILTER_NAMES)[number], number>>,
    sort: 'id' | 'name',
    fields: Set<string> | undefined,
    include: Set<string>,
  ): Record<string, unknown>[] {
    const s = this.#snapshot;
    switch (endpoint) {
      case 'standards':
        return ordered<Standard>(s.standards, sort).map((r) => pick(r, STANDARD_FIELDS));
      case 'tags':
        return ordered<Tag>(s.tags, sort).map((r) => pick(r, TAG_FIELDS));
      case 'manufacturers':
        return ordered<Manufacturer>(s.manufacturers, sort).map((r) => pick(r, MANUFACTURER_FIELDS));
      case 'modules': {
        const matching = s.modules.filter(
          (m) =>
            (filters.manufacturer_id === undefined || m.manufacturer_id === filters.manufacturer_id) &&
            (filters.hp === undefined || m.hp === filters.hp) &&
            (filters.standard === undefined || m.standard === filters.standard) &&
            (filters.tag === undefined || m.tag_ids.includes(filters.tag)),
        );
        return ordered(matching, sort).map((m) => this.#moduleRecord(m, fields, include));
      }
    }
  }

  /** A module record: keys id ∪ fields ∪ include, in the order of FRAGMENTS.module. */
  #moduleRecord(
    module: Module,
    fields: Set<string> | undefined,
    include: Set<string>,
  ): Record<string, unknown> {
    const record: Record<string, unknown> = {};
    for (const key of FRAGMENTS.module) {
      const isField = (MODULE_FIELDS as readonly string[]).includes(key);
      const wanted =
        key === 'id' || (isField ? (fields === undefined ? true : fields.has(key)) : include.has(key));
      if (!wanted) continue;
      if (key === 'tags') {
        record.tags = [...module.tag_ids]
          .sort((a, b) => a - b)
          .map((id) => {
            const tag = this.#snapshot.tags.find((t) => t.id === id);
            if (!tag) throw new Error(`module ${module.id} names missing tag ${id}`);
            return stable({ id: tag.id, name: tag.name, type: tag.type });
          });
      } else {
        record[key] = stable((module as unknown as Record<string, unknown>)[key]);
      }
    }
    return record;
  }
}
