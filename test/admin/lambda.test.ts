/**
 * The admin function's entry (admin/lambda.ts) as Lambda invokes it, with function URL events: a missing
 * setting answers 503 with a request id, logged, no crash; against dynalite (behind a fault proxy, as the
 * function's DynamoDB endpoint), issue 36's findings (test/helpers/admin-findings.ts) — no key in any answer
 * or log line, malformed requests answered in the envelope, dates and labels checked, the cap under races —
 * and a Host sent twice or malformed as a function URL passes it on.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditLine } from '../../admin/http/handler.js';
import { handler } from '../../admin/lambda.js';
import {
  type AdminAnswer,
  type CallOptions,
  describeAdminFindings,
  type FindingsHarness,
} from '../helpers/admin-findings.js';
import { describeKeyBodies } from '../helpers/admin-key-bodies.js';
import { type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';
import { type FaultProxy, startFaultProxy } from '../helpers/fault-proxy.js';

const CAP = 2;
const HOST = 'abcdefghij.lambda-url.eu-west-1.on.aws';
const iam = { userArn: 'arn:aws:sts::123456789012:assumed-role/app/i-0abc', accountId: '123456789012' };

let db: DynamoFixture;
let faults: FaultProxy;
const audit: AuditLine[] = [];

/** Invoke the function with the function URL event of `method /v1{target}`, as an allowed IAM caller. */
async function invoke(method: string, target: string, options: CallOptions = {}): Promise<AdminAnswer> {
  const at = target.indexOf('?');
  const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  const result = await handler({
    rawPath: `/v1${at < 0 ? target : target.slice(0, at)}`,
    rawQueryString: at < 0 ? '' : target.slice(at + 1),
    headers: {
      host: HOST,
      ...(body !== undefined && { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(body !== undefined && { body, isBase64Encoded: false }),
    requestContext: { http: { method }, authorizer: { iam } },
  });
  return {
    status: result.statusCode,
    headers: result.headers,
    body: result.body,
    json: JSON.parse(result.body),
  };
}

describe('handler, not configured', () => {
  it('answers 503 service_unavailable with Retry-After and a request id when KEYS_TABLE is missing', async () => {
    vi.stubEnv('KEYS_TABLE', '');
    const written: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
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
    } finally {
      spy.mockRestore();
      vi.unstubAllEnvs();
    }
  });
});

describe('handler, against dynalite', () => {
  beforeAll(async () => {
    db = await dynamoFixture();
    faults = await startFaultProxy({ targetPort: db.server.port });
    vi.stubEnv('KEYS_TABLE', db.keysTable);
    vi.stubEnv('COUNTERS_TABLE', db.countersTable);
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', faults.endpoint);
    vi.stubEnv('ADMIN_MAX_KEYS_PER_OWNER', String(CAP));
    const write = process.stdout.write.bind(process.stdout);
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk, ...rest) => {
      const text = String(chunk);
      if (!text.startsWith('{"level"')) return write(chunk, ...(rest as []));
      audit.push(JSON.parse(text));
      return true;
    });
  });
  afterAll(async () => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
    await faults?.close();
    await db?.dispose();
  });

  const harness: FindingsHarness = {
    call: invoke,
    audit,
    cap: CAP,
    get faults() {
      return faults;
    },
  };
  describeAdminFindings('the Lambda handler', () => harness, { clock: false });
  describeKeyBodies('the Lambda handler', () => harness);

  it.each([
    ['sent twice (joined by the function URL)', `${HOST}, evil.example`, 'must be sent once'],
    ['malformed', 'a b', 'must be a host name or address, with an optional port'],
  ])('answers a Host %s with 400 in the envelope, audited', async (_, host, problem) => {
    const answer = await invoke('GET', '/keys?owner=u1', { headers: { host } });
    expect(answer.status).toBe(400);
    expect(answer.json.error.details).toEqual([{ field: 'Host', problem }]);
    expect(audit.find((line) => line.request_id === answer.json.error.request_id)).toMatchObject({
      status: 400,
    });
  });
});
