/**
 * Usage and last use, read from the counters the meter writes (admin/usage.ts), against dynalite: no write of
 * its own per request; per-day counts of this and last month equal the requests the request path's meter
 * counted, across day and month boundaries (clocks injected); counts from before per-day counts existed shown
 * as unattributed.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminTables } from '../../admin/dynamo.js';
import { lastUsed, readUsage } from '../../admin/usage.js';
import { DynamoQuotaMeter } from '../../proxy/quota/dynamo.js';
import { type AdminOptions, issueKey } from '../helpers/admin.js';
import { at, countCalls, type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';

let db: DynamoFixture;
let admin: AdminOptions;
let tables: AdminTables;
let meter: DynamoQuotaMeter;

beforeAll(async () => {
  db = await dynamoFixture();
  admin = { dynamo: db.dynamo, keysTable: db.keysTable, countersTable: db.countersTable };
  tables = new AdminTables(admin);
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
      tables,
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
    const calls = countCalls(db.dynamo);

    const used = await lastUsed(tables, keyIds, at('2026-01-15T00:00:00Z'));

    expect(used.lastUsed.size).toBe(0);
    expect(used.since).toBe('2025-12-01T00:00:00Z');
    expect(calls.calls).toEqual(['BatchGetItem', 'BatchGetItem', 'BatchGetItem']);
  });
});

describe('readUsage', () => {
  it('answers per-day counts equal to the requests counted across day and month boundaries', async () => {
    // Prepare: requests at injected clocks, metered as the request path meters them.
    const { record } = await issueKey(admin, { tier: 'partner', limits: { minute: 1000, month: 100_000 } });
    const plan: [string, number][] = [
      ['2026-10-01T00:00:00.000Z', 2],
      ['2026-10-31T23:59:59.900Z', 6],
      ['2026-11-01T00:00:00.100Z', 4],
      ['2026-11-02T23:59:59.999Z', 3],
      ['2026-11-03T00:00:00.000Z', 5],
    ];
    for (const [iso, times] of plan) for (let i = 0; i < times; i++) await meter.meter(record, at(iso));
    const calls = countCalls(db.dynamo);

    // Act
    const usage = await readUsage(tables, record, at('2026-11-03T00:00:30Z'));

    // Assess: one read, and the counts per day as made.
    expect(calls.calls).toEqual(['BatchGetItem']);
    const nonZero = (days: { date: string; count: number }[]) => days.filter((day) => day.count > 0);
    expect(usage.previous).toMatchObject({ month: '2026-10', count: 8, unattributed: 0 });
    expect(usage.previous.days).toHaveLength(31);
    expect(nonZero(usage.previous.days)).toEqual([
      { date: '2026-10-01', count: 2 },
      { date: '2026-10-31', count: 6 },
    ]);
    expect(usage.current).toMatchObject({ month: '2026-11', count: 12, unattributed: 0 });
    expect(usage.current.days).toEqual([
      { date: '2026-11-01', count: 4 },
      { date: '2026-11-02', count: 3 },
      { date: '2026-11-03', count: 5 },
    ]);
    expect(usage).toMatchObject({ minuteCount: 5, lastUsed: '2026-11-03T00:00:00Z' });
  });

  it('shows counts from before per-day counts existed as unattributed, and a month without use as zeros', async () => {
    const { record } = await issueKey(admin, { tier: 'free' });
    await db.client.send(
      new PutItemCommand({
        TableName: db.countersTable,
        Item: {
          pk: { S: `${record.keyId}#2026-11` },
          month_count: { N: '40' },
          minute: { N: String(Date.parse('2026-11-10T08:00:00Z') / 1000) },
          minute_count: { N: '1' },
        },
      }),
    );
    await meter.meter(record, at('2026-11-12T10:00:00Z'));

    const usage = await readUsage(tables, record, at('2026-11-12T10:00:05Z'));

    expect(usage.current).toMatchObject({ count: 41, unattributed: 40 });
    expect(usage.current.days.at(-1)).toEqual({ date: '2026-11-12', count: 1 });
    expect(usage.previous).toMatchObject({ month: '2026-10', count: 0, unattributed: 0 });
    expect(usage.previous.days.every((day) => day.count === 0)).toBe(true);
  });
});
