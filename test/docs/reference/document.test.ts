/**
 * docs/reference/document.ts (with examples.ts and exchanges.ts): the page's document carries, for every
 * operation, a curl line, a TypeScript sample and examples that are real answers — each one valid against the
 * contract, status, headers and body (test/helpers/openapi.ts) — for every status with a body the operation can
 * give, and every error code an authenticated or refused request can meet; the same inputs give the same
 * document, which says first what its examples are and which of their values differ on a deployment.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { referenceDocument } from '../../../docs/reference/document.js';
import { operationExamples } from '../../../docs/reference/examples.js';
import { fixtureVersion } from '../../../docs/reference/exchanges.js';
import { unusedComponents } from '../../../docs/reference/shown.js';
import { ERROR_CODES } from '../../../proxy/http/errors.js';
import { loadResponseValidator } from '../../helpers/openapi.js';

type Document = Awaited<ReturnType<typeof referenceDocument>>;
type Examples = Awaited<ReturnType<typeof operationExamples>>;

let document: Document;
let examples: Examples;
let version: string;

beforeAll(async () => {
  document = await referenceDocument();
  examples = await operationExamples(document);
  version = await fixtureVersion();
}, 60_000);

describe('the examples', () => {
  it('are answers the contract documents: status, every header and the body', () => {
    const openapi = loadResponseValidator();
    let checked = 0;
    for (const [operationId, operation] of examples) {
      const exchanges = [
        ...operation.success,
        ...operation.errors,
        ...(operation.notModified ? [{ name: '304', exchange: operation.notModified }] : []),
      ];
      for (const { name, exchange } of exchanges) {
        const [path = '', query] = exchange.request.target.split('?');
        expect(
          openapi.problems({
            method: exchange.request.method,
            path,
            status: exchange.status,
            headers: { 'content-type': 'application/json; charset=utf-8', ...exchange.headers },
            body: exchange.body,
          }),
          `${operationId} ${name} (${query ?? ''})`,
        ).toEqual([]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(150);
  });

  it('cover, for GET and OPTIONS, every status with a body the operation documents, and every error code', () => {
    const codes = new Set<string>();
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const responses = operation.responses as Record<
          string,
          { content?: Record<string, { examples?: object }> }
        >;
        for (const [status, response] of Object.entries(responses)) {
          const media = response.content?.['application/json'];
          if (!media) continue;
          expect(Object.keys(media.examples ?? {}), `${method} ${path} ${status}`).not.toEqual([]);
          for (const example of Object.values(media.examples ?? {}) as {
            value: { error?: { code: string } };
          }[]) {
            if (example.value.error) codes.add(example.value.error.code);
          }
        }
      }
    }
    // method_not_allowed is no operation's (another method's: the document's description says so).
    expect([...codes].sort()).toEqual(ERROR_CODES.filter((code) => code !== 'method_not_allowed').sort());
  });

  it('give the integrity case of origin_unavailable its own example', () => {
    const get = examples.get('getModuleList')!;

    const integrity = get.errors.find((named) => named.name === 'origin-unavailable-integrity')!;

    expect(integrity.exchange.status).toBe(503);
    expect(JSON.parse(integrity.exchange.body!).error.code).toBe('origin_unavailable');
  });

  it('show a 429 with Retry-After and the rate-limit headers, its minute spent', () => {
    const limited = examples.get('getTagList')!.errors.find((named) => named.name === 'rate-limit-exceeded')!;

    expect(limited.exchange.headers).toMatchObject({
      'retry-after': '30',
      'x-ratelimit-limit-minute': '60',
      'x-ratelimit-remaining-minute': '0',
    });
  });
});

describe('the components', () => {
  it('are only those something still refers to, once every response with examples was copied into its operation', () => {
    expect(unusedComponents(document)).toEqual([]);
    expect(Object.keys(document.components.responses)).not.toContain('BadRequest');
  });

  it('are found unused when nothing reaches them, directly or through another component', () => {
    const reached = {
      paths: { '/a': { get: { responses: { 200: { $ref: '#/components/responses/A' } } } } },
      security: [{ bearer: [] }],
      components: {
        responses: { A: { content: { 'application/json': { schema: { $ref: '#/components/schemas/B' } } } } },
        schemas: {
          B: {},
          Lone: { $ref: '#/components/schemas/Circle' },
          Circle: { $ref: '#/components/schemas/Lone' },
        },
        securitySchemes: { bearer: {}, basic: {} },
      },
    };
    expect(unusedComponents(reached)).toEqual(['schemas/Lone', 'schemas/Circle', 'securitySchemes/basic']);
  });
});

describe('the samples', () => {
  it('are a curl line and a TypeScript sample for every operation, with what the TypeScript prints', () => {
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item)) {
        const samples = operation['x-codeSamples'] as { label: string; source: string }[];
        expect(
          samples.map((sample) => sample.label),
          operation.operationId,
        ).toEqual(['curl', 'TypeScript']);
        expect(samples[0]!.source).toMatch(
          /^curl -s[iI]?( -X OPTIONS)? "\$CATALOGUE_URL\/[^"]+" \\\n {2}-H "Authorization: Bearer \$CATALOGUE_KEY"$/,
        );
        expect(samples[1]!.source).toMatch(/\n\/\/ \S/);
      }
    }
    expect(examples.get('getModuleDetail')!.typescript.prints).toEqual([
      'A-110-1 8 Analog, East Coast, Oscillator',
    ]);
  });

  it('are the same from the same inputs (request ids derived from the examples, a fixed clock)', async () => {
    const again = await operationExamples(document);

    expect(again.get('getTagList')).toEqual(examples.get('getTagList'));
  });
});

describe('the prose', () => {
  it("carries the manual's sections: the HTTP layer's refusals, coding, decisions, versioning, the changelog", () => {
    const prose = document.info.description;

    for (const heading of [
      '## Requests the HTTP layer refuses',
      '## Content coding',
      '## Decisions the specification left open',
      '## Compatibility',
      '## How a removal is announced',
      '## Changes to the API',
    ]) {
      expect(prose).toContain(heading);
    }
    expect(prose).not.toContain('## The reference page');
    // What the examples are comes first, and which of their values differ on a deployment.
    expect(prose.indexOf('## About the examples')).toBeLessThan(prose.indexOf('## Authentication'));
    for (const value of [
      '| Request id',
      '| Cursor',
      '| ETag',
      '| Records, catalogue version',
      '| Rate limits',
    ]) {
      expect(prose).toContain(value);
    }
    expect(prose).toContain(`published as version \`${version}\``);
    // No link to a file of the repository: the page is served alone.
    expect(prose).not.toMatch(/\]\((?!#|https?:|\/)[^)]*\)/);
  });
});
