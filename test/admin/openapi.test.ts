/** admin/openapi.json: a valid OpenAPI 3.1 document, in step with the code's routes, error codes and bounds. */
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { ADMIN_ERROR_STATUS } from '../../admin/errors.js';
import { BOUNDS } from '../../admin/validate.js';
import { unusedComponents } from '../../docs/reference/shown.js';
import { ADMIN_OPENAPI_PATH, adminResponseValidator } from '../helpers/openapi.js';

const document = JSON.parse(readFileSync(ADMIN_OPENAPI_PATH, 'utf8'));

describe('admin/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(document.openapi).toMatch(/^3\.1\./);
  });

  it('has no component nothing refers to', () => {
    expect(unusedComponents(document)).toEqual([]);
  });

  it('documents the routes the handler serves, with one operation per action', () => {
    const operations = Object.values(
      document.paths as Record<string, Record<string, { operationId?: string }>>,
    )
      .flatMap((item) => Object.values(item).map((operation) => operation.operationId))
      .filter(Boolean)
      .sort();
    expect(operations).toEqual([
      'enable',
      'expiry',
      'get',
      'import',
      'issue',
      'limits',
      'list',
      'lookup',
      'revoke',
      'revokeByKey',
      'roll',
      'usage',
    ]);
  });

  it('stays in step with the code: error codes and bounds', () => {
    const schemas = document.components.schemas;
    expect(schemas.Error.properties.error.properties.code.enum).toEqual(Object.keys(ADMIN_ERROR_STATUS));
    expect(schemas.Owner.maxLength).toBe(BOUNDS.ownerLength);
    expect(schemas.Limits.properties.minute.maximum).toBe(BOUNDS.minute.max);
    expect(schemas.Limits.properties.month.maximum).toBe(BOUNDS.month.max);
    expect(schemas.IssueRequest.properties.label.maxLength).toBe(BOUNDS.labelLength);
  });

  it('the response validator refuses what the document does not describe', () => {
    const openapi = adminResponseValidator(document);
    const headers = {
      'x-request-id': 'req_AAAAAAAAAAAAAAAA',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
      'content-type': 'application/json',
    };
    const error = JSON.stringify({
      error: { code: 'key_not_found', message: 'No key.', request_id: 'req_AAAAAAAAAAAAAAAA' },
    });
    expect(
      openapi.problems({ method: 'GET', path: '/v1/keys/key_AAAAAAAAAA', status: 404, headers, body: error }),
    ).toEqual([]);
    expect(
      openapi.problems({ method: 'GET', path: '/v1/keys/key_AAAAAAAAAA', status: 418, headers, body: error }),
    ).not.toEqual([]);
    expect(
      openapi.problems({
        method: 'GET',
        path: '/v1/keys/key_AAAAAAAAAA',
        status: 404,
        headers: { ...headers, 'x-extra': '1' },
        body: error,
      }),
    ).toEqual(['header x-extra is not documented']);
    expect(
      openapi.problems({
        method: 'GET',
        path: '/v1/keys/key_AAAAAAAAAA',
        status: 200,
        headers,
        body: JSON.stringify({ data: { key_id: 'x' }, request_id: 'req_AAAAAAAAAAAAAAAA' }),
      }),
    ).not.toEqual([]);
  });
});
