/**
 * docs/reference/admin/document.ts (with examples.ts, exchanges.ts, samples.ts): the key-administration page's
 * document carries, for every operation, signed samples in curl, TypeScript and Python and examples that are the
 * admin API's real answers — each valid against admin/openapi.json, status, headers and body — for every status
 * the operation documents that a request can cause (all but 500), every error code among them; no key anyone
 * was given and nothing random: the same inputs give the same document.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ERROR_STATUS } from '../../../../admin/errors.js';
import {
  ABOUT_THE_EXAMPLES,
  adminOperationExamples,
  adminReferenceDocument,
} from '../../../../docs/reference/admin/document.js';
import type { AdminOperationExamples } from '../../../../docs/reference/admin/examples.js';
import { type PageDocument, unusedComponents } from '../../../../docs/reference/shown.js';
import { ADMIN_OPENAPI_PATH, adminResponseValidator } from '../../../helpers/openapi.js';

const contract = JSON.parse(readFileSync(ADMIN_OPENAPI_PATH, 'utf8')) as PageDocument;
let document: PageDocument;
let examples: Map<string, AdminOperationExamples>;

beforeAll(async () => {
  document = await adminReferenceDocument();
  examples = await adminOperationExamples(structuredClone(contract));
}, 120_000);

/** The operations of a document: [path, method, operation]. */
function operations(of: PageDocument) {
  return Object.entries(of.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => method !== 'parameters')
      .map(([method, operation]) => ({ path, method, operation })),
  );
}

describe('the examples', () => {
  it('are answers the contract documents: status, every header and the body', () => {
    const openapi = adminResponseValidator();
    let checked = 0;
    for (const [operationId, operation] of examples) {
      for (const { name, exchange } of [...operation.success, ...operation.errors]) {
        const [path = ''] = exchange.request.target.split('?');
        expect(
          openapi.problems({
            method: exchange.request.method,
            path,
            status: exchange.status,
            headers: exchange.headers,
            body: exchange.body,
          }),
          `${operationId} ${name}`,
        ).toEqual([]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(70);
  });

  it('cover every status each operation documents but 500 (a fault of the API: no request causes it), and every error code', () => {
    const codes = new Set<string>();
    for (const { method, path, operation } of operations(document)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const media = (response as { content?: Record<string, { examples?: Record<string, unknown> }> })
          .content?.['application/json'];
        const shown = Object.values(media?.examples ?? {}) as { value: { error?: { code: string } } }[];
        if (status === '500') expect(shown, `${method} ${path} 500`).toEqual([]);
        else expect(shown.length, `${method} ${path} ${status}`).toBeGreaterThan(0);
        for (const example of shown) if (example.value.error) codes.add(example.value.error.code);
      }
    }
    // internal_error: a fault of ours; owner_already_set: `npm run keys -- owner` only, no route answers it.
    const unshown = new Set(['internal_error', 'owner_already_set']);
    expect([...codes].sort()).toEqual(
      Object.keys(ADMIN_ERROR_STATUS)
        .filter((code) => !unshown.has(code))
        .sort(),
    );
  });

  it('hold no key anyone was given: every key is a stand-in, marked Example', () => {
    const text = JSON.stringify(document);
    const keys = [...text.matchAll(/pk_live_[A-Za-z0-9_-]{22}/g)].map(([key]) => key);

    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key).toMatch(/^pk_live_Example/);
  });

  it("are the same from the same inputs (stand-ins for what the API draws at random, the story's clock)", async () => {
    const again = await adminReferenceDocument();

    expect(JSON.stringify(again)).toBe(JSON.stringify(document));
  }, 60_000);

  it("show a roll's new key, a replay without its key, and usage day by day", () => {
    const rolled = examples.get('roll')!.success[0]!.exchange;
    const replayed = examples.get('issue')!.success.find((named) => named.name === 'replayed')!.exchange;
    const usage = JSON.parse(examples.get('usage')!.success[0]!.exchange.body!).data;

    expect(JSON.parse(rolled.body!).data.key).toMatch(/^pk_live_Example/);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(JSON.parse(replayed.body!).data.key).toBeNull();
    expect(usage.months.map((month: { month: string; count: number }) => [month.month, month.count])).toEqual(
      [
        ['2025-12', 16],
        ['2026-01', 20],
      ],
    );
  });
});

describe('the page', () => {
  it('keeps no component nothing refers to, once every response with examples was copied into its operation', () => {
    expect(unusedComponents(document)).toEqual([]);
  });

  it('gives every operation signed samples in curl, TypeScript and Python, and the exchange of their request', () => {
    for (const { method, path, operation } of operations(document)) {
      const samples = operation['x-codeSamples'] as { label: string; source: string }[];
      const name = `${method} ${path}`;

      expect(
        samples.map((sample) => sample.label),
        name,
      ).toEqual(['curl', 'TypeScript', 'Python']);
      expect(samples[0]!.source, name).toContain('--aws-sigv4 "aws:amz:$AWS_REGION:lambda"');
      expect(samples[1]!.source, name).toContain('new SignatureV4({');
      expect(samples[2]!.source, name).toContain(
        'SigV4Auth(credentials, "lambda", region).add_auth(request)',
      );
      expect(operation.description, name).toMatch(/<details>[\s\S]*AWS4-HMAC-SHA256[\s\S]*HTTP\/1\.1 20[01]/);
      expect(operation.tags, name).toEqual(['keys']);
    }
  });

  it("says which of the examples' values differ on a deployment, then carries the guide", () => {
    const { description } = document.info;

    for (const value of ['Request id', 'Key id', 'Key (', 'Cursor', 'Times', 'Usage', 'Signature']) {
      expect(ABOUT_THE_EXAMPLES).toContain(`| ${value}`);
    }
    expect(description).toContain('## About the examples');
    expect(description).toContain('## Show the key once');
    expect(description).toContain('## Retries: Idempotency-Key');
  });
});
