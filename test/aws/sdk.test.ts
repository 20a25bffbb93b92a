/** aws/sdk.ts: the SDK clients follow the same endpoint and loopback-credential rules as the lean ones. */
import { afterEach, describe, expect, it } from 'vitest';
import { dynamoClient, s3Client } from '../../aws/sdk.js';

const NAMES = [
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL_DYNAMODB',
  'S3_ENDPOINT',
  'DYNAMODB_ENDPOINT',
  'AWS_ACCESS_KEY_ID',
];
const saved = Object.fromEntries(NAMES.map((name) => [name, process.env[name]]));
afterEach(() => {
  for (const name of NAMES) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
});

async function endpointOf(client: {
  config: { endpoint?: () => Promise<{ hostname: string; port?: number }> };
}) {
  const endpoint = await client.config.endpoint?.();
  return endpoint && `${endpoint.hostname}:${endpoint.port}`;
}

describe('SDK clients', () => {
  it('honour AWS_ENDPOINT_URL_S3 / _DYNAMODB and AWS_ENDPOINT_URL, with fixed loopback credentials', async () => {
    for (const name of NAMES) delete process.env[name];
    process.env.AWS_ENDPOINT_URL_S3 = 'http://127.0.0.1:4568';
    process.env.AWS_ENDPOINT_URL = 'http://127.0.0.1:4569';
    const s3 = s3Client();
    const dynamo = dynamoClient();
    try {
      expect(await endpointOf(s3)).toBe('127.0.0.1:4568');
      expect(await endpointOf(dynamo)).toBe('127.0.0.1:4569');
      expect(s3.config.forcePathStyle).toBe(true);
      expect(await s3.config.credentials()).toMatchObject({ accessKeyId: 'S3RVER' });
      expect(await dynamo.config.credentials()).toMatchObject({ accessKeyId: 'S3RVER' });
    } finally {
      s3.destroy();
      dynamo.destroy();
    }
  });
});
