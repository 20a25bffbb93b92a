/**
 * What both reference pages show of real exchanges with their API: the request and the answer as HTTP/1.1
 * text, in a block that unfolds; the answers as the OpenAPI examples of their operation's responses; the stable
 * request id an example is given. Pure.
 */
import { createHash } from 'node:crypto';
import { STATUS_CODES } from 'node:http';

/** A request and the answer to it, as a page shows them (lower-case header names). */
export interface ShownExchange {
  request: {
    method: string;
    /** Path and query, e.g. `/v1/modules?limit=2`. */
    target: string;
    headers: Record<string, string>;
    /** The request's body as text, when it has one. */
    body?: string | undefined;
  };
  status: number;
  headers: Record<string, string>;
  /** The answer's body as text, `undefined` when there is none. */
  body: string | undefined;
}

/**
 * An exchange as HTTP/1.1 text: the request line, headers and body, then the status line and headers, and the
 * answer's body when `withBody`.
 * @example httpText(exchange, false) // → 'GET /v1/tags HTTP/1.1\nAuthorization: Bearer pk_live_…\n\nHTTP/1.1 200 OK\n…'
 */
export function httpText(exchange: ShownExchange, withBody: boolean): string {
  const { request } = exchange;
  const sent = Object.entries(request.headers).map(([name, value]) => `${headerCase(name)}: ${value}`);
  const received = Object.entries(exchange.headers).map(([name, value]) => `${name}: ${value}`);
  return [
    `${request.method} ${request.target} HTTP/1.1`,
    ...sent,
    ...(request.body === undefined ? [] : ['', request.body]),
    '',
    `HTTP/1.1 ${exchange.status} ${STATUS_CODES[exchange.status] ?? ''}`.trimEnd(),
    ...received,
    ...(withBody && exchange.body ? ['', exchange.body] : []),
  ].join('\n');
}

/** `if-none-match` → `If-None-Match`, as a client writes it. */
const headerCase = (name: string) =>
  name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());

/**
 * Markdown of an exchange that unfolds: its title, then the HTTP text.
 * @example unfolding('Example', 'GET / HTTP/1.1', false) // → '<details>\n<summary>Example</summary>\n\n```http\nGET / HTTP/1.1\n```\n\n</details>'
 */
export function unfolding(title: string, text: string, open: boolean): string {
  return `<details${open ? ' open' : ''}>\n<summary>${title}</summary>\n\n\`\`\`http\n${text}\n\`\`\`\n\n</details>`;
}

/**
 * A stable request id for an example: `req_` and 16 base64url characters of a hash of its name, so a page does
 * not change from build to build while the behaviour does not.
 * @example exampleRequestId('getModuleList 200 first-page') // → 'req_…' (the same every time)
 */
export function exampleRequestId(name: string): string {
  return `req_${createHash('sha256').update(name).digest('base64url').slice(0, 16)}`;
}

type Json = Record<string, unknown>;

/** An OpenAPI document as the pages' documents handle it. */
export interface PageDocument extends Json {
  info: Json & { description: string };
  paths: Record<string, Record<string, PageOperation>>;
  components: Json & { responses?: Record<string, Json> };
}

export interface PageOperation extends Json {
  operationId: string;
  description?: string;
  responses: Record<string, Json>;
}

/** An exchange with the title the page gives it. */
export interface NamedExchange {
  /** Unique within its operation and status: the key of the OpenAPI example. */
  name: string;
  summary: string;
  exchange: ShownExchange;
}

/** A response of the document, `$ref` resolved (a copy: each operation gets its own examples). */
function resolved(document: PageDocument, response: Json, contract: string): Json {
  const ref = response.$ref;
  if (typeof ref !== 'string') return response;
  const target = document.components.responses?.[ref.replace('#/components/responses/', '')];
  if (!target) throw new Error(`${contract}: ${ref} names no response`);
  return structuredClone(target);
}

/**
 * Each answer with a body becomes an example of its status's response (JSON), titled by its summary and
 * described by its request; an answer with a status the contract does not document for the operation fails.
 * @example withResponseExamples(document, operation, [{ name: 'first-page', summary: 'Two modules', exchange }], 'proxy/openapi.json')
 */
export function withResponseExamples(
  document: PageDocument,
  operation: PageOperation,
  named: readonly NamedExchange[],
  contract: string,
): void {
  for (const { name, summary, exchange } of named) {
    if (exchange.body === undefined) continue;
    const status = String(exchange.status);
    const declared = operation.responses[status];
    if (!declared) {
      throw new Error(
        `${operation.operationId}: ${exchange.request.method} ${exchange.request.target} was answered ${status}, which ${contract} does not document for it`,
      );
    }
    const response = resolved(document, declared, contract);
    operation.responses[status] = response;
    const media = (response.content as Record<string, Json> | undefined)?.['application/json'];
    if (!media) {
      throw new Error(
        `${operation.operationId}: response ${status} has a body but no application/json content`,
      );
    }
    const examples = (media.examples ?? {}) as Record<string, Json>;
    examples[name] = {
      summary,
      description: `\`${exchange.request.method} ${exchange.request.target}\``,
      value: JSON.parse(exchange.body),
    };
    media.examples = examples;
  }
}

const COMPONENT_REF = /^#\/components\/([^/]+)\/([^/]+)$/;

/** `kind/name` of every component a `$ref` in `node` names, and every security scheme a `security` list names. */
function namedComponents(node: unknown, found: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) namedComponents(item, found);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    const ref = key === '$ref' && typeof value === 'string' ? COMPONENT_REF.exec(value) : null;
    if (ref) found.add(`${ref[1]}/${ref[2]!.replaceAll('~1', '/').replaceAll('~0', '~')}`);
    if (key === 'security' && Array.isArray(value)) {
      for (const requirement of value as Json[]) {
        for (const scheme of Object.keys(requirement)) found.add(`securitySchemes/${scheme}`);
      }
    }
    namedComponents(value, found);
  }
}

/**
 * The components (`kind/name`) nothing outside `components` reaches, directly or through other components: a
 * response a page copied into its operations to give it examples, one left behind by an edit. Generators and
 * linters (Spectral's `oas3-unused-component`) count them as noise.
 * @example unusedComponents({ paths: {}, components: { schemas: { Old: {} } } }) // → ['schemas/Old']
 */
export function unusedComponents(document: Json): string[] {
  const components = (document.components ?? {}) as Record<string, Json>;
  const reached = new Set<string>();
  namedComponents({ ...document, components: undefined }, reached);
  const pending = [...reached];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [kind, name] = [next.slice(0, next.indexOf('/')), next.slice(next.indexOf('/') + 1)];
    const more = new Set<string>();
    namedComponents(components[kind]?.[name], more);
    for (const component of more) {
      if (!reached.has(component)) {
        reached.add(component);
        pending.push(component);
      }
    }
  }
  return Object.entries(components).flatMap(([kind, named]) =>
    Object.keys(named).flatMap((name) => (reached.has(`${kind}/${name}`) ? [] : [`${kind}/${name}`])),
  );
}

/**
 * Remove the components nothing reaches any longer ({@link unusedComponents}): what a page's document keeps of
 * its contract after every response that got examples was copied into its operation.
 */
export function withoutUnusedComponents(document: PageDocument): void {
  for (const component of unusedComponents(document)) {
    const slash = component.indexOf('/');
    const named = document.components[component.slice(0, slash)] as Json;
    delete named[component.slice(slash + 1)];
  }
}
