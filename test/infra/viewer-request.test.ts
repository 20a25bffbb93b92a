/**
 * The CloudFront viewer-request function (infra/viewer-request.js), run as plain JS. Every Authorization
 * case is in test/auth (one table for the function, the proxy's parser and the node:http adapter).
 */

import { statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadViewerRequest, VIEWER_REQUEST_FILE } from './viewer-request-code.js';

const handler = loadViewerRequest();

type Headers = Record<string, { value: string; multiValue?: { value: string }[] }>;

function event(method: string, headers: Headers = {}) {
  return {
    version: '1.0',
    context: { eventType: 'viewer-request', requestId: 'Qx3-9_abcDEF==' },
    viewer: { ip: '198.51.100.7' },
    request: { method, uri: '/v1/modules', querystring: {}, headers, cookies: {} },
  };
}

describe('viewer-request function', () => {
  it('fits CloudFront Functions’ 10 KB code limit', () => {
    expect(statSync(VIEWER_REQUEST_FILE).size).toBeLessThan(10_240);
  });

  describe('methods', () => {
    it.each(['GET', 'HEAD', 'OPTIONS'])('forwards %s with a well-formed key to the origin', (method) => {
      // Prepare
      const input = event(method, { authorization: { value: 'Bearer pk_live_AAAAAAAAAAAAAAAAAAAAAA' } });
      // Act
      const result = handler(input);
      // Assess
      expect(result).toBe(input.request);
    });

    it.each(['POST', 'PUT', 'PATCH', 'DELETE'])('answers %s with 405 and the error envelope', (method) => {
      const result = handler(
        event(method, { authorization: { value: 'Bearer pk_live_AAAAAAAAAAAAAAAAAAAAAA' } }),
      );

      expect(result.statusCode).toBe(405);
      const headers = result.headers as Headers;
      expect(headers.allow).toEqual({ value: 'GET, HEAD, OPTIONS' });
      expect(headers['content-type']).toEqual({ value: 'application/json; charset=utf-8' });
      expect(headers['cache-control']).toEqual({ value: 'no-store' });
      expect(headers['x-request-id']).toEqual({ value: 'req_Qx3-9_abcDEF' });
      const body = result.body as { encoding: string; data: string };
      expect(body.encoding).toBe('text');
      expect(JSON.parse(body.data)).toEqual({
        error: {
          code: 'method_not_allowed',
          message: `The method ${method} is not allowed; use GET, HEAD, OPTIONS.`,
          request_id: 'req_Qx3-9_abcDEF',
        },
      });
    });

    it('answers 405 even without a request id from CloudFront', () => {
      const input = event('POST');
      input.context.requestId = '';

      const result = handler(input);

      const body = JSON.parse((result.body as { data: string }).data);
      expect(body.error.request_id).toMatch(/^req_[0-9]+$/);
    });

    it.each(['DELETE', 'GET'])('carries the security headers on its own answers (%s)', (method) => {
      const headers = handler(event(method)).headers as Headers;

      expect(headers['strict-transport-security']?.value).toBe('max-age=31536000; includeSubDomains');
      expect(headers['x-content-type-options']?.value).toBe('nosniff');
      expect(headers['x-frame-options']?.value).toBe('DENY');
      expect(headers['referrer-policy']?.value).toBe('no-referrer');
    });
  });

  describe('authorization hand-over', () => {
    it('moves Authorization to x-catalogue-authorization', () => {
      const result = handler(
        event('GET', { authorization: { value: 'Bearer pk_live_AAAAAAAAAAAAAAAAAAAAAA' } }),
      );

      const headers = (result as { headers: Headers }).headers;
      expect(headers['x-catalogue-authorization']).toEqual({
        value: 'Bearer pk_live_AAAAAAAAAAAAAAAAAAAAAA',
      });
      // CloudFront's SigV4 signature takes the Authorization header; the key must not be in it.
      expect(headers.authorization).toBeUndefined();
    });

    it('drops a viewer-supplied x-catalogue-authorization (no spoofing)', () => {
      const result = handler(
        event('GET', {
          authorization: { value: 'Bearer pk_live_BBBBBBBBBBBBBBBBBBBBBB' },
          'x-catalogue-authorization': { value: 'Bearer pk_live_AAAAAAAAAAAAAAAAAAAAAA' },
        }),
      );

      const headers = (result as { headers: Headers }).headers;
      expect(headers['x-catalogue-authorization']).toEqual({
        value: 'Bearer pk_live_BBBBBBBBBBBBBBBBBBBBBB',
      });
    });

    it('answers 401 missing_authorization when only a spoofed x-catalogue-authorization came', () => {
      const result = handler(
        event('GET', { 'x-catalogue-authorization': { value: 'Bearer pk_live_AAAAAAAAAAAAAAAAAAAAAA' } }),
      );

      expect(result.statusCode).toBe(401);
      expect(JSON.parse((result.body as { data: string }).data).error.code).toBe('missing_authorization');
      expect((result.headers as Headers)['www-authenticate']).toEqual({ value: 'Bearer realm="catalogue"' });
    });

    it('answers a repeated Authorization with 401 malformed_authorization, as the proxy does', () => {
      const repeated = {
        value: 'Bearer pk_live_AAAAAAAAAAAAAAAAAAAAAA',
        multiValue: [
          { value: 'Bearer pk_live_AAAAAAAAAAAAAAAAAAAAAA' },
          { value: 'Bearer pk_live_BBBBBBBBBBBBBBBBBBBBBB' },
        ],
      };

      const result = handler(event('HEAD', { authorization: repeated }));

      expect(result.statusCode).toBe(401);
      expect(JSON.parse((result.body as { data: string }).data).error.code).toBe('malformed_authorization');
    });

    it('leaves the other headers alone', () => {
      const result = handler(
        event('GET', {
          authorization: { value: 'Bearer pk_live_AAAAAAAAAAAAAAAAAAAAAA' },
          'if-none-match': { value: '"abc"' },
        }),
      );

      expect((result as { headers: Headers }).headers['if-none-match']).toEqual({ value: '"abc"' });
    });
  });
});
