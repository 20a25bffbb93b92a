/** Secrets Manager's lean calls (aws/secrets.ts) against a loopback stand-in: read, put, and refusals named. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getSecretString, putSecretString, secretsClient } from '../../aws/secrets.js';
import { type SecretsManagerStandIn, startSecretsManager } from '../helpers/secrets-manager.js';

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:check-key-AbCdEf';
const credentials = () => ({ accessKeyId: 'local', secretAccessKey: 'local' });
let stand: SecretsManagerStandIn;

beforeAll(async () => {
  stand = await startSecretsManager({ [ARN]: 'first' });
});
afterAll(() => stand.close());

describe('getSecretString and putSecretString', () => {
  it('reads the value, puts a new one, and reads that one', async () => {
    const client = secretsClient(ARN, { endpoint: stand.endpoint, credentials });

    expect(await getSecretString(client, ARN)).toBe('first');
    await putSecretString(client, ARN, 'second');
    expect(await getSecretString(client, ARN)).toBe('second');
    expect(stand.calls.map((call) => call.operation)).toEqual([
      'GetSecretValue',
      'PutSecretValue',
      'GetSecretValue',
    ]);
  });

  it('names the refusal: a missing secret, a call the role may not make', async () => {
    const client = secretsClient(ARN, { endpoint: stand.endpoint, credentials });
    const missing = `${ARN}-gone`;

    await expect(getSecretString(client, missing)).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
      message: 'GetSecretValue failed (ResourceNotFoundException)',
    });
    stand.refuse.add('PutSecretValue');
    await expect(putSecretString(client, ARN, 'third')).rejects.toMatchObject({
      name: 'AccessDeniedException',
    });
    stand.refuse.clear();
    expect(stand.secrets.get(ARN)).toBe('second');
  });
});
