/**
 * What the reference page shows for each of the 18 operations (6 paths × GET, HEAD, OPTIONS): a curl line, a
 * TypeScript sample, and real exchanges (exchanges.ts) — the success answers, the 304 of a revalidation and
 * every error the operation can give, each produced by the proxy from the fixture when the page is built.
 *
 * The table below says which requests; everything shown is what the proxy answered to them. The TypeScript
 * samples end with the lines they print, computed from the same answers, and test/client/package.test.ts runs
 * them against the fixture with the packed client, so a sample that no longer prints that fails there.
 */
import { type Ask, type Exchange, exchange, type NamedExchange, type World } from './exchanges.js';

export type Method = 'get' | 'head' | 'options';
export const METHODS: readonly Method[] = ['get', 'head', 'options'];

/** A request of the table: its example name, its title on the page and what is sent. */
interface Example {
  name: string;
  summary: string;
  /** Path and query under `/v1`, e.g. `/modules?limit=2`. */
  target: string;
  /** The target after the first exchange of the operation answered (a cursor taken from it). */
  after?: (first: Exchange) => string;
}

/** A TypeScript sample: its code after the client is made, and what it prints for the answer's body. */
interface ClientSample {
  code: string;
  prints: (body: unknown) => string[];
}

interface Endpoint {
  /** The OpenAPI path. */
  path: string;
  /** The GET answers shown; the first is the samples' request. */
  reads: Example[];
  /** 400s this endpoint gives (for GET and OPTIONS). */
  invalid: Example[];
  /** 404 of a detail path. */
  missing?: Example;
  client: ClientSample;
}

/** `console.log(a, b, …)` of plain values, as Node.js prints it. */
const line = (...values: unknown[]): string => values.map(String).join(' ');
const records = (body: unknown): Record<string, unknown>[] =>
  (body as { data: Record<string, unknown>[] }).data;
const record = (body: unknown): Record<string, unknown> => (body as { data: Record<string, unknown> }).data;
const names = (list: unknown): string => (list as { name: string }[]).map((item) => item.name).join(', ');

export const ENDPOINTS: readonly Endpoint[] = [
  {
    path: '/modules',
    reads: [
      {
        name: 'first-page',
        summary: 'Two modules, name and hp only',
        target: '/modules?limit=2&fields=name,hp',
      },
      {
        name: 'next-page',
        summary: 'The next page: its cursor passed back',
        target: '/modules?limit=2&fields=name,hp',
        after: (first) =>
          `/modules?limit=2&fields=name,hp&cursor=${(JSON.parse(first.body ?? '{}') as { page: { next_cursor: string } }).page.next_cursor}`,
      },
      { name: 'every-field', summary: 'One module with every top-level field', target: '/modules?limit=1' },
      {
        name: 'filtered',
        summary: 'Filters combined, sorted by name, with tags',
        target: '/modules?manufacturer_id=1&standard=0&tag=6&sort=name&fields=name,hp&include=tags&limit=2',
      },
      { name: 'no-match', summary: 'A filter that matches nothing', target: '/modules?manufacturer_id=999' },
    ],
    invalid: [
      { name: 'unknown-parameter', summary: 'A name in the wrong case', target: '/modules?Limit=5' },
      { name: 'invalid-limit', summary: 'A limit over 100', target: '/modules?limit=1000' },
      {
        name: 'relation-in-fields',
        summary: 'A relation asked for with fields',
        target: '/modules?fields=ins',
      },
      {
        name: 'cursor-of-another-query',
        summary: 'A cursor used with another sort',
        target: '/modules?limit=2&fields=name,hp',
        after: (first) =>
          `/modules?limit=2&sort=name&cursor=${(JSON.parse(first.body ?? '{}') as { page: { next_cursor: string } }).page.next_cursor}`,
      },
      { name: 'reserved-q', summary: 'The reserved parameter q', target: '/modules?q=vco' },
    ],
    client: {
      code: `const page = await client.modules.listPage({
  limit: 2,
  fields: ['name', 'hp'],
});
for (const module of page.data) {
  console.log(module.id, module.name, module.hp);
}`,
      prints: (body) => records(body).map((m) => line(m.id, m.name, m.hp)),
    },
  },
  {
    path: '/modules/{id}',
    reads: [
      { name: 'with-tags', summary: 'Module 101 with its tags', target: '/modules/101?include=tags' },
      { name: 'plain', summary: 'Module 101: every top-level field', target: '/modules/101' },
      {
        name: 'every-relation',
        summary: 'Module 251 with its jacks, tags and panels',
        target: '/modules/251?include=ins,outs,tags,panels',
      },
    ],
    invalid: [
      {
        name: 'malformed-id',
        summary: 'An id that is not a canonical positive integer',
        target: '/modules/abc',
      },
      { name: 'unknown-parameter', summary: 'A list parameter on a detail', target: '/modules/101?limit=5' },
      {
        name: 'unknown-relation',
        summary: 'A relation modules do not have',
        target: '/modules/101?include=modules',
      },
    ],
    missing: { name: 'no-such-module', summary: 'No module with this id', target: '/modules/999999' },
    client: {
      code: `const module = await client.modules.get(101, {
  include: ['tags'],
});
const tags = module.tags.map((tag) => tag.name);
console.log(module.name, module.hp, tags.join(', '));`,
      prints: (body) => [line(record(body).name, record(body).hp, names(record(body).tags))],
    },
  },
  {
    path: '/manufacturers',
    reads: [
      { name: 'by-name', summary: 'Three manufacturers by name', target: '/manufacturers?limit=3&sort=name' },
    ],
    invalid: [
      {
        name: 'unknown-parameter',
        summary: 'fields, which only the module list has',
        target: '/manufacturers?fields=name',
      },
      { name: 'invalid-sort', summary: 'A sort value in the wrong case', target: '/manufacturers?sort=NAME' },
    ],
    client: {
      code: `const page = await client.manufacturers.listPage({
  limit: 3,
  sort: 'name',
});
for (const maker of page.data) {
  console.log(maker.id, maker.name, maker.country);
}`,
      prints: (body) => records(body).map((m) => line(m.id, m.name, m.country)),
    },
  },
  {
    path: '/manufacturers/{id}',
    reads: [
      {
        name: 'with-modules',
        summary: 'Manufacturer 12 with its modules',
        target: '/manufacturers/12?include=modules',
      },
      { name: 'plain', summary: 'Manufacturer 12', target: '/manufacturers/12' },
    ],
    invalid: [
      { name: 'malformed-id', summary: 'An id with a leading zero', target: '/manufacturers/012' },
      {
        name: 'unknown-relation',
        summary: 'A relation manufacturers do not have',
        target: '/manufacturers/12?include=tags',
      },
    ],
    missing: {
      name: 'no-such-manufacturer',
      summary: 'No manufacturer with this id',
      target: '/manufacturers/999999',
    },
    client: {
      code: `const maker = await client.manufacturers.get(12, {
  include: ['modules'],
});
const names = maker.modules.map((module) => module.name);
console.log(maker.name, names.join(', '));`,
      prints: (body) => [line(record(body).name, names(record(body).modules))],
    },
  },
  {
    path: '/standards',
    reads: [{ name: 'all', summary: 'Every standard', target: '/standards' }],
    invalid: [{ name: 'invalid-limit', summary: 'A limit of 0', target: '/standards?limit=0' }],
    client: {
      code: `for await (const standard of client.standards.list()) {
  console.log(standard.id, standard.name);
}`,
      prints: (body) => records(body).map((s) => line(s.id, s.name)),
    },
  },
  {
    path: '/tags',
    reads: [{ name: 'by-name', summary: 'Five tags by name', target: '/tags?limit=5&sort=name' }],
    invalid: [
      { name: 'unknown-parameter', summary: 'A filter tags do not have', target: '/tags?type=filter' },
      { name: 'repeated-parameter', summary: 'A parameter given twice', target: '/tags?limit=5&limit=10' },
    ],
    client: {
      code: `const page = await client.tags.listPage({
  limit: 5,
  sort: 'name',
});
for (const tag of page.data) {
  console.log(tag.id, tag.name, tag.type);
}`,
      prints: (body) => records(body).map((t) => line(t.id, t.name, t.type)),
    },
  },
];

/** The failures every operation is shown with (those a method cannot meet are left out, see below). */
const FAILURES: readonly { name: string; summary: string; ask: Omit<Ask, 'method' | 'target'> }[] = [
  { name: 'missing-authorization', summary: 'No Authorization header', ask: { credentials: 'none' } },
  {
    name: 'malformed-authorization',
    summary: 'Not a key of the wire format',
    ask: { credentials: 'malformed' },
  },
  {
    name: 'invalid-key',
    summary: 'A well-formed key that is unknown or revoked',
    ask: { credentials: 'unknown' },
  },
  { name: 'rate-limit-exceeded', summary: "The key's minute is used up", ask: { world: 'quota-spent' } },
  { name: 'configuration-error', summary: 'No catalogue is published', ask: { world: 'nothing-published' } },
  { name: 'authentication-unavailable', summary: 'The key store failed', ask: { world: 'keys-down' } },
  { name: 'quota-unavailable', summary: 'The quota store failed', ask: { world: 'quota-down' } },
  { name: 'origin-unavailable', summary: 'The object store failed', ask: { world: 'objects-down' } },
  {
    name: 'origin-unavailable-integrity',
    summary: 'The object store answered bytes that are not what was published',
    ask: { world: 'objects-damaged' },
  },
];

/** Worlds in which OPTIONS, which reads no record, still answers 204: not failures of OPTIONS. */
const OPTIONS_READS_NOTHING: ReadonlySet<World> = new Set([
  'nothing-published',
  'objects-down',
  'objects-damaged',
]);

/** Everything the page shows for one operation. */
export interface OperationExamples {
  path: string;
  method: Method;
  /** The first is the one the samples send. */
  success: NamedExchange[];
  /** GET and HEAD: the revalidation of the first success with its ETag. */
  notModified: Exchange | undefined;
  errors: NamedExchange[];
  curl: string;
  typescript: { code: string; prints: string[] };
}

/** The concrete path of an example of `path` (detail paths with an id). */
const concrete = (path: string, examples: readonly Example[]) => examples[0]?.target.split('?')[0] ?? path;

/**
 * The curl command of a request, reading the base URL and the key from the shell (npm start prints both
 * exports), on two lines so that it fits the samples' panel.
 * @example curlLine('head', '/tags?limit=5')
 * // → 'curl -sI "$CATALOGUE_URL/tags?limit=5" \\\n  -H "Authorization: Bearer $CATALOGUE_KEY"'
 */
export function curlLine(method: Method, target: string): string {
  const flags = method === 'get' ? '-s' : method === 'head' ? '-sI' : '-si -X OPTIONS';
  return `curl ${flags} "$CATALOGUE_URL${target}" \\\n  -H "Authorization: Bearer $CATALOGUE_KEY"`;
}

function typescriptSample(
  endpoint: Endpoint,
  method: Method,
  success: Exchange,
): OperationExamples['typescript'] {
  const body = success.body === undefined ? undefined : (JSON.parse(success.body) as unknown);
  if (method === 'get') {
    const code = `import { CatalogueClient } from '@catalogue/read-api-client';

// baseUrl and apiKey: from CATALOGUE_URL, CATALOGUE_KEY
const client = new CatalogueClient();
${endpoint.client.code}`;
    return { code, prints: endpoint.client.prints(body) };
  }
  const target = success.request.target.replace(/^\/v1/, '');
  const head = method === 'head';
  const code = `// The client sends GET only (it revalidates with
// If-None-Match instead); with fetch:
const base = process.env['CATALOGUE_URL'];
const key = process.env['CATALOGUE_KEY'];
const target = '${target}';
const response = await fetch(\`\${base}\${target}\`, {
  method: '${method.toUpperCase()}',
  headers: { authorization: \`Bearer \${key}\` },
});
const header = response.headers.get('${head ? 'content-length' : 'allow'}');
console.log(response.status, header);`;
  return { code, prints: [line(success.status, success.headers[head ? 'content-length' : 'allow'])] };
}

/** Sends the examples of one operation through the proxy, each named `<operationId> <kind> <example>`. */
function runner(operationId: string, verb: string) {
  return async (example: Example, kind: string, ask: Partial<Ask> = {}): Promise<NamedExchange> => {
    let target = example.target;
    if (example.after) {
      const first = await exchange(`${operationId} ${kind} ${example.name} first`, {
        method: 'GET',
        target: `/v1${example.target}`,
      });
      target = example.after(first);
    }
    const answer = await exchange(`${operationId} ${kind} ${example.name}`, {
      method: verb,
      target: `/v1${target}`,
      ...ask,
    });
    return { name: example.name, summary: example.summary, exchange: answer };
  };
}

/**
 * The errors of an operation: the endpoint's 400s (and 404 for GET: OPTIONS reads no record, so a missing one
 * is still 204), then the failures every operation meets. HEAD has none on the page: its answers are GET's
 * without a body. No operation is answered 405 (another method is: the document's description says so).
 */
async function errorsOf(
  endpoint: Endpoint,
  method: Method,
  run: ReturnType<typeof runner>,
): Promise<NamedExchange[]> {
  if (method === 'head') return [];
  const errors: NamedExchange[] = [];
  const own = [...endpoint.invalid, ...(endpoint.missing && method === 'get' ? [endpoint.missing] : [])];
  for (const example of own) errors.push(await run(example, 'error'));
  const at = concrete(endpoint.path, endpoint.reads);
  for (const failure of FAILURES) {
    if (method === 'options' && OPTIONS_READS_NOTHING.has(failure.ask.world ?? 'normal')) continue;
    errors.push(
      await run({ name: failure.name, summary: failure.summary, target: at }, 'error', failure.ask),
    );
  }
  return errors;
}

/** Fails the build when the proxy answers an example otherwise than the table expects. */
function expectStatuses(
  operationId: string,
  named: readonly NamedExchange[],
  expected: readonly number[],
): void {
  for (const { name, exchange: answer } of named) {
    if (!expected.includes(answer.status)) {
      throw new Error(
        `${operationId} example ${name}: ${answer.request.method} ${answer.request.target} was answered ${answer.status}; docs/reference/examples.ts expects one of ${expected.join(', ')}`,
      );
    }
  }
}

/** Run the examples of one operation through the proxy. */
async function examplesOf(
  endpoint: Endpoint,
  method: Method,
  operationId: string,
): Promise<OperationExamples> {
  const verb = method.toUpperCase();
  const run = runner(operationId, verb);
  const success: NamedExchange[] = [];
  for (const example of method === 'get' ? endpoint.reads : endpoint.reads.slice(0, 1)) {
    success.push(await run(example, 'success'));
  }
  const first = success[0]!.exchange;
  const notModified =
    method === 'options'
      ? undefined
      : await exchange(`${operationId} 304`, {
          method: verb,
          target: first.request.target,
          headers: { 'if-none-match': first.headers.etag ?? '' },
        });
  const errors = await errorsOf(endpoint, method, run);
  expectStatuses(operationId, success, [200, 204]);
  expectStatuses(
    operationId,
    notModified ? [{ name: '304', summary: '', exchange: notModified }] : [],
    [304],
  );
  expectStatuses(operationId, errors, [400, 401, 404, 429, 503]);
  return {
    path: endpoint.path,
    method,
    success,
    notModified,
    errors,
    curl: curlLine(method, first.request.target.replace(/^\/v1/, '')),
    typescript: typescriptSample(endpoint, method, first),
  };
}

/**
 * The examples of every operation of the OpenAPI document, keyed by operationId.
 * @example (await operationExamples(document)).get('getModuleList')?.curl // → 'curl -s -H … "$CATALOGUE_URL/modules?limit=2&fields=name,hp"'
 */
export async function operationExamples(document: {
  paths: Record<string, Record<string, { operationId: string }>>;
}): Promise<Map<string, OperationExamples>> {
  const out = new Map<string, OperationExamples>();
  for (const [path, item] of Object.entries(document.paths)) {
    const endpoint = ENDPOINTS.find((candidate) => candidate.path === path);
    if (!endpoint)
      throw new Error(`docs/reference/examples.ts has no examples for ${path}: add them to ENDPOINTS`);
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      out.set(operation.operationId, await examplesOf(endpoint, method, operation.operationId));
    }
  }
  return out;
}
