/** Shared fixtures for the key and quota suites: a dynalite with both tables, call counting, records. */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type LocalServer, startDynamo } from '@catalogue/local-aws';
import { createTables } from '../../admin/tables.js';
import type { LeanDynamo } from '../../aws/dynamodb.js';
import { credentialProvider, dynamoClient, leanDynamo } from '../../aws/sdk.js';
import { LeanCounterTransport } from '../../proxy/quota/dynamo-lean.js';
import type { CounterTransport } from '../../proxy/quota/dynamo-transport.js';
import { FREE_TIER_LIMITS, generateKeyId, hashApiKey, type KeyRecord } from '../../tables/keys.js';
import type { TableNames } from '../../tables/schema.js';

export interface DynamoFixture extends TableNames {
  server: LocalServer;
  /** The SDK's client, for setting up and reading back (never the request path's calls). */
  client: DynamoDBClient;
  /** The request path's client (lean signed requests), for the key store and the meter. */
  transport: LeanCounterTransport;
  /** Key administration's client (lean signed requests): with the table names, what test/helpers/admin.ts takes. */
  dynamo: LeanDynamo;
  dispose(): Promise<void>;
}

/**
 * The request path's DynamoDB client against a local `endpoint`, as the proxy wires it; close it when done.
 * @example const meter = new DynamoQuotaMeter({ transport: leanTransport(db.server.endpoint), table });
 */
export function leanTransport(endpoint: string): LeanCounterTransport {
  return new LeanCounterTransport({
    endpoint,
    region: 'us-east-1',
    credentials: credentialProvider(endpoint),
  });
}

/** A fresh dynalite on an ephemeral port with both tables created. Dispose in afterAll. */
export async function dynamoFixture(): Promise<DynamoFixture> {
  const server = await startDynamo();
  const client = dynamoClient({ endpoint: server.endpoint });
  const names = { keysTable: 'test-keys', countersTable: 'test-counters' };
  await createTables(client, names);
  const transport = leanTransport(server.endpoint);
  const dynamo = leanDynamo(server.endpoint);
  return {
    server,
    client,
    transport,
    dynamo,
    ...names,
    async dispose() {
      client.destroy();
      await transport.close();
      await dynamo.close();
      await server.dispose();
    },
  };
}

/** Record the operation of every call of key administration's client (one per logical call; its retries are not separate). */
export function countCalls(dynamo: LeanDynamo): { calls: string[]; reset(): void } {
  const calls: string[] = [];
  const original = dynamo.call.bind(dynamo);
  dynamo.call = (operation, input, signal) => {
    calls.push(operation);
    return original(operation, input, signal);
  };
  return { calls, reset: () => calls.splice(0) };
}

/** Record the DynamoDB call behind every call of the request path's client (a resend after throttling is not separate). */
export function countTransportCalls(transport: CounterTransport): {
  transport: CounterTransport;
  calls: string[];
} {
  const calls: string[] = [];
  return {
    calls,
    transport: {
      updateItem: (input, signal) => {
        calls.push('UpdateItem');
        return transport.updateItem(input, signal);
      },
      getItem: (input, signal) => {
        calls.push('GetItem');
        return transport.getItem(input, signal);
      },
    },
  };
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

/**
 * An item's size as DynamoDB bills it (one WCU per started KB): each attribute's name in UTF-8, plus its value
 * — a string's UTF-8 bytes, a number's one byte per two significant digits plus one, a binary's bytes.
 * @example itemBytes({ pk: { S: 'key_x#2026-11' } }) // → 15
 */
export function itemBytes(item: Record<string, AttributeValue>): number {
  let size = 0;
  for (const [attribute, value] of Object.entries(item)) {
    size += Buffer.byteLength(attribute);
    if (value.S !== undefined) size += Buffer.byteLength(value.S);
    else if (value.N !== undefined) {
      const digits = value.N.replace(/^-/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
      size += Math.ceil(digits.length / 2) + 1;
    } else if (value.B !== undefined) size += value.B.byteLength;
    else throw new Error(`itemBytes: attribute ${attribute} of a type not sized here`);
  }
  return size;
}

/** A Date from an ISO string (test clocks). */
export const at = (iso: string) => new Date(iso);
