/** Shared fixtures for the key and quota suites: a dynalite with both tables, call counting, records. */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createTables } from '../../admin/tables.js';
import { dynamoClient } from '../../aws/sdk.js';
import { type LocalServer, startDynamo } from '../../local/servers.js';
import { FREE_TIER_LIMITS, generateKeyId, hashApiKey, type KeyRecord } from '../../tables/keys.js';
import type { TableNames } from '../../tables/schema.js';

export interface DynamoFixture extends TableNames {
  server: LocalServer;
  client: DynamoDBClient;
  dispose(): Promise<void>;
}

/** A fresh dynalite on an ephemeral port with both tables created. Dispose in afterAll. */
export async function dynamoFixture(): Promise<DynamoFixture> {
  const server = await startDynamo();
  const client = dynamoClient({ endpoint: server.endpoint });
  const names = { keysTable: 'test-keys', countersTable: 'test-counters' };
  await createTables(client, names);
  return {
    server,
    client,
    ...names,
    async dispose() {
      client.destroy();
      await server.dispose();
    },
  };
}

type Send = (command: { constructor: { name: string } }, options?: unknown) => Promise<unknown>;

/** Record the name of every command sent through `client` (logical calls; SDK retries are not separate). */
export function countCalls(client: DynamoDBClient): { calls: string[]; reset(): void } {
  const calls: string[] = [];
  const target = client as unknown as { send: Send };
  const original = target.send.bind(client);
  target.send = (command, options) => {
    calls.push(command.constructor.name.replace(/Command$/, ''));
    return original(command, options);
  };
  return { calls, reset: () => calls.splice(0) };
}

/** A key record with a fresh key id (so each test meters its own counters). */
export function keyRecord(overrides: Partial<KeyRecord> = {}): KeyRecord {
  return {
    keyHash: hashApiKey(`pk_live_${generateKeyId()}`),
    keyId: generateKeyId(),
    tier: 'free',
    status: 'active',
    limits: { ...FREE_TIER_LIMITS },
    created: '2026-11-01T00:00:00.000Z',
    ...overrides,
  };
}

/** A Date from an ISO string (test clocks). */
export const at = (iso: string) => new Date(iso);
