/**
 * Validating the admin API's answers against `admin/openapi.json`: the status must be documented for the
 * route and method, its declared required headers present, no undeclared header but the transport's, and
 * the JSON body must match the response's schema.
 */
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export const ADMIN_OPENAPI_PATH = new URL('../../admin/openapi.json', import.meta.url);
const ID = 'https://catalogue.invalid/admin-openapi.json';
const TRANSPORT = new Set([
  'content-type',
  'content-length',
  'date',
  'connection',
  'keep-alive',
  'transfer-encoding',
]);

type Json = Record<string, unknown>;

export interface AdminAnswer {
  method: string;
  /** As requested, with `/v1`. */
  path: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * @example const openapi = adminResponseValidator(); openapi.assert({ method: 'GET', path: '/v1/keys', … });
 */
export function adminResponseValidator(
  document: Json = JSON.parse(readFileSync(ADMIN_OPENAPI_PATH, 'utf8')),
) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, ID);
  const at = (pointer: string): Json | undefined =>
    pointer
      .split('/')
      .slice(1)
      .reduce<unknown>((node, part) => (node as Json | undefined)?.[part.replaceAll('~1', '/')], document) as
      | Json
      | undefined;
  const resolve = (pointer: string) => {
    let node = at(pointer);
    while (node && typeof node.$ref === 'string') {
      pointer = (node.$ref as string).slice(1);
      node = at(pointer);
    }
    return { pointer, node };
  };
  const paths = Object.keys(document.paths as Json).map((template) => ({
    template,
    pattern: new RegExp(`^/v1${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));

  function problems(answer: AdminAnswer): string[] {
    const path = answer.path.split('?')[0]!;
    const match = paths.find((p) => p.pattern.test(path));
    const method = answer.method.toLowerCase();
    const where =
      match && at(`/paths/${match.template.replaceAll('/', '~1')}/${method}`)
        ? `/paths/${match.template.replaceAll('/', '~1')}/${method}/responses/${answer.status}`
        : answer.status === 404
          ? '/components/responses/NotFound'
          : answer.status === 405
            ? '/components/responses/MethodNotAllowed'
            : answer.status === 403
              ? '/components/responses/Forbidden'
              : undefined;
    if (!where || !at(where))
      return [`status ${answer.status} is not documented for ${answer.method} ${path}`];
    const { pointer, node } = resolve(where);
    const found: string[] = [];
    const declared = Object.fromEntries(
      Object.entries((node?.headers ?? {}) as Json).map(([name, value]) => [name.toLowerCase(), value]),
    );
    for (const [name, header] of Object.entries(declared)) {
      const required = (
        resolve(
          `${pointer}/headers/${Object.keys(node!.headers as Json).find((n) => n.toLowerCase() === name)}`,
        ).node ?? (header as Json)
      )?.required;
      if (required && answer.headers[name] === undefined) found.push(`header ${name} is missing`);
    }
    for (const name of Object.keys(answer.headers)) {
      if (!TRANSPORT.has(name) && !(name in declared)) found.push(`header ${name} is not documented`);
    }
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [...found, 'the body is not JSON'];
    }
    const validate = ajv.compile({ $ref: `${ID}#${pointer}/content/application~1json/schema` });
    if (!validate(body)) found.push(`body: ${ajv.errorsText(validate.errors)}`);
    return found;
  }

  return {
    problems,
    assert(answer: AdminAnswer) {
      const found = problems(answer);
      if (found.length > 0) {
        throw new Error(
          `${answer.method} ${answer.path} → ${answer.status} does not conform to admin/openapi.json:\n  ${found.join('\n  ')}\n${answer.body}`,
        );
      }
    },
  };
}
