/**
 * The admin API behind a function URL (admin/http/lambda.ts): the event's caller (requestContext.authorizer.iam)
 * becomes the audited principal; an event without one is refused; base64 bodies are read.
 */
import { describe, expect, it } from 'vitest';
import { requestOf, resultOf } from '../../../admin/http/lambda.js';

const iam = {
  accessKey: 'ASIAEXAMPLE',
  accountId: '123456789012',
  callerId: 'AROAEXAMPLE:app',
  userArn: 'arn:aws:sts::123456789012:assumed-role/app/i-0abc',
  userId: 'AROAEXAMPLE:app',
};

describe('requestOf', () => {
  it('takes the caller from requestContext.authorizer.iam, the method, path, query, headers and body', () => {
    const request = requestOf({
      rawPath: '/v1/keys',
      rawQueryString: 'owner=u1',
      headers: { 'Content-Type': 'application/json', 'idempotency-key': 'k1' },
      body: Buffer.from('{"owner":"u1","tier":"free"}').toString('base64'),
      isBase64Encoded: true,
      requestContext: { http: { method: 'POST' }, authorizer: { iam } },
    });
    expect(request).toEqual({
      method: 'POST',
      path: '/v1/keys',
      query: 'owner=u1',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
      body: Buffer.from('{"owner":"u1","tier":"free"}'),
      principal: { arn: iam.userArn, accountId: iam.accountId, userId: iam.userId },
    });
  });

  it('refuses an event without an IAM caller (a URL that is not AWS_IAM)', () => {
    const request = requestOf({ rawPath: '/v1/keys', requestContext: { http: { method: 'GET' } } });
    expect(request.principal).toBeUndefined();
    expect(request.refusal).toContain('AWS_IAM');
  });
});

describe('resultOf', () => {
  it('is the function URL result of the answer', () => {
    expect(resultOf({ status: 201, headers: { 'x-request-id': 'req_x' }, body: '{}' })).toEqual({
      statusCode: 201,
      headers: { 'x-request-id': 'req_x' },
      body: '{}',
    });
  });
});
