import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CachedKeyStore } from '../../../proxy/keys/cached.js';
import { DynamoKeyStore } from '../../../proxy/keys/dynamo.js';
import { DynamoQuotaMeter } from '../../../proxy/quota/dynamo.js';
import { DependencyError } from '../../../store/errors.js';
import { hashApiKey } from '../../../tables/keys.js';
import { issueKey } from '../../helpers/admin.js';
import { type DynamoFixture, dynamoFixture, keyRecord, leanTransport } from '../../helpers/dynamo.js';

let db: DynamoFixture;

beforeAll(async () => {
  db = await dynamoFixture();
});
afterAll(async () => {
  await db?.dispose();
});

describe('failing closed', () => {
  it('throws DependencyError while DynamoDB is down, and recovers with the same clients', async () => {
    // Prepare: one client for both stores, as in the proxy, kept across the outage.
    const transport = leanTransport(db.server.endpoint);
    const store = new CachedKeyStore(new DynamoKeyStore({ transport, table: db.keysTable }), {
      ttlMs: 0,
      maxEntries: 10,
    });
    const meter = new DynamoQuotaMeter({ transport, table: db.countersTable });
    const admin = { dynamo: db.dynamo, keysTable: db.keysTable, countersTable: db.countersTable };
    const { key, record } = await issueKey(admin, { tier: 'free' });
    expect(await store.lookup(hashApiKey(key))).toEqual(record);
    expect((await meter.meter(record, new Date())).ok).toBe(true);

    try {
      // Act: stop the server for real (connections refused).
      await db.server.stop();
      const lookup = store.lookup(hashApiKey(key)).catch((error: unknown) => error);
      const metered = meter.meter(record, new Date()).catch((error: unknown) => error);

      // Assess
      expect(await lookup).toMatchObject({ name: 'DependencyError', dependency: 'keys' });
      expect(await metered).toMatchObject({ name: 'DependencyError', dependency: 'quota' });
      expect(((await metered) as DependencyError).cause).toBeDefined();
    } finally {
      await db.server.start();
    }

    expect(await store.lookup(hashApiKey(key))).toEqual(record);
    expect(await meter.meter(record, new Date())).toMatchObject({ ok: true, remainingMinute: 58 });
    await transport.close();
  });

  it('maps any other failure and an abort to DependencyError', async () => {
    const missing = new DynamoQuotaMeter({ transport: db.transport, table: 'no-such-table' });
    const keys = new DynamoKeyStore({ transport: db.transport, table: 'no-such-table' });
    const meter = new DynamoQuotaMeter({ transport: db.transport, table: db.countersTable });

    const noTable = await missing.meter(keyRecord(), new Date()).catch((error: unknown) => error);
    const noKeys = await keys.lookup('0'.repeat(64)).catch((error: unknown) => error);
    const aborted = await meter
      .meter(keyRecord(), new Date(), { signal: AbortSignal.abort() })
      .catch((error: unknown) => error);

    expect(noTable).toBeInstanceOf(DependencyError);
    expect(noTable).toMatchObject({
      dependency: 'quota',
      message: expect.stringContaining('ResourceNotFound'),
    });
    expect(noKeys).toMatchObject({ dependency: 'keys' });
    expect(aborted).toMatchObject({ name: 'DependencyError', dependency: 'quota' });
  });
});
