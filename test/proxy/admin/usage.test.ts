/**
 * Usage and last use, read from the counters the meter writes (proxy/admin/usage.ts), against dynalite: no
 * write of its own per request, this month's counter item first, last month's when this month has none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminOptions, issueKey } from '../../../proxy/admin/keys.js';
import { lastUsed, usage } from '../../../proxy/admin/usage.js';
import { DynamoQuotaMeter } from '../../../proxy/quota/dynamo.js';
import { at, countCalls, type DynamoFixture, dynamoFixture } from '../../helpers/dynamo.js';

let db: DynamoFixture;
let admin: AdminOptions;
let meter: DynamoQuotaMeter;

beforeAll(async () => {
  db = await dynamoFixture();
  admin = { client: db.client, keysTable: db.keysTable, countersTable: db.countersTable };
  meter = new DynamoQuotaMeter({ transport: db.transport, table: db.countersTable });
});
afterAll(async () => {
  await db?.dispose();
});

describe('lastUsed', () => {
  it("is the minute of the last counted request: this month's, else last month's, else none", async () => {
    const [thisMonth, lastMonth, never] = await Promise.all(
      [1, 2, 3].map(async () => (await issueKey(admin, { tier: 'free' })).record),
    );
    await meter.meter(thisMonth!, at('2026-11-02T08:00:10Z'));
    await meter.meter(thisMonth!, at('2026-11-24T09:05:31Z'));
    await meter.meter(lastMonth!, at('2026-10-31T23:59:59Z'));
    await meter.meter(never!, at('2026-09-30T12:00:00Z')); // two months ago: past what is read

    const used = await lastUsed(
      admin,
      [thisMonth!.keyId, lastMonth!.keyId, never!.keyId],
      at('2026-11-24T15:00:00Z'),
    );

    expect(used).toEqual({
      since: '2026-10-01T00:00:00Z',
      lastUsed: new Map([
        [thisMonth!.keyId, '2026-11-24T09:05:00Z'],
        [lastMonth!.keyId, '2026-10-31T23:59:00Z'],
      ]),
    });
  });

  it('reads many keys in batches of at most 100 items (two per key)', async () => {
    const keyIds = Array.from({ length: 120 }, (_, i) => `key_batch${String(i).padStart(5, '0')}`);
    const calls = countCalls(db.client);

    const used = await lastUsed(admin, keyIds, at('2026-01-15T00:00:00Z'));

    expect(used.lastUsed.size).toBe(0);
    expect(used.since).toBe('2025-12-01T00:00:00Z');
    expect(calls.calls).toEqual(['BatchGetItem', 'BatchGetItem', 'BatchGetItem']);
  });
});

describe('usage', () => {
  it("counts this month and minute, and carries the last use, even when it was last month's", async () => {
    const { record } = await issueKey(admin, { tier: 'free' });
    await meter.meter(record, at('2026-10-20T10:00:00Z'));

    const now = at('2026-11-03T00:00:00Z');
    const before = await usage(admin, record.keyId, now);
    await meter.meter(record, now);
    const after = await usage(admin, record.keyId, now);

    expect(before).toMatchObject({
      ok: true,
      usage: { monthCount: 0, minuteCount: 0, lastUsed: '2026-10-20T10:00:00Z' },
    });
    expect(after).toMatchObject({
      ok: true,
      usage: { monthCount: 1, minuteCount: 1, lastUsed: '2026-11-03T00:00:00Z' },
    });
    expect(await usage(admin, 'key_nosuchkey')).toEqual({ ok: false, reason: 'not-found' });
  });
});
