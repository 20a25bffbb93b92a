/**
 * client/errors.ts: the error codes come from the contract (the OpenAPI document's error envelope, which the
 * proxy's one error table must match), `code` is a closed union — a misspelt code does not compile, a `switch`
 * narrows without casts — and a code the client does not know (a newer server's) arrives as `unknown_code`,
 * the server's own in `apiCode`. The same type cases run against the packed tarball (package.test.ts).
 */
import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from 'vitest';
import {
  API_ERROR_CODES,
  type ApiErrorCode,
  CatalogueApiError,
  CatalogueClient,
  CLIENT_ERROR_CODES,
  type ErrorCode,
  isErrorCode,
  responseOf,
} from '../../client/index.js';
import { ERROR_CODES, type ErrorCode as ProxyErrorCode } from '../../proxy/http/errors.js';
import { OPENAPI_PATH } from '../helpers/openapi.js';
import { errorAnswer, RATE_HEADERS, type ScriptedServer, startScripted } from './scripted.js';

const KEY = `pk_live_${'E'.repeat(22)}`;

describe('the codes', () => {
  it("are the OpenAPI document's error envelope's, which are the proxy's", () => {
    const document = JSON.parse(readFileSync(OPENAPI_PATH, 'utf8'));
    const documented: string[] =
      document.components.schemas.ErrorEnvelope.properties.error.properties.code.enum;

    expect([...API_ERROR_CODES]).toEqual(documented);
    expect([...API_ERROR_CODES].sort()).toEqual([...ERROR_CODES].sort());
    expectTypeOf<ApiErrorCode>().toEqualTypeOf<ProxyErrorCode>();
    expect(Object.values(CLIENT_ERROR_CODES)).toEqual([
      'invalid_response',
      'network_error',
      'timeout',
      'unknown_code',
    ]);
    // The client's own never collide with the API's.
    expect(API_ERROR_CODES.every(isErrorCode)).toBe(true);
    expect(
      Object.values(CLIENT_ERROR_CODES).some((code) => (API_ERROR_CODES as string[]).includes(code)),
    ).toBe(false);
  });

  it.each([
    ['not_found', true],
    ['timeout', true],
    ['unknown_code', true],
    ['not_foud', false],
    ['NOT_FOUND', false],
    ['', false],
    [undefined, false],
    [404, false],
  ])('isErrorCode(%j) → %j', (value, expected) => {
    expect(isErrorCode(value)).toBe(expected);
  });

  it('are a closed union: a known code in a constructed error stays, any other becomes unknown_code', () => {
    const known = new CatalogueApiError({ status: 404, code: 'not_found', message: 'm' });
    const newer = new CatalogueApiError({ status: 409, code: 'conflict', message: 'm' });

    expect([known.code, known.apiCode]).toEqual(['not_found', undefined]);
    expect([newer.code, newer.apiCode]).toEqual(['unknown_code', 'conflict']);
    expectTypeOf(known.code).toEqualTypeOf<ErrorCode>();
  });
});

/** Never called: what tsc says about these lines is the test. */
function typeCases(error: CatalogueApiError): string {
  // @ts-expect-error -- a misspelt code in a comparison does not compile
  if (error.code === 'not_foud') return 'never';
  if (error.code === 'not_found') expectTypeOf(error.code).toEqualTypeOf<'not_found'>();
  switch (error.code) {
    case 'rate_limit_exceeded':
      expectTypeOf(error.code).toEqualTypeOf<'rate_limit_exceeded'>();
      return `retry after ${error.retryAfter}`;
    // @ts-expect-error -- nor in a case
    case 'rate_limit_exeeded':
      return 'never';
    case 'unknown_code':
      // A newer server's code, typed as a code this version does not know, the server's own beside it.
      expectTypeOf(error.apiCode).toEqualTypeOf<string | undefined>();
      return error.apiCode ?? 'unknown';
    default: {
      // Narrowed without a cast: everything but the cases above.
      expectTypeOf(error.code).toEqualTypeOf<Exclude<ErrorCode, 'rate_limit_exceeded' | 'unknown_code'>>();
      // Still a string wherever 0.2's `code: string` went.
      const text: string = error.code;
      return text;
    }
  }
}

/** Exhaustive: a switch with no default compiles to `never` after the last case, and fails if a code is missed. */
function exhaustive(code: ErrorCode): number {
  switch (code) {
    case 'unknown_parameter':
    case 'invalid_parameter':
    case 'unsupported_parameter':
      return 400;
    case 'missing_authorization':
    case 'malformed_authorization':
    case 'invalid_key':
      return 401;
    case 'not_found':
      return 404;
    case 'method_not_allowed':
      return 405;
    case 'rate_limit_exceeded':
      return 429;
    case 'configuration_error':
    case 'authentication_unavailable':
    case 'quota_unavailable':
    case 'origin_unavailable':
      return 503;
    case 'invalid_response':
    case 'network_error':
    case 'timeout':
    case 'unknown_code':
      return 0;
    default: {
      const missed: never = code;
      return missed;
    }
  }
}

describe('types', () => {
  it('narrow, refuse misspelt codes and stay strings (tsc checks typeCases and exhaustive)', () => {
    expect(typeCases).toBeTypeOf('function');
    expect(exhaustive('not_found')).toBe(404);
  });
});

describe('an answer with a code the client does not know (a newer server)', () => {
  let api: ScriptedServer;
  beforeEach(async () => {
    api = await startScripted();
  });
  afterEach(async () => {
    await api.close();
  });

  it('arrives as unknown_code with the server’s code, message, request id and answer', async () => {
    // Prepare: a 409 of a code /v1 does not have, and one named like a client code
    api.script(errorAnswer(409, 'snapshot_conflict', RATE_HEADERS(7)), errorAnswer(400, 'timeout'));
    const client = new CatalogueClient({ baseUrl: api.baseUrl, apiKey: KEY, logger: false });

    // Act
    const newer = await client.tags.listPage().catch((error: unknown) => error as CatalogueApiError);
    const lookalike = await client.tags.listPage().catch((error: unknown) => error as CatalogueApiError);

    // Assess: not retried, not mistaken for invalid_response, nor for the client's own timeout
    expect(newer).toBeInstanceOf(CatalogueApiError);
    expect(newer).toMatchObject({
      status: 409,
      code: 'unknown_code',
      apiCode: 'snapshot_conflict',
      message: 'scripted snapshot_conflict',
      requestId: 'req_snapshot_conflict',
    });
    expect(responseOf(newer)).toMatchObject({ status: 409, rateLimit: { remainingMinute: 7 } });
    expect(lookalike).toMatchObject({ status: 400, code: 'unknown_code', apiCode: 'timeout' });
    expect(api.requests).toHaveLength(2);
  });

  it('a known code keeps its apiCode, equal to code', async () => {
    api.script(errorAnswer(404, 'not_found'));
    const client = new CatalogueClient({ baseUrl: api.baseUrl, apiKey: KEY, logger: false });

    const error: unknown = await client.modules.get(5).catch((caught: unknown) => caught);

    if (!(error instanceof CatalogueApiError)) throw new Error('expected a CatalogueApiError');

    expect([error.code, error.apiCode]).toEqual(['not_found', 'not_found']);
  });
});
