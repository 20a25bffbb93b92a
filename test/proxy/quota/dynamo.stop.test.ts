/**
 * A revoked key's stop in its counter item (tables/counters.ts `stopped_until`), as the meter's one conditional
 * write reads it: while the stop has not passed no request of the key is admitted (`stopped`, answered
 * `401 invalid_key`) and nothing is counted; once it has passed the key's requests are metered as before; an
 * item key administration made only to hold a stop is opened like a new one. Against dynalite, and with the
 * failed item returned as AWS returns it (one write to refuse).
 */
import { GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoQuotaMeter } from '../../../proxy/quota/dynamo.js';
import type { CounterTransport, Item, UpdateOutcome } from '../../../proxy/quota/dynamo-transport.js';
import type { KeyRecord } from '../../../tables/keys.js';
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

function newTransport(): CounterTransport {
  const transport = leanTransport(db.server.endpoint);
  closers.push(() => transport.close());
  return transport;
}

/** What AWS does and dynalite does not: return the item that failed the condition (ALL_OLD). */
function returningFailedItems(transport: CounterTransport): CounterTransport {
  return {
    getItem: (input, signal) => transport.getItem(input, signal),
    async updateItem(input, signal): Promise<UpdateOutcome> {
      const outcome = await transport.updateItem(input, signal);
      if (outcome.ok || outcome.item) return outcome;
      const item = await transport.getItem({
        TableName: input.TableName,
        Key: input.Key,
        ConsistentRead: true,
      });
      return { ok: false, item };
    },
  };
}

/** Stop the key's counters of `month` until `until`, as key administration's revoke does (an UpdateItem). */
async function stop(key: KeyRecord, month: string, until: Date) {
  await db.client.send(
    new UpdateItemCommand({
      TableName: db.countersTable,
      Key: { pk: { S: `${key.keyId}#${month}` } },
      UpdateExpression: 'SET stopped_until = :until',
      ExpressionAttributeValues: { ':until': { N: String(until.getTime()) } },
    }),
  );
}

async function item(key: KeyRecord, month: string): Promise<Item | undefined> {
  const read = await db.client.send(
    new GetItemCommand({
      TableName: db.countersTable,
      Key: { pk: { S: `${key.keyId}#${month}` } },
      ConsistentRead: true,
    }),
  );
  return read.Item;
}

describe.each([
  { server: 'dynalite', wrap: (transport: CounterTransport) => transport },
  { server: 'AWS (the failed item returned)', wrap: returningFailedItems },
])('a stopped key, $server', ({ wrap }) => {
  it('is refused (stopped) while its stop lasts, nothing counted; metered again once it has passed', async () => {
    // Prepare: a key counted twice this minute, then stopped until 10:30.
    const meter = new DynamoQuotaMeter({ transport: wrap(newTransport()), table: db.countersTable });
    const key = keyRecord();
    expect((await meter.meter(key, at('2026-11-21T10:00:00Z'))).ok).toBe(true);
    expect((await meter.meter(key, at('2026-11-21T10:00:01Z'))).ok).toBe(true);
    await stop(key, '2026-11', at('2026-11-21T10:30:00Z'));

    // Act: in the same minute, in a new minute, to the millisecond before and at the stop's end.
    const sameMinute = await meter.meter(key, at('2026-11-21T10:00:02Z'));
    const newMinute = await meter.meter(key, at('2026-11-21T10:05:00Z'));
    const lastMillisecond = await meter.meter(key, at('2026-11-21T10:29:59.999Z'));
    const counted = await item(key, '2026-11');
    const after = await meter.meter(key, at('2026-11-21T10:30:00Z'));

    // Assess
    for (const refused of [sameMinute, newMinute, lastMillisecond])
      expect(refused).toEqual({ ok: false, reason: 'stopped' });
    expect(counted?.month_count).toEqual({ N: '2' });
    expect(counted?.minute_count).toEqual({ N: '2' });
    expect(after).toMatchObject({ ok: true, remainingMonth: 4997, remainingMinute: 59 });
  });

  it('an item made only to hold a stop (next month, before any request): refused, then opened like a new one', async () => {
    const meter = new DynamoQuotaMeter({ transport: wrap(newTransport()), table: db.countersTable });
    const key = keyRecord();
    await stop(key, '2026-12', at('2026-12-01T00:20:00Z'));

    const refused = await meter.meter(key, at('2026-12-01T00:00:05Z'));
    const admitted = await meter.meter(key, at('2026-12-01T00:20:00Z'));

    expect(refused).toEqual({ ok: false, reason: 'stopped' });
    expect(admitted).toMatchObject({ ok: true, remainingMonth: 4999, remainingMinute: 59 });
    expect((await item(key, '2026-12'))?.month_count).toEqual({ N: '1' });
  });

  it('a stop that cannot be read stops too (fail closed)', async () => {
    const meter = new DynamoQuotaMeter({ transport: wrap(newTransport()), table: db.countersTable });
    const key = keyRecord();
    await db.client.send(
      new PutItemCommand({
        TableName: db.countersTable,
        Item: { pk: { S: `${key.keyId}#2026-11` }, stopped_until: { S: 'soon' } },
      }),
    );

    expect(await meter.meter(key, at('2026-11-21T10:00:00Z'))).toEqual({ ok: false, reason: 'stopped' });
  });
});

describe('what a stopped key costs', () => {
  async function refusalCalls(transport: CounterTransport) {
    const counted = countTransportCalls(transport);
    const meter = new DynamoQuotaMeter({ transport: counted.transport, table: db.countersTable });
    const key = keyRecord();
    await meter.meter(key, at('2026-11-21T10:00:00Z'));
    await stop(key, '2026-11', at('2026-11-21T11:00:00Z'));
    counted.calls.splice(0);
    const outcome = await meter.meter(key, at('2026-11-21T10:00:01Z'));
    return { ok: outcome.ok, calls: [...counted.calls] };
  }

  it('the refusal is the one write a request makes on AWS (the item comes back with it), three calls on dynalite', async () => {
    expect(await refusalCalls(returningFailedItems(newTransport()))).toEqual({
      ok: false,
      calls: ['UpdateItem'],
    });
    expect(await refusalCalls(newTransport())).toEqual({
      ok: false,
      calls: ['UpdateItem', 'UpdateItem', 'GetItem'],
    });
  });
});
