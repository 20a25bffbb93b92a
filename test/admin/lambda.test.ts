/** The admin function's entry (admin/lambda.ts): a missing setting answers 503 with a request id, logged, no crash. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { handler } from '../../admin/lambda.js';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('handler', () => {
  it('answers 503 service_unavailable with Retry-After and a request id when KEYS_TABLE is missing', async () => {
    vi.stubEnv('KEYS_TABLE', '');
    const written: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });

    const result = await handler({ rawPath: '/v1/keys', requestContext: { http: { method: 'GET' } } });

    const body = JSON.parse(result.body);
    expect(result).toMatchObject({ statusCode: 503, headers: { 'retry-after': '30' } });
    expect(body.error).toMatchObject({
      code: 'service_unavailable',
      request_id: result.headers['x-request-id'],
    });
    expect(JSON.parse(written[0]!)).toMatchObject({
      type: 'admin_audit',
      outcome: 'configuration_error',
      error: 'KEYS_TABLE is not set',
    });
  });
});
