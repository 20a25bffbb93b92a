import { readFileSync } from 'node:fs';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { unusedComponents } from '../../docs/reference/shown.js';
import { ERROR_CODES } from '../../proxy/http/errors.js';
import { JACK_SIGNALS, MODULE_FIELDS, MODULE_RELATIONS, TAG_TYPES } from '../../store/schema.js';
import { loadResponseValidator, OPENAPI_PATH } from '../helpers/openapi.js';

const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8'));

describe('proxy/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(document.openapi).toMatch(/^3\.1\./);
  });

  it('documents exactly the six routes, each with GET, HEAD and OPTIONS', () => {
    expect(Object.keys(document.paths).sort()).toEqual(
      ['/manufacturers', '/manufacturers/{id}', '/modules', '/modules/{id}', '/standards', '/tags'].sort(),
    );
    for (const item of Object.values(document.paths) as Record<string, unknown>[]) {
      expect(Object.keys(item).sort()).toEqual(['get', 'head', 'options']);
    }
  });

  it('has no component nothing refers to', () => {
    expect(unusedComponents(document)).toEqual([]);
  });

  it('lists 405 under no operation (GET, HEAD and OPTIONS never get it) and says in its description who does', () => {
    for (const item of Object.values(document.paths) as Record<string, { responses: object }>[]) {
      for (const operation of Object.values(item))
        expect(Object.keys(operation.responses)).not.toContain('405');
    }
    expect(document.info.description).toContain(
      'any other method, on any path, is answered `405 method_not_allowed` (the error envelope, with `Allow: GET, HEAD, OPTIONS`) before the key is checked',
    );
  });

  it('stays in step with the code: error codes, fields, relations, enums', () => {
    const schemas = document.components.schemas;
    expect(schemas.ErrorEnvelope.properties.error.properties.code.enum).toEqual(ERROR_CODES);
    expect(document.components.parameters.fields.schema.items.enum).toEqual([...MODULE_FIELDS]);
    expect(document.components.parameters.moduleInclude.schema.items.enum).toEqual([...MODULE_RELATIONS]);
    expect(schemas.Tag.properties.type.enum).toEqual([...TAG_TYPES, null]);
    expect(schemas.Jack.properties.signal.enum).toEqual([...JACK_SIGNALS]);
  });

  it('the response validator refuses what the document does not describe', () => {
    const openapi = loadResponseValidator(document);
    const base = { method: 'GET', path: '/v1/tags', status: 200 };
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      etag: '"AAAAAAAAAAAAAAAAAAAAAA"',
      'cache-control': 'private, no-cache',
      vary: 'Accept-Encoding',
      link: '<https://creativecommons.org/licenses/by/4.0/>; rel="license"',
      'x-request-id': 'req_x',
      'x-content-type-options': 'nosniff',
      'x-ratelimit-limit-month': '5000',
      'x-ratelimit-remaining-month': '4999',
      'x-ratelimit-limit-minute': '60',
      'x-ratelimit-remaining-minute': '59',
      'x-ratelimit-reset': '1795000000',
    };
    const body = '{"data":[{"id":1,"name":"Analog","type":"nature"}],"page":{"next_cursor":null}}';
    expect(openapi.problems({ ...base, headers, body })).toEqual([]);
    expect(openapi.problems({ ...base, headers, body: body.replace('nature', 'nope') })).not.toEqual([]);
    expect(openapi.problems({ ...base, headers: { ...headers, 'x-extra': '1' }, body })).not.toEqual([]);
    expect(openapi.problems({ ...base, headers: { ...headers, link: undefined }, body })).not.toEqual([]);
    expect(openapi.problems({ ...base, status: 404, headers, body })).not.toEqual([]);
    expect(openapi.problems({ ...base, method: 'HEAD', headers, body })).not.toEqual([]);
    expect(openapi.problems({ ...base, method: 'HEAD', headers, body: '' })).toEqual([]);
    expect(openapi.problems({ ...base, headers: { ...headers, vary: undefined }, body })).not.toEqual([]);
  });

  it('coded answers: the body is decoded before validation; codings and tags are the documented ones', () => {
    const openapi = loadResponseValidator(document);
    const base = { method: 'GET', path: '/v1/standards', status: 200 };
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      etag: '"AAAAAAAAAAAAAAAAAAAAAA-gz"',
      'cache-control': 'private, no-cache',
      vary: 'Accept-Encoding',
      'content-encoding': 'gzip',
      link: '<https://creativecommons.org/licenses/by/4.0/>; rel="license"',
      'x-request-id': 'req_x',
      'x-content-type-options': 'nosniff',
      'x-ratelimit-limit-month': '5000',
      'x-ratelimit-remaining-month': '4999',
      'x-ratelimit-limit-minute': '60',
      'x-ratelimit-remaining-minute': '59',
      'x-ratelimit-reset': '1795000000',
    };
    const json = Buffer.from('{"data":[{"id":0,"name":"3U","height_mm":128.5}],"page":{"next_cursor":null}}');
    const br = { ...headers, 'content-encoding': 'br', etag: '"AAAAAAAAAAAAAAAAAAAAAA-br"' };
    const problems = (h: Record<string, string>, body: Buffer) =>
      openapi.problems({ ...base, headers: h, body });
    expect(problems(headers, gzipSync(json))).toEqual([]);
    expect(problems(br, brotliCompressSync(json))).toEqual([]);
    expect(problems(headers, json)).toEqual(['the body does not decode as gzip']);
    expect(problems({ ...headers, 'content-encoding': 'deflate' }, gzipSync(json))).not.toEqual([]);
    expect(problems({ ...headers, etag: '"AAAAAAAAAAAAAAAAAAAAAA-zz"' }, gzipSync(json))).not.toEqual([]);
  });
});
