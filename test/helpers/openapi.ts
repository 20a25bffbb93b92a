/**
 * Validating answers against an OpenAPI 3.1 document — `proxy/openapi.json` for any suite that drives the
 * proxy, `admin/openapi.json` for the admin API's: status, headers (declared ones must match their schema;
 * undeclared ones are refused) and the JSON body (decoded first when the answer names a Content-Encoding).
 */
import { readFileSync } from 'node:fs';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const OPENAPI_PATH = new URL('../../proxy/openapi.json', import.meta.url);
export const ADMIN_OPENAPI_PATH = new URL('../../admin/openapi.json', import.meta.url);

/** Headers that describe the transfer, not the API (OpenAPI leaves them out, or ignores Content-Type). */
const TRANSPORT_HEADERS = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

export interface ObservedResponse {
  method: string;
  /** Path as requested, with the `/v1` prefix (e.g. `/v1/modules/3`). */
  path: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer | string | undefined;
}

interface Json {
  [key: string]: unknown;
}

function pointerEscape(segment: string): string {
  return segment.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** The API's paths (with `/v1`) as patterns, and a reader of the document by JSON pointer. */
interface DocumentView {
  paths: { template: string; pattern: RegExp }[];
  at(pointer: string): unknown;
}

/** Where in the document the response object of an answer is (a JSON pointer), or why it is not documented. */
type ResponsePointer = (response: ObservedResponse, view: DocumentView) => string | { problem: string };

export interface ResponseValidator {
  /** Every problem found (empty when the answer conforms). */
  problems(response: ObservedResponse): string[];
  /** Throws with every problem when the answer does not conform. */
  assert(response: ObservedResponse): void;
}

/**
 * @example
 * const openapi = loadResponseValidator();
 * openapi.assert({ method: 'GET', path: '/v1/tags', status: 200, headers, body });
 */
export function loadResponseValidator(
  document: Json = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8')),
): ResponseValidator {
  return responseValidator(
    { ...document, [OTHER_METHOD]: otherMethodAnswer },
    'openapi.json',
    proxyResponsePointer,
  );
}

/**
 * The answer to a method the proxy's document has no operation for, as its description states it (an operation
 * of the document never answers 405, so none lists it): the error envelope with `method_not_allowed`, `Allow`,
 * `Cache-Control: no-store` and the request id. Added to the validator's copy of the document only.
 */
const OTHER_METHOD = 'x-validator-other-method';
const otherMethodAnswer = {
  description: 'Any method other than GET, HEAD, OPTIONS, on any path, before the key is checked.',
  headers: {
    Allow: { $ref: '#/components/headers/Allow' },
    'Cache-Control': { $ref: '#/components/headers/CacheControlNoStore' },
    'X-Request-Id': { $ref: '#/components/headers/XRequestId' },
    'X-Content-Type-Options': { $ref: '#/components/headers/XContentTypeOptions' },
  },
  content: {
    'application/json': {
      schema: {
        allOf: [
          { $ref: '#/components/schemas/ErrorEnvelope' },
          { properties: { error: { properties: { code: { const: 'method_not_allowed' } } } } },
        ],
      },
    },
  },
};

/**
 * The admin API's answers against `admin/openapi.json`.
 * @example const openapi = adminResponseValidator(); openapi.assert({ method: 'GET', path: '/v1/keys?owner=u', … });
 */
export function adminResponseValidator(
  document: Json = JSON.parse(readFileSync(ADMIN_OPENAPI_PATH, 'utf8')),
): ResponseValidator {
  return responseValidator(document, 'admin/openapi.json', adminResponsePointer);
}

/** The proxy's: only GET, HEAD and OPTIONS are operations; an unknown route gets the generic answers. */
function proxyResponsePointer(response: ObservedResponse, { paths, at }: DocumentView) {
  // Methods are case-sensitive: `get` is not GET.
  if (!['GET', 'HEAD', 'OPTIONS'].includes(response.method)) {
    return response.status === 405
      ? `/${OTHER_METHOD}`
      : { problem: `${response.method} must be answered with 405, not ${response.status}` };
  }
  const method = response.method.toLowerCase();
  const match = paths.find((p) => p.pattern.test(response.path));
  if (!match) {
    // Unknown routes: the generic answers, as any authenticated request can get them.
    const byStatus: Record<number, string> = {
      401: 'Unauthorized',
      404: 'NotFound',
      429: 'TooManyRequests',
      503: 'ServiceUnavailable',
    };
    const name = byStatus[response.status];
    if (!name) return { problem: `status ${response.status} is not documented for an unknown route` };
    return `/components/responses/${name}${method === 'head' ? 'Head' : ''}`;
  }
  const pointer = `/paths/${pointerEscape(match.template)}/${method}/responses/${response.status}`;
  if (!at(pointer))
    return {
      problem: `status ${response.status} is not documented for ${method.toUpperCase()} ${match.template}`,
    };
  return pointer;
}

/** The admin API's: a documented operation's own answers; otherwise (unknown route or method) 403, 404, 405. */
function adminResponsePointer(response: ObservedResponse, { paths, at }: DocumentView) {
  const path = response.path.split('?')[0]!;
  const method = response.method.toLowerCase();
  const match = paths.find((p) => p.pattern.test(path));
  const operation = match && `/paths/${pointerEscape(match.template)}/${method}`;
  // What any request may be answered before its route and method count (admin/openapi.json's description).
  const generic: Record<number, string> = {
    400: 'InvalidRequest',
    403: 'Forbidden',
    404: 'NotFound',
    405: 'MethodNotAllowed',
    413: 'PayloadTooLarge',
  };
  const pointer =
    operation && at(operation)
      ? `${operation}/responses/${response.status}`
      : generic[response.status] && `/components/responses/${generic[response.status]}`;
  if (!pointer || !at(pointer))
    return { problem: `status ${response.status} is not documented for ${response.method} ${path}` };
  return pointer;
}

function responseValidator(
  document: Json,
  label: string,
  responsePointer: ResponsePointer,
): ResponseValidator {
  const id = `https://catalogue.invalid/${label}`;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, id);
  const compiled = new Map<string, ValidateFunction>();
  const schemaAt = (pointer: string) => {
    let validate = compiled.get(pointer);
    if (!validate) {
      validate = ajv.compile({ $ref: `${id}#${pointer}` });
      compiled.set(pointer, validate);
    }
    return validate;
  };
  const at = (pointer: string): unknown =>
    pointer
      .split('/')
      .slice(1)
      .reduce<unknown>(
        (node, segment) => (node as Json | undefined)?.[segment.replaceAll('~1', '/').replaceAll('~0', '~')],
        document,
      );
  /** Follow `$ref`s, keeping the JSON pointer of where the object really is. */
  const resolve = (pointer: string): { pointer: string; node: Json | undefined } => {
    let node = at(pointer) as Json | undefined;
    while (node && typeof node.$ref === 'string') {
      pointer = (node.$ref as string).slice(1);
      node = at(pointer) as Json | undefined;
    }
    return { pointer, node };
  };

  const paths = Object.keys(document.paths as Json).map((template) => ({
    template,
    pattern: new RegExp(`^/v1${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));

  function problems(response: ObservedResponse): string[] {
    const found: string[] = [];
    const where = responsePointer(response, { paths, at });
    if (typeof where !== 'string') return [where.problem];
    const { pointer, node } = resolve(where);
    if (!node) return [`no response object at ${where}`];

    const headers = new Map<string, string>();
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined)
        headers.set(name.toLowerCase(), Array.isArray(value) ? value.join(', ') : value);
    }
    const declared = (node.headers ?? {}) as Json;
    const declaredNames = new Set<string>();
    for (const name of Object.keys(declared)) {
      const lower = name.toLowerCase();
      declaredNames.add(lower);
      const header = resolve(`${pointer}/headers/${pointerEscape(name)}`);
      const value = headers.get(lower);
      if (value === undefined) {
        if (header.node?.required) found.push(`header ${name} is missing`);
        continue;
      }
      const schema = header.node?.schema as Json | undefined;
      const coerced = schema?.type === 'integer' && /^(0|[1-9][0-9]*)$/.test(value) ? Number(value) : value;
      const validate = schemaAt(`${header.pointer}/schema`);
      if (!validate(coerced))
        found.push(`header ${name}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`);
    }
    for (const name of headers.keys()) {
      if (!declaredNames.has(name) && !TRANSPORT_HEADERS.has(name))
        found.push(`header ${name} is not documented`);
    }

    let body = response.body === undefined ? '' : response.body.toString();
    const coding = headers.get('content-encoding');
    if (coding !== undefined && response.body !== undefined && response.body.length > 0) {
      try {
        const bytes = Buffer.from(response.body);
        body = (coding === 'br' ? brotliDecompressSync(bytes) : gunzipSync(bytes)).toString();
      } catch {
        return [...found, `the body does not decode as ${coding}`];
      }
    }
    const content = node.content as Json | undefined;
    if (!content) {
      if (body !== '') found.push('the answer has a body where none is documented');
      return found;
    }
    if (response.method === 'HEAD') {
      if (body !== '') found.push('a HEAD answer has a body');
      return found;
    }
    if (!headers.get('content-type')?.startsWith('application/json'))
      found.push('content-type is not application/json');
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return [...found, 'the body is not JSON'];
    }
    const validate = schemaAt(`${pointer}/content/application~1json/schema`);
    if (!validate(parsed)) found.push(`body: ${ajv.errorsText(validate.errors)}`);
    return found;
  }

  return {
    problems,
    assert(response) {
      const found = problems(response);
      if (found.length > 0) {
        throw new Error(
          `${response.method} ${response.path} → ${response.status} does not conform to ${label}:\n  ${found.join('\n  ')}`,
        );
      }
    },
  };
}
