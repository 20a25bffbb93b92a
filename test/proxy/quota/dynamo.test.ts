import { GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { dynaliteItemSize } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoQuotaMeter, RECENT_WRITES, TOKEN_SLOTS } from '../../../proxy/quota/dynamo.js';
import type { CounterTransport, Item, UpdateOutcome } from '../../../proxy/quota/dynamo-transport.js';
import type { MeterOutcome } from '../../../proxy/quota/interface.js';
import type { KeyRecord } from '../../../tables/keys.js';
import {
  at,
  countTransportCalls,
  type DynamoFixture,
  dynamoFixture,
  keyRecord,
  leanTransport,
} from '../../helpers/dynamo.js';

/** DynamoDB's item size rules, as dynalite implements them (its own WCU arithmetic uses it). */
const itemSize = (item: Item) => dynaliteItemSize(item);

let db: DynamoFixture;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  db = await dynamoFixture();
});
afterAll(async () => {
  for (const close of closers) await close();
  await db?.dispose();
});

/** A new request-path client (lean signed requests), as each proxy container has its own. */
function newTransport(): CounterTransport {
  const transport = leanTransport(db.server.endpoint);
  closers.push(() => transport.close());
  return transport;
}

async function counterItem(key: KeyRecord, month: string) {
  const response = await db.client.send(
    new GetItemCommand({
      TableName: db.countersTable,
      Key: { pk: { S: `${key.keyId}#${month}` } },
      ConsistentRead: true,
    }),
  );
  return response.Item;
}

const admittedCount = (results: MeterOutcome[]) => results.filter((r) => r.ok).length;

/** What AWS does and dynalite does not: return the item that failed the condition (ALL_OLD). */
function returningFailedItems(transport: CounterTransport, reader: CounterTransport): CounterTransport {
  return {
    getItem: (input, signal) => transport.getItem(input, signal),
    async updateItem(input, signal): Promise<UpdateOutcome> {
      const outcome = await transport.updateItem(input, signal);
      if (outcome.ok || outcome.item) return outcome;
      const item: Item | undefined = await reader.getItem({
        TableName: input.TableName,
        Key: input.Key,
        ConsistentRead: true,
      });
      return { ok: false, item };
    },
  };
}

describe('the counter item at its largest (one write unit)', () => {
  it('stays under 1 KB with all 31 day counts, every token place and the other counters at their largest', async () => {
    // Prepare: a key metered once on each day of January (31 days), as the request path meters it.
    const key = keyRecord({ tier: 'partner', limits: { minute: 60_000, month: 1_000_000_000 } });
    const meter = new DynamoQuotaMeter({ transport: newTransport(), table: db.countersTable });
    for (let day = 1; day <= 31; day++) {
      await meter.meter(key, at(`2027-01-${String(day).padStart(2, '0')}T12:00:00Z`));
    }
    const metered = (await counterItem(key, '2027-01'))!;
    // The same item with every value at its largest: a day cannot count more than one item takes in a day
    // (DynamoDB writes one item at most 1,000 times a second: 86,400,000 a day, 8 digits); the month, the
    // minute, the TTL at 10 digits; every token place filled (the ring of recent writes and every slot, 8
    // characters each).
    const largest: Item = { ...metered };
    for (let day = 1; day <= 31; day++) largest[`d${String(day).padStart(2, '0')}`] = { N: '86399999' };
    for (const name of ['month_count', 'minute', 'minute_count', 'expires_at'])
      largest[name] = { N: '9999999999' };
    for (let i = 0; i < RECENT_WRITES; i++) largest[`w${i}`] = { S: 'x'.repeat(8) };
    for (let i = 0; i < TOKEN_SLOTS; i++) largest[`s${i}`] = { S: 'x'.repeat(8) };
    // A revoked key's stop (Unix milliseconds, 13 digits), which key administration may write into the item.
    largest.stopped_until = { N: '9999999999999' };
    const days = Object.fromEntries(Object.entries(largest).filter(([name]) => /^d\d\d$/.test(name)));
    const rest = Object.fromEntries(Object.entries(largest).filter(([name]) => !/^d\d\d$/.test(name)));

    // Act: sizes by DynamoDB's rules (dynalite's implementation of them), and the write units one update of
    // the largest item consumes.
    await db.client.send(new PutItemCommand({ TableName: db.countersTable, Item: largest }));
    const update = await db.client.send(
      new UpdateItemCommand({
        TableName: db.countersTable,
        Key: { pk: largest.pk! },
        UpdateExpression: 'SET d31 = d31 + :one',
        ExpressionAttributeValues: { ':one': { N: '1' } },
        ReturnConsumedCapacity: 'TOTAL',
      }),
    );

    // Assess
    const sizes = {
      metered: itemSize(metered),
      largest: itemSize(largest),
      days: itemSize(days),
      rest: itemSize(rest),
    };
    console.info(`counter item sizes, bytes: ${JSON.stringify(sizes)}`);
    expect(Object.keys(days)).toHaveLength(31);
    expect(sizes.days).toBeLessThanOrEqual(300); // contract 4: the day counts take at most 300 bytes
    expect(sizes.largest).toBeLessThan(1024);
    expect(update.ConsumedCapacity?.CapacityUnits).toBe(1);
  });
});

describe("DynamoQuotaMeter over the request path's client", () => {
  let meter: DynamoQuotaMeter;
  beforeAll(() => {
    meter = new DynamoQuotaMeter({ transport: newTransport(), table: db.countersTable });
  });

  async function meterTimes(key: KeyRecord, now: Date, times: number): Promise<MeterOutcome[]> {
    const results: MeterOutcome[] = [];
    for (let i = 0; i < times; i++) results.push(await meter.meter(key, now));
    return results;
  }

  describe('exact under concurrency', () => {
    it('admits exactly 60 of 200 concurrent requests from one free key inside one minute', async () => {
      // Prepare
      const key = keyRecord();
      const now = at('2026-11-21T10:00:05.000Z');

      // Act
      const results = await Promise.all(Array.from({ length: 200 }, () => meter.meter(key, now)));

      // Assess
      const admitted = results.filter((r) => r.ok);
      const refused = results.filter((r) => !r.ok);
      console.info(
        `concurrency: 200 concurrent meter() calls, ${admitted.length} admitted, ${refused.length} refused`,
      );
      expect(admitted).toHaveLength(60);
      expect(refused.every((r) => !r.ok && r.reason === 'minute')).toBe(true);
      // Every admitted request saw a distinct remaining count: 59 … 0.
      expect(new Set(admitted.map((r) => r.remainingMinute)).size).toBe(60);
      const item = await counterItem(key, '2026-11');
      expect(item?.minute_count?.N).toBe('60');
      expect(item?.month_count?.N).toBe('60');
    });

    it('keeps each window exact when requests straddle a minute boundary', async () => {
      const key = keyRecord();
      const before = at('2026-11-21T10:00:59.900Z');
      const after = at('2026-11-21T10:01:00.100Z');
      const clocks = Array.from({ length: 160 }, (_, i) => (i % 2 === 0 ? before : after));

      const results = await Promise.all(clocks.map((now) => meter.meter(key, now)));

      const admitted = results.filter((r) => r.ok);
      const perWindow = new Map<number, number>();
      for (const r of admitted) perWindow.set(r.reset, (perWindow.get(r.reset) ?? 0) + 1);
      for (const count of perWindow.values()) expect(count).toBeLessThanOrEqual(60);
      const item = await counterItem(key, '2026-11');
      expect(Number(item?.month_count?.N)).toBe(admitted.length);
    });

    it('holds the monthly limit across minutes, also under concurrency', async () => {
      const key = keyRecord({ tier: 'partner', limits: { minute: 60, month: 100 } });

      const first = await Promise.all(
        Array.from({ length: 70 }, () => meter.meter(key, at('2026-11-21T10:00:10Z'))),
      );
      const second = await Promise.all(
        Array.from({ length: 70 }, () => meter.meter(key, at('2026-11-21T10:01:10Z'))),
      );
      const third = await meter.meter(key, at('2026-11-21T10:02:10Z'));

      expect(admittedCount(first)).toBe(60);
      expect(admittedCount(second)).toBe(40);
      expect(third).toMatchObject({
        ok: false,
        reason: 'month',
        remainingMonth: 0,
        remainingMinute: 0,
      });
      // 2026-12-01T00:00:00Z minus 2026-11-21T10:02:10Z
      expect(third.ok === false && third.reason !== 'stopped' && third.retryAfterSeconds).toBe(
        9 * 86400 + 13 * 3600 + 57 * 60 + 50,
      );
    });
  });

  describe('windows and headers', () => {
    it('refuses the 61st sequential request with the seconds left in the minute', async () => {
      const key = keyRecord();
      const results = await meterTimes(key, at('2026-11-21T10:00:00.000Z'), 60);

      const refused = await meter.meter(key, at('2026-11-21T10:00:45.300Z'));

      expect(results.map((r) => r.ok && r.remainingMinute)).toEqual(
        Array.from({ length: 60 }, (_, i) => 59 - i),
      );
      expect(results.at(-1)).toMatchObject({ remainingMonth: 4940, limitMonth: 5000, limitMinute: 60 });
      expect(refused).toEqual({
        ok: false,
        reason: 'minute',
        retryAfterSeconds: 15,
        limitMonth: 5000,
        remainingMonth: 4940,
        limitMinute: 60,
        remainingMinute: 0,
        reset: Date.parse('2026-11-21T10:00:00Z') / 1000,
      });
    });

    it('opens a fresh minute window when the minute rolls over', async () => {
      const key = keyRecord();
      await meterTimes(key, at('2026-11-21T10:00:30Z'), 61);

      const next = await meter.meter(key, at('2026-11-21T10:01:00.000Z'));

      expect(next).toEqual({
        ok: true,
        countedIn: Date.parse('2026-11-21T10:01:00Z') / 1000,
        limitMonth: 5000,
        remainingMonth: 5000 - 61,
        limitMinute: 60,
        remainingMinute: 59,
        reset: Date.parse('2026-11-21T10:01:00Z') / 1000,
      });
    });

    it('starts a new month count when the calendar month rolls over (UTC)', async () => {
      const key = keyRecord({ tier: 'partner', limits: { minute: 10, month: 5 } });
      const november = await meterTimes(key, at('2026-11-30T23:59:58Z'), 6);

      const december = await meter.meter(key, at('2026-12-01T00:00:00.500Z'));

      expect(admittedCount(november)).toBe(5);
      expect(november[5]).toMatchObject({ ok: false, reason: 'month', retryAfterSeconds: 2 });
      expect(december).toMatchObject({ ok: true, remainingMonth: 4, remainingMinute: 4 });
      expect((await counterItem(key, '2026-12'))?.month_count?.N).toBe('1');
      // Old months expire by TTL 35 days after the month ends.
      const expires = Number((await counterItem(key, '2026-11'))?.expires_at?.N);
      expect(expires).toBe(Date.parse('2026-12-01T00:00:00Z') / 1000 + 35 * 86400);
    });

    it('counts a request whose clock lags another instance into the newer window', async () => {
      const key = keyRecord();
      await meter.meter(key, at('2026-11-21T10:01:00.010Z'));

      const late = await meter.meter(key, at('2026-11-21T10:00:59.990Z'));

      expect(late).toMatchObject({
        ok: true,
        remainingMinute: 58,
        reset: Date.parse('2026-11-21T10:01Z') / 1000,
      });
    });

    it('uses the limits of the key record (partner)', async () => {
      const key = keyRecord({ tier: 'partner', limits: { minute: 120, month: 1_000_000 } });

      const results = await Promise.all(
        Array.from({ length: 130 }, () => meter.meter(key, at('2026-11-21T10:00:00Z'))),
      );

      expect(admittedCount(results)).toBe(120);
      expect(results.find((r) => r.ok)).toMatchObject({ limitMinute: 120, limitMonth: 1_000_000 });
    });

    it('counts each day in the same write: per-day counts equal the requests made across a day boundary', async () => {
      // Prepare: a key, and a meter whose calls are counted.
      const key = keyRecord({ tier: 'partner', limits: { minute: 100, month: 10_000 } });
      const counted = countTransportCalls(newTransport());
      const countingMeter = new DynamoQuotaMeter({ transport: counted.transport, table: db.countersTable });
      const plan = [
        ['2026-11-04T23:59:58.000Z', 7],
        ['2026-11-04T23:59:59.999Z', 5],
        ['2026-11-05T00:00:00.000Z', 9],
        ['2026-11-05T13:30:00.000Z', 4],
        ['2026-11-30T23:59:59.500Z', 2],
      ] as const;

      // Act: the requests, each at its clock; then one more in an open window, its calls counted alone.
      for (const [iso, times] of plan) await meterTimes(key, at(iso), times);
      for (const [iso, times] of plan) {
        for (let i = 0; i < times; i++) await countingMeter.meter(key, at(iso));
      }
      counted.calls.splice(0);
      const common = await countingMeter.meter(key, at('2026-11-30T23:59:59.600Z'));

      // Assess: d04 = 2 × 12, d05 = 2 × 13, d30 = 2 × 2 + 1; they add up to month_count; one UpdateItem.
      const item = await counterItem(key, '2026-11');
      const days = Object.fromEntries(
        Object.entries(item ?? {})
          .filter(([name]) => /^d\d\d$/.test(name))
          .map(([name, value]) => [name, Number(value.N)]),
      );
      expect(common.ok).toBe(true);
      expect(counted.calls).toEqual(['UpdateItem']);
      expect(days).toEqual({ d04: 24, d05: 26, d30: 5 });
      expect(Number(item?.month_count?.N)).toBe(24 + 26 + 5);
    });

    it('refuses without a call when a limit is zero', async () => {
      const key = keyRecord({ tier: 'partner', limits: { minute: 0, month: 10 } });
      expect(await meter.meter(key, at('2026-11-21T10:00:00Z'))).toMatchObject({
        ok: false,
        reason: 'minute',
      });
    });
  });

  describe('refund: an admitted count taken back (its read failed while it was metered)', () => {
    /** The item's counts: month, minute (with its window) and the day's. */
    async function counts(key: KeyRecord, day: string) {
      const item = await counterItem(key, '2026-11');
      return {
        month: Number(item?.month_count?.N),
        minute: Number(item?.minute_count?.N),
        window: Number(item?.minute?.N),
        day: Number(item?.[day]?.N),
      };
    }

    it("takes back the month's, the minute's and the day's counts, in one write", async () => {
      const key = keyRecord();
      const counted = countTransportCalls(newTransport());
      const refunding = new DynamoQuotaMeter({ transport: counted.transport, table: db.countersTable });
      const now = at('2026-11-21T10:00:30Z');
      await meterTimes(key, now, 3);
      const admitted = await refunding.meter(key, now);
      if (!admitted.ok) throw new Error('not admitted');
      counted.calls.splice(0);
      await refunding.refund(key, now, admitted);
      expect(counted.calls).toEqual(['UpdateItem']);
      expect(await counts(key, 'd21')).toEqual({ month: 3, minute: 3, window: admitted.countedIn, day: 3 });
      // The room it gave back is there: 60 more this minute, not 59.
      expect(admittedCount(await meterTimes(key, now, 60))).toBe(57);
    });

    it('after a later window opened: the month and the day only, never another minute', async () => {
      const key = keyRecord();
      const admitted = await meter.meter(key, at('2026-11-21T10:00:59Z'));
      if (!admitted.ok) throw new Error('not admitted');
      await meterTimes(key, at('2026-11-21T10:01:00Z'), 2);
      await meter.refund(key, at('2026-11-21T10:00:59Z'), admitted);
      const window = Date.parse('2026-11-21T10:01:00Z') / 1000;
      expect(await counts(key, 'd21')).toEqual({ month: 2, minute: 2, window, day: 2 });
    });

    it('never below zero: a refund with no count to take back is refused, the item unchanged', async () => {
      const key = keyRecord();
      const now = at('2026-11-21T10:00:00Z');
      const admitted = await meter.meter(key, now);
      if (!admitted.ok) throw new Error('not admitted');
      await meter.refund(key, now, admitted);
      await expect(meter.refund(key, now, admitted)).rejects.toMatchObject({
        name: 'DependencyError',
        message: 'quota refund found no count to take back',
      });
      expect(await counts(key, 'd21')).toEqual({ month: 0, minute: 0, window: admitted.countedIn, day: 0 });
    });
  });

  describe('DynamoDB calls per meter()', () => {
    async function callsPerCase(transport: CounterTransport) {
      const counted = countTransportCalls(transport);
      const countingMeter = new DynamoQuotaMeter({ transport: counted.transport, table: db.countersTable });
      const key = keyRecord({ tier: 'partner', limits: { minute: 2, month: 1000 } });
      const measure = async (iso: string) => {
        counted.calls.splice(0);
        const result = await countingMeter.meter(key, at(iso));
        return { ok: result.ok, calls: [...counted.calls] };
      };
      return {
        newItem: await measure('2026-11-21T10:00:00Z'),
        common: await measure('2026-11-21T10:00:01Z'),
        refused: await measure('2026-11-21T10:00:02Z'),
        rollover: await measure('2026-11-21T10:01:00Z'),
      };
    }

    it('makes one write in the common case, two on a new window, three calls to refuse (dynalite)', async () => {
      const calls = await callsPerCase(newTransport());
      console.info(`calls per meter() against dynalite:`, JSON.stringify(calls));
      expect(calls).toEqual({
        newItem: { ok: true, calls: ['UpdateItem', 'UpdateItem'] },
        common: { ok: true, calls: ['UpdateItem'] },
        refused: { ok: false, calls: ['UpdateItem', 'UpdateItem', 'GetItem'] },
        rollover: { ok: true, calls: ['UpdateItem', 'UpdateItem'] },
      });
    });

    it('refuses with a single write where the server returns the failed item (AWS)', async () => {
      const calls = await callsPerCase(returningFailedItems(newTransport(), newTransport()));
      console.info(`calls per meter() with ALL_OLD on condition failure:`, JSON.stringify(calls));
      expect(calls).toEqual({
        newItem: { ok: true, calls: ['UpdateItem', 'UpdateItem'] },
        common: { ok: true, calls: ['UpdateItem'] },
        refused: { ok: false, calls: ['UpdateItem'] },
        rollover: { ok: true, calls: ['UpdateItem', 'UpdateItem'] },
      });
    });
  });
});
