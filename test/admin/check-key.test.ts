/**
 * The scheduled check key's custom resource (admin/check-key.ts) against dynalite, a Secrets Manager stand-in
 * and a stand-in of CloudFormation's response URL: Create makes a key, keeps it in the secret and registers
 * it with partner limits; an Update to another table registers the same key there; a new generation revokes
 * the old key and makes another; Delete revokes; a failure is answered FAILED with the reason (never the key),
 * except on Delete, which must not keep a stack from going.
 */
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CheckKeyProperties,
  type CustomResourceEvent,
  checkKeyAnswer,
  sendAnswer,
} from '../../admin/check-key.js';
import { AdminTables } from '../../admin/dynamo.js';
import { createTables } from '../../admin/tables.js';
import { secretsClient } from '../../aws/secrets.js';
import { API_KEY_PATTERN, hashApiKey } from '../../tables/keys.js';
import { type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';
import { closeServer, listenOnLoopback } from '../helpers/loopback.js';
import { type SecretsManagerStandIn, startSecretsManager } from '../helpers/secrets-manager.js';

const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:check-key-AbCdEf';
let db: DynamoFixture;
let stand: SecretsManagerStandIn;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  db = await dynamoFixture();
  await createTables(db.client, { keysTable: 'restored-keys', countersTable: 'unused-counters' });
  stand = await startSecretsManager({ [ARN]: 'a generated placeholder, not a key' });
}, 60_000);
afterAll(async () => {
  await stand.close();
  await db.dispose();
});

const properties = (over: Partial<CheckKeyProperties> = {}): CheckKeyProperties => ({
  KeysTable: db.keysTable,
  CountersTable: db.countersTable,
  SecretArn: ARN,
  Label: 'scheduled smoke check (Test)',
  LimitMinute: '30',
  LimitMonth: '200000',
  Generation: '1',
  ...over,
});
const event = (
  RequestType: CustomResourceEvent['RequestType'],
  ResourceProperties: CheckKeyProperties,
  OldResourceProperties?: CheckKeyProperties,
): CustomResourceEvent => ({
  RequestType,
  ResponseURL: 'http://127.0.0.1:1/unused',
  StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/Test/1',
  RequestId: 'r-1',
  LogicalResourceId: 'ScheduledCheckKey',
  ResourceProperties,
  ...(OldResourceProperties && { OldResourceProperties }),
});
const deps = () => ({
  secrets: secretsClient(ARN, {
    endpoint: stand.endpoint,
    credentials: () => ({ accessKeyId: 'l', secretAccessKey: 'l' }),
  }),
  tables: (names: { keysTable: string; countersTable: string }) =>
    new AdminTables({ dynamo: db.dynamo, ...names }),
  log: (line: Record<string, unknown>) => lines.push(line),
});
const stored = (table: string, key: string) =>
  new AdminTables({ dynamo: db.dynamo, keysTable: table, countersTable: '' }).keysByHash([hashApiKey(key)]);

describe('the check key resource', () => {
  let first: string;

  it('Create: makes a key, keeps it in the secret, registers it active with partner limits', async () => {
    const answer = await checkKeyAnswer(deps(), event('Create', properties()));

    first = stand.secrets.get(ARN)!;
    expect(first).toMatch(API_KEY_PATTERN);
    const record = (await stored(db.keysTable, first)).get(hashApiKey(first))!;
    expect(record).toMatchObject({
      tier: 'partner',
      status: 'active',
      limits: { minute: 30, month: 200_000 },
      label: 'scheduled smoke check (Test)',
    });
    expect(record.owner).toBeUndefined();
    expect(answer).toEqual({ Status: 'SUCCESS', Data: { KeyId: record.keyId } });
    expect(JSON.stringify(lines)).not.toContain(first);
  });

  it('Update to a restored keys table: registers the same key there, the secret unchanged', async () => {
    const answer = await checkKeyAnswer(
      deps(),
      event('Update', properties({ KeysTable: 'restored-keys' }), properties()),
    );

    expect(stand.secrets.get(ARN)).toBe(first);
    expect((await stored('restored-keys', first)).get(hashApiKey(first))).toMatchObject({ status: 'active' });
    expect(answer.Status).toBe('SUCCESS');
  });

  it('Update with a new generation: revokes the held key, makes and registers another', async () => {
    await checkKeyAnswer(deps(), event('Update', properties({ Generation: '2' }), properties()));

    const second = stand.secrets.get(ARN)!;
    expect(second).toMatch(API_KEY_PATTERN);
    expect(second).not.toBe(first);
    expect((await stored(db.keysTable, first)).get(hashApiKey(first))!.status).toBe('revoked');
    expect((await stored(db.keysTable, second)).get(hashApiKey(second))!.status).toBe('active');
  });

  it('Delete: revokes the held key', async () => {
    const held = stand.secrets.get(ARN)!;
    expect((await checkKeyAnswer(deps(), event('Delete', properties()))).Status).toBe('SUCCESS');
    expect((await stored(db.keysTable, held)).get(hashApiKey(held))!.status).toBe('revoked');
  });

  it('answers FAILED with the reason when it cannot provision, SUCCESS on a Delete that cannot revoke', async () => {
    stand.refuse.add('GetSecretValue');
    try {
      const created = await checkKeyAnswer(deps(), event('Create', properties()));
      const deleted = await checkKeyAnswer(deps(), event('Delete', properties()));

      expect(created).toEqual({
        Status: 'FAILED',
        Reason: 'the check key could not be provisioned: GetSecretValue failed (AccessDeniedException)',
      });
      expect(deleted.Status).toBe('SUCCESS');
    } finally {
      stand.refuse.clear();
    }
    const bad = await checkKeyAnswer(deps(), event('Create', properties({ LimitMonth: '-1' })));
    expect(bad).toMatchObject({
      Status: 'FAILED',
      Reason: expect.stringContaining('LimitMonth must be a positive integer'),
    });
  });
});

describe('sendAnswer', () => {
  it("PUTs the answer to CloudFormation's URL with the request's ids and a fixed physical id", async () => {
    const received: { method?: string; type?: string; body: string }[] = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => {
        body += chunk;
      });
      request.on('end', () => {
        received.push({ method: request.method, type: request.headers['content-type'], body });
        response.writeHead(200).end();
      });
    });
    const port = await listenOnLoopback(server);
    try {
      await sendAnswer(
        {
          ...event('Create', properties()),
          ResponseURL: `http://127.0.0.1:${port}/answer?X-Amz-Signature=s`,
        },
        { Status: 'SUCCESS', Data: { KeyId: 'key_abc' } },
      );
    } finally {
      await closeServer(server);
    }

    expect(received).toHaveLength(1);
    expect(received[0]!.method).toBe('PUT');
    expect(received[0]!.type).toBe('');
    expect(JSON.parse(received[0]!.body)).toEqual({
      Status: 'SUCCESS',
      Data: { KeyId: 'key_abc' },
      PhysicalResourceId: 'scheduled-check-key',
      StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/Test/1',
      RequestId: 'r-1',
      LogicalResourceId: 'ScheduledCheckKey',
    });
  });
});
