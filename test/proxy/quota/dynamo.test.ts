import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KeyRecord } from '../../../proxy/keys/interface.js';
import { DynamoQuotaMeter } from '../../../proxy/quota/dynamo.js';
import type { CounterTransport, Item, UpdateOutcome } from '../../../proxy/quota/dynamo-transport.js';
import type { MeterOutcome } from '../../../proxy/quota/interface.js';
import {
  at,
  countTransportCalls,
  type DynamoFixture,
  dynamoFixture,
  keyRecord,
  leanTransport,
} from '../../helpers/dynamo.js';

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
      expect(third.ok === false && third.retryAfterSeconds).toBe(9 * 86400 + 13 * 3600 + 57 * 60 + 50);
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

    it('refuses without a call when a limit is zero', async () => {
      const key = keyRecord({ tier: 'partner', limits: { minute: 0, month: 10 } });
      expect(await meter.meter(key, at('2026-11-21T10:00:00Z'))).toMatchObject({
        ok: false,
        reason: 'minute',
      });
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
