/**
 * A revoke's stop (admin/stop.ts) as the request path meets it, against dynalite: a proxy container whose key
 * cache still holds the key as accepted refuses its very next request, because the meter's one write per
 * request reads the stop; the stop spans next month's counter item when it runs into it, keeps the counts, and
 * ends by itself; an enable lifts it at once.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as actions from '../../admin/actions.js';
import { AdminTables } from '../../admin/dynamo.js';
import { stopKey } from '../../admin/stop.js';
import { CachedKeyStore } from '../../proxy/keys/cached.js';
import { DynamoKeyStore } from '../../proxy/keys/dynamo.js';
import { DynamoQuotaMeter } from '../../proxy/quota/dynamo.js';
import { STOP_MS } from '../../tables/counters.js';
import { FREE_TIER_LIMITS, type KeyRecord, keyAccepted } from '../../tables/keys.js';
import { adminContext, issueKey } from '../helpers/admin.js';
import { at, type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';

let db: DynamoFixture;
beforeAll(async () => {
  db = await dynamoFixture();
});
afterAll(async () => {
  await db?.dispose();
});

/** One proxy container: its key cache (30 s) over the keys table, and its meter, on its own clock. */
function container(clock: { now: Date }) {
  const keys = new CachedKeyStore(new DynamoKeyStore({ transport: db.transport, table: db.keysTable }), {
    ttlMs: 30_000,
    maxEntries: 100,
    now: () => clock.now.getTime(),
  });
  const meter = new DynamoQuotaMeter({ transport: db.transport, table: db.countersTable });
  return {
    /** What the request path decides for `record`'s key now: refused by the cache, by the meter, or admitted. */
    async request(record: KeyRecord): Promise<'refused by the key cache' | 'stopped' | 'admitted' | string> {
      const found = await keys.lookup(record.keyHash);
      if (!found || !keyAccepted(found, clock.now.getTime())) return 'refused by the key cache';
      const outcome = await meter.meter(found, clock.now);
      return outcome.ok ? 'admitted' : outcome.reason;
    },
  };
}

async function counterItem(keyId: string, month: string) {
  const read = await db.client.send(
    new GetItemCommand({
      TableName: db.countersTable,
      Key: { pk: { S: `${keyId}#${month}` } },
      ConsistentRead: true,
    }),
  );
  return read.Item;
}

describe("a revoked key's stop", () => {
  it('a container whose cache still accepts the key refuses its next request at once; counts kept', async () => {
    const clock = { now: at('2026-11-24T12:00:00Z') };
    const { record } = await issueKey(db, { tier: 'free', owner: `stop-${process.pid}-1` });
    const proxy = container(clock);
    expect(await proxy.request(record)).toBe('admitted');
    expect(await proxy.request(record)).toBe('admitted');

    clock.now = at('2026-11-24T12:00:05Z');
    const revoked = await actions.revoke(
      adminContext(db, () => clock.now),
      record.keyId,
    );
    const next = await proxy.request(record);
    clock.now = at('2026-11-24T12:00:40Z');
    const afterCache = await proxy.request(record);

    expect(revoked).toMatchObject({
      ok: true,
      effectiveBy: '2026-11-24T12:00:05.000Z',
      stoppedUntil: new Date(Date.parse('2026-11-24T12:00:05Z') + STOP_MS).toISOString(),
      cacheBy: '2026-11-24T12:00:35.000Z',
    });
    expect(next).toBe('stopped');
    expect(afterCache).toBe('refused by the key cache');
    const item = await counterItem(record.keyId, '2026-11');
    expect(item?.month_count).toEqual({ N: '2' });
    expect(item?.stopped_until).toEqual({ N: String(Date.parse('2026-11-24T12:00:05Z') + STOP_MS) });
  });

  it("runs into next month's counter item when it crosses the month's end, and ends by itself", async () => {
    const clock = { now: at('2026-11-30T23:30:00Z') };
    const { record } = await issueKey(db, { tier: 'free' });
    const proxy = container(clock);
    expect(await proxy.request(record)).toBe('admitted');

    await actions.revoke(
      adminContext(db, () => clock.now),
      record.keyId,
    );
    clock.now = at('2026-12-01T00:00:10Z');
    const nextMonth = await new DynamoQuotaMeter({ transport: db.transport, table: db.countersTable }).meter(
      record,
      clock.now,
    );
    const ended = await new DynamoQuotaMeter({ transport: db.transport, table: db.countersTable }).meter(
      record,
      new Date(Date.parse('2026-11-30T23:30:00Z') + STOP_MS),
    );

    expect((await counterItem(record.keyId, '2026-11'))?.stopped_until).toBeDefined();
    expect((await counterItem(record.keyId, '2026-12'))?.expires_at).toBeDefined();
    expect(nextMonth).toEqual({ ok: false, reason: 'stopped' });
    expect(ended.ok).toBe(true);
  });

  it('a known key registered again (npm start seeding CATALOGUE_DEV_KEYS) is accepted again at once', async () => {
    const clock = { now: at('2026-11-24T15:00:00Z') };
    const key = `pk_live_${'R'.repeat(21)}${process.pid % 10}`;
    const record = await actions.register(new AdminTables(db), key, {
      tier: 'free',
      limits: FREE_TIER_LIMITS,
      now: clock.now,
    });
    const proxy = container(clock);
    expect(await proxy.request(record)).toBe('admitted');
    await actions.revoke(
      adminContext(db, () => clock.now),
      record.keyId,
    );
    const stopped = await proxy.request(record);

    const again = await actions.register(new AdminTables(db), key, {
      tier: 'free',
      limits: FREE_TIER_LIMITS,
      now: clock.now,
    });

    expect(stopped).toBe('stopped');
    expect(again).toMatchObject({ keyId: record.keyId, status: 'active' });
    expect(await proxy.request(again)).toBe('admitted');
  });

  it('an enable lifts it at once; a later stop is never brought forward by an earlier one', async () => {
    const clock = { now: at('2026-11-24T13:00:00Z') };
    const { record } = await issueKey(db, { tier: 'partner' });
    const ctx = adminContext(db, () => clock.now);
    const proxy = container(clock);
    expect(await proxy.request(record)).toBe('admitted');

    await actions.revoke(ctx, record.keyId);
    const stopped = await proxy.request(record);
    await actions.enable(ctx, record.keyId);
    const lifted = await proxy.request(record);
    const tables = new AdminTables(db);
    const later = await stopKey(tables, record.keyId, at('2026-11-24T14:00:00Z'));
    await stopKey(tables, record.keyId, at('2026-11-24T13:30:00Z'));

    expect(stopped).toBe('stopped');
    expect(lifted).toBe('admitted');
    expect((await counterItem(record.keyId, '2026-11'))?.stopped_until).toEqual({
      N: String(Date.parse(later)),
    });
  });
});
