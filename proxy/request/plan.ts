/**
 * `parseRequest(method, path, query)`: the pure translation of a request line into a typed, canonical plan
 * naming what to read, or the error to answer with. Authentication is not its business: the handler applies
 * the outcome in the order of docs/api.md#errors (405 → 401 → 429 → 404 route → 400 → 404 resource).
 */

import { suggest, suggestionText } from '../../cli/suggest.js';
import {
  type ListEndpoint,
  MODULE_FIELDS,
  MODULE_FILTERS,
  MODULE_RELATIONS,
  type ModuleField,
  type ModuleFilters,
  type ModuleRelation,
  type SortOrder,
  variantKey,
} from '../../store/schema.js';
import { BoundedMemo } from '../cache/memo.js';
import { type ApiError, apiError, firstByPrecedence } from '../http/errors.js';
import { echoName } from './echo.js';
import { parseNameSet, parseNonnegativeInteger, parsePositiveInteger } from './grammar.js';
import { fullMask, moduleMask } from './mask.js';
import { splitQuery } from './query.js';
import {
  ALLOW_HEADER,
  ALLOWED_METHODS,
  type AllowedMethod,
  ROUTES,
  type RouteName,
  type RouteTemplate,
} from './routes.js';

/** `limit` when absent, and its largest value (docs/api.md#parameters); a page then spans at most two stored segments. */
export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 100;

export interface ListPlan {
  kind: 'list';
  endpoint: ListEndpoint;
  filters: ModuleFilters;
  sort: SortOrder;
  /** The list variant's canonical name ({@link variantKey}); cursors are bound to it. */
  variant: string;
  limit: number;
  cursor: string | undefined;
  /** Fragments to keep of each record (fields and included relations). */
  mask: number;
}

export interface DetailPlan {
  kind: 'detail';
  resource: 'modules' | 'manufacturers';
  id: number;
  mask: number;
}

export type Plan = ListPlan | DetailPlan;

export type ParseOutcome =
  | { ok: true; method: AllowedMethod; route: RouteTemplate; plan: Plan }
  | { ok: false; route: RouteName; error: ApiError };

type ValueOutcome = { ok: true; value: unknown } | { ok: false; message: string };
type ValueParser = (text: string) => ValueOutcome;

const valueOrMessage =
  <T>(parse: (text: string) => T | undefined, message: string): ValueParser =>
  (text) => {
    const value = parse(text);
    return value === undefined ? { ok: false, message } : { ok: true, value };
  };

const PAGING: Record<string, ValueParser> = {
  limit: valueOrMessage((text) => {
    const value = parsePositiveInteger(text);
    return value !== undefined && value <= MAX_LIMIT ? value : undefined;
  }, `limit must be an integer from 1 to ${MAX_LIMIT}.`),
  // Checked against its query by the handler (it needs the cursor secret); any non-empty text here.
  cursor: (text) => ({ ok: true, value: text }),
  sort: (text) => {
    if (text === 'id' || text === 'name') return { ok: true, value: text };
    // The value itself is never echoed; only the defined value it was probably meant to be.
    const meant = suggest(text, ['id', 'name']);
    return {
      ok: false,
      message: `sort must be "id" or "name"${meant ? suggestionText(meant, 'values') : '.'}`,
    };
  },
};

const MODULE_INCLUDE = valueOrMessage(
  (text) => parseNameSet(text, MODULE_RELATIONS),
  `include must be a comma-separated list of: ${MODULE_RELATIONS.join(', ')}.`,
);

const MODULE_LIST: Record<string, ValueParser> = {
  ...PAGING,
  fields: valueOrMessage(
    (text) => parseNameSet(text, MODULE_FIELDS),
    `fields must be a comma-separated list of: ${MODULE_FIELDS.join(', ')} (relations are asked for with include).`,
  ),
  include: MODULE_INCLUDE,
  manufacturer_id: valueOrMessage(parsePositiveInteger, 'manufacturer_id must be a positive integer.'),
  hp: valueOrMessage(parsePositiveInteger, 'hp must be a positive integer.'),
  standard: valueOrMessage(parseNonnegativeInteger, 'standard must be a nonnegative integer.'),
  tag: valueOrMessage(parsePositiveInteger, 'tag must be a positive integer.'),
};

const MANUFACTURER_DETAIL: Record<string, ValueParser> = {
  include: valueOrMessage((text) => parseNameSet(text, ['modules'] as const), 'include must be "modules".'),
};

interface RouteMatch {
  route: RouteTemplate;
  parameters: Record<string, ValueParser>;
  /** The raw `{id}` path segment of a detail route. */
  id?: string;
}

function matchRoute(path: string): RouteMatch | undefined {
  switch (path) {
    case ROUTES.modules:
      return { route: ROUTES.modules, parameters: MODULE_LIST };
    case ROUTES.manufacturers:
      return { route: ROUTES.manufacturers, parameters: PAGING };
    case ROUTES.standards:
      return { route: ROUTES.standards, parameters: PAGING };
    case ROUTES.tags:
      return { route: ROUTES.tags, parameters: PAGING };
  }
  const detail = /^\/v1\/(modules|manufacturers)\/([^/]+)$/.exec(path);
  if (!detail) return undefined;
  return detail[1] === 'modules'
    ? { route: ROUTES.module, parameters: { include: MODULE_INCLUDE }, id: detail[2]! }
    : { route: ROUTES.manufacturer, parameters: MANUFACTURER_DETAIL, id: detail[2]! };
}

/**
 * The message for a parameter the endpoint does not define: its name (cut and escaped, never a key) and the
 * defined parameter it was probably meant to be, or else the ones the endpoint has.
 * @example unknownParameterMessage('Limit', ['limit', 'cursor', 'sort'])
 *   // → '`Limit` is not a parameter of this endpoint; parameter names are case-sensitive: did you mean `limit`?'
 * @example unknownParameterMessage('foo', ['limit', 'cursor', 'sort'])
 *   // → '`foo` is not a parameter of this endpoint; its parameters are: limit, cursor, sort.'
 */
export function unknownParameterMessage(name: string | undefined, defined: readonly string[]): string {
  const parameters = `its parameters are: ${defined.join(', ')}.`;
  if (name === undefined) {
    return `A parameter name with a malformed percent-encoding is not a parameter of this endpoint; ${parameters}`;
  }
  const echoed = echoName(name);
  if (echoed === undefined) {
    return 'A parameter name that looks like an API key is not a parameter of this endpoint; send the key only in the Authorization header.';
  }
  const meant = suggest(name, defined);
  return `${echoed} is not a parameter of this endpoint${meant ? suggestionText(meant, 'parameter names') : `; ${parameters}`}`;
}

/**
 * The list-valued parameters: sets of names, which may be given repeated — `fields=name&fields=hp` is the set
 * `fields=name,hp` (same plan, so the same bytes, ETag and cursor binding). Repeating an array parameter is
 * what OpenAPI generators send by default (`style: form`, `explode: true`); axios (Orval's default client) and
 * qs spell it `fields[]=name&fields[]=hp`, which is the same parameter. Every other parameter is given once.
 */
const LIST_VALUED: ReadonlySet<string> = new Set(['fields', 'include']);

/**
 * The parameter a query name stands for: `fields[]` is `fields` where the endpoint has that list-valued
 * parameter; any other name is itself.
 * @example parameterName('include[]', { include: … }) // → 'include'
 * @example parameterName('limit[]', { limit: … }) // → 'limit[]' (unknown: only a list may be repeated)
 */
function parameterName(name: string, allowed: Record<string, ValueParser>): string {
  if (!name.endsWith('[]')) return name;
  const stem = name.slice(0, -2);
  return LIST_VALUED.has(stem) && Object.hasOwn(allowed, stem) ? stem : name;
}

/**
 * The message for a parameter that is not list-valued but was given again: send it once, and which of the
 * endpoint's parameters may be repeated, when it has any.
 * @example repeatedMessage('limit', ['limit', 'fields', 'include']) // → 'limit was given more than once; send it once (only fields and include may be repeated).'
 * @example repeatedMessage('limit', ['limit', 'cursor', 'sort']) // → 'limit was given more than once; send it once.'
 */
function repeatedMessage(name: string, defined: readonly string[]): string {
  const repeatable = defined.filter((parameter) => LIST_VALUED.has(parameter));
  const which = repeatable.length === 0 ? '' : ` (only ${repeatable.join(' and ')} may be repeated)`;
  return `${name} was given more than once; send it once${which}.`;
}

/** The raw values of the query's defined parameters (list-valued ones joined by commas), or every problem found. */
function collectParameters(query: string, allowed: Record<string, ValueParser>) {
  const errors: ApiError[] = [];
  const texts = new Map<string, string>();
  const seen = new Set<string>();
  const defined = Object.keys(allowed);
  for (const { name: given, value } of splitQuery(query)) {
    const name = given === undefined ? undefined : parameterName(given, allowed);
    if (name === 'q') {
      errors.push(apiError('unsupported_parameter', 'The parameter "q" is reserved and not supported yet.'));
      continue;
    }
    if (name === undefined || !Object.hasOwn(allowed, name)) {
      errors.push(apiError('unknown_parameter', unknownParameterMessage(name, defined)));
      continue;
    }
    const again = seen.has(name);
    seen.add(name);
    if (again && !LIST_VALUED.has(name)) {
      errors.push(apiError('invalid_parameter', repeatedMessage(name, defined)));
    } else if (value === undefined) {
      errors.push(apiError('invalid_parameter', `${name} is not valid percent-encoded UTF-8.`));
    } else if (value === '') {
      errors.push(
        apiError('invalid_parameter', `${name} is empty: send it once, with a value, or leave it out.`),
      );
    } else {
      const earlier = texts.get(name);
      texts.set(name, earlier === undefined ? value : `${earlier},${value}`);
    }
  }
  return { texts, errors };
}

/** The parameters of the query, validated against `allowed`, or every problem found. */
function readParameters(query: string, allowed: Record<string, ValueParser>) {
  const { texts, errors } = collectParameters(query, allowed);
  const values = new Map<string, unknown>();
  for (const [name, text] of texts) {
    const parsed = allowed[name]!(text);
    if (parsed.ok) values.set(name, parsed.value);
    else errors.push(apiError('invalid_parameter', parsed.message));
  }
  return { values, errors };
}

/**
 * Parse a request line into a plan. Paths and parameters are case-sensitive; integers are canonical.
 * @example parseRequest('GET', '/v1/modules', 'sort=name&hp=4&limit=10')
 *   // → { ok: true, route: '/v1/modules', plan: { kind: 'list', variant: 'modules?hp=4&sort=name', limit: 10, … } }
 * @example parseRequest('GET', '/v1/modules', 'fields=hp,name') // same plan as 'fields=name,hp,hp'
 * @example parseRequest('GET', '/v1/modules', 'fields=hp&fields=name') // the same plan again
 * @example parseRequest('GET', '/v1/modules', 'limit=1&limit=2') // → invalid_parameter: send it once
 * @example parseRequest('GET', '/v1/modules/abc', '') // → invalid_parameter (the path id is malformed)
 * @example parseRequest('GET', '/v1/nope', 'q=x') // → not_found (unknown route before parameters)
 * @example parseRequest('POST', '/v1/nope', '') // → method_not_allowed
 */
export function parseRequest(method: string, path: string, query: string): ParseOutcome {
  const match = matchRoute(path);
  const route: RouteName = match?.route ?? 'unknown';
  if (!(ALLOWED_METHODS as readonly string[]).includes(method)) {
    return {
      ok: false,
      route,
      error: apiError(
        'method_not_allowed',
        `The method ${/^[A-Z]{1,16}$/.test(method) ? method : 'used'} is not allowed; use ${ALLOW_HEADER}.`,
      ),
    };
  }
  if (!match) return { ok: false, route, error: apiError('not_found', 'There is no such endpoint.') };

  const { values, errors } = readParameters(query, match.parameters);
  let id: number | undefined;
  if (match.id !== undefined) {
    id = parsePositiveInteger(match.id);
    const what = match.route === ROUTES.module ? 'module' : 'manufacturer';
    if (id === undefined)
      errors.unshift(apiError('invalid_parameter', `The ${what} id in the path must be a positive integer.`));
  }
  const error = firstByPrecedence(errors);
  if (error) return { ok: false, route: match.route, error };

  return {
    ok: true,
    method: method as AllowedMethod,
    route: match.route,
    plan: planFor(match.route, values, id),
  };
}

function planFor(route: RouteTemplate, values: Map<string, unknown>, id: number | undefined): Plan {
  const include = values.get('include') as string[] | undefined;
  switch (route) {
    case ROUTES.module:
      return {
        kind: 'detail',
        resource: 'modules',
        id: id!,
        mask: moduleMask(undefined, (include ?? []) as ModuleRelation[]),
      };
    case ROUTES.manufacturer:
      return {
        kind: 'detail',
        resource: 'manufacturers',
        id: id!,
        mask: include ? fullMask('manufacturerDetail') : fullMask('manufacturer'),
      };
    default: {
      const endpoint = route.slice('/v1/'.length) as ListEndpoint;
      const filters: ModuleFilters = {};
      for (const name of MODULE_FILTERS) {
        const value = values.get(name) as number | undefined;
        if (value !== undefined) filters[name] = value;
      }
      const sort = (values.get('sort') as SortOrder | undefined) ?? 'id';
      return {
        kind: 'list',
        endpoint,
        filters,
        sort,
        variant: variantKey(endpoint, filters, sort),
        limit: (values.get('limit') as number | undefined) ?? DEFAULT_LIMIT,
        cursor: values.get('cursor') as string | undefined,
        mask:
          endpoint === 'modules'
            ? moduleMask(
                values.get('fields') as ModuleField[] | undefined,
                (include ?? []) as ModuleRelation[],
              )
            : fullMask(
                endpoint === 'manufacturers' ? 'manufacturer' : endpoint === 'standards' ? 'standard' : 'tag',
              ),
      };
    }
  }
}

/**
 * Parsed request lines, by method, path and query: the few URLs of a hot working set are parsed once, not
 * per request. Outcomes are never mutated. Bounded by count and by line length (a flood of distinct URLs
 * only empties it now and then).
 */
const PARSE_MEMO_ENTRIES = 2_048;
const PARSE_MEMO_MAX_LINE = 512;

/**
 * A {@link parseRequest} that remembers the outcomes of recent request lines (the same plan object each
 * time, which the catalogue reader keys its per-plan facts on).
 * @example const parse = requestParser(); parse('GET', '/v1/tags', '') === parse('GET', '/v1/tags', '')
 */
export function requestParser(): (method: string, path: string, query: string) => ParseOutcome {
  const memo = new BoundedMemo<ParseOutcome>(PARSE_MEMO_ENTRIES);
  return (method, path, query) => {
    const line = `${method}\n${path}\n${query}`;
    if (line.length > PARSE_MEMO_MAX_LINE) return parseRequest(method, path, query);
    return memo.get(line, () => parseRequest(method, path, query));
  };
}
