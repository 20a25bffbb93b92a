/**
 * Exact metering when the network loses the meter's answer: dynalite behind a fault-injecting proxy that lets
 * the UpdateItem land and then resets the connection (or answers 500), over both transports. A request is
 * counted at most once whatever happens, a request admitted is always counted, and a lost answer is
 * recognised by the meter's own token in the item instead of being sent again.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialProvider, dynamoClient } from '../../../aws/sdk.js';
import { DynamoQuotaMeter } from '../../../proxy/quota/dynamo.js';
import { LeanCounterTransport } from '../../../proxy/quota/dynamo-lean.js';
import { type CounterTransport, SdkCounterTransport } from '../../../proxy/quota/dynamo-transport.js';
import { DependencyError } from '../../../store/errors.js';
import type { KeyRecord } from '../../../tables/keys.js';
import { type DynamoFixture, dynamoFixture, keyRecord } from '../../helpers/dynamo.js';
import { type FaultProxy, startFaultProxy } from '../../helpers/fault-proxy.js';

let db: DynamoFixture;
let faults: FaultProxy;
const closers: (() => unknown)[] = [];

beforeAll(async () => {
  db = await dynamoFixture();
  faults = await startFaultProxy({ targetPort: db.server.port });
});
afterAll(async () => {
  for (const close of closers) await close();
  await faults?.close();
  await db?.dispose();
});

const TRANSPORTS = {
  sdk: (): CounterTransport => {
    const client = dynamoClient({ endpoint: faults.endpoint });
    closers.push(() => client.destroy());
    return new SdkCounterTransport(client);
  },
  lean: (): CounterTransport => {
    const transport = new LeanCounterTransport({
      endpoint: faults.endpoint,
      region: 'us-east-1',
      credentials: credentialProvider(faults.endpoint),
    });
    closers.push(() => transport.close());
    return transport;
  },
};

const isUpdate = (target: string) => target.endsWith('.UpdateItem');
const isGet = (target: string) => target.endsWith('.GetItem');

async function counterItem(key: KeyRecord) {
  const month = new Date().toISOString().slice(0, 7);
  const response = await db.client.send(
    new GetItemCommand({
      TableName: db.countersTable,
      Key: { pk: { S: `${key.keyId}#${month}` } },
      ConsistentRead: true,
    }),
  );
  return response.Item;
}

/** The requests this test made: from the proxy's record, since `mark`. */
function since(mark: number) {
  const seen = faults.seen.slice(mark);
  return {
    updates: seen.filter((r) => isUpdate(r.target)),
    /** UpdateItems DynamoDB applied: answered 200 by the server, whatever the client got. */
    landed: seen.filter((r) => isUpdate(r.target) && r.status === 200).length,
    gets: seen.filter((r) => isGet(r.target)).length,
  };
}

describe.each(Object.keys(TRANSPORTS) as (keyof typeof TRANSPORTS)[])(
  'metering when the answer is lost (%s transport)',
  (name) => {
    it('a write that landed and lost its answer is recognised, not sent again: admitted, counted once', async () => {
      const meter = new DynamoQuotaMeter({ transport: TRANSPORTS[name](), table: db.countersTable });
      const key = keyRecord();
      expect((await meter.meter(key, new Date())).ok).toBe(true);
      const mark = faults.seen.length;
      faults.setRule(({ headers }) =>
        isUpdate(String(headers['x-amz-target'])) ? 'reset-after' : undefined,
      );
      try {
        const outcomes = [];
        for (let i = 0; i < 10; i++) outcomes.push(await meter.meter(key, new Date()));
        expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
        // Each request's headers still say what is left: its own count is in them.
        expect(outcomes.at(-1)).toMatchObject({ remainingMinute: 60 - 11 });
      } finally {
        faults.setRule(undefined);
      }
      const { updates, landed, gets } = since(mark);
      expect([updates.length, landed, gets]).toEqual([10, 10, 10]);
      expect((await counterItem(key))?.month_count?.N).toBe('11');
    });

    it('a 500 to a write that landed is not sent again: recognised, counted once', async () => {
      const meter = new DynamoQuotaMeter({ transport: TRANSPORTS[name](), table: db.countersTable });
      const key = keyRecord();
      // The window is open: the next write is one UpdateItem that passes its condition.
      expect((await meter.meter(key, new Date())).ok).toBe(true);
      const mark = faults.seen.length;
      faults.setRule(({ headers }) =>
        isUpdate(String(headers['x-amz-target']))
          ? {
              status: 500,
              body: '{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError"}',
              forward: true,
            }
          : undefined,
      );
      try {
        expect(await meter.meter(key, new Date())).toMatchObject({ ok: true, remainingMinute: 58 });
      } finally {
        faults.setRule(undefined);
      }
      expect(since(mark).updates).toHaveLength(1);
      expect((await counterItem(key))?.month_count?.N).toBe('2');
    });

    it('60 concurrent requests, every third answer lost: each counted at most once, every admitted one counted', async () => {
      const meter = new DynamoQuotaMeter({ transport: TRANSPORTS[name](), table: db.countersTable });
      const key = keyRecord({ tier: 'partner', limits: { minute: 10_000, month: 100_000 } });
      expect((await meter.meter(key, new Date())).ok).toBe(true);
      const mark = faults.seen.length;
      let updates = 0;
      faults.setRule(({ headers }) =>
        isUpdate(String(headers['x-amz-target'])) && ++updates % 3 === 0 ? 'reset-after' : undefined,
      );
      let outcomes: (Awaited<ReturnType<DynamoQuotaMeter['meter']>> | DependencyError)[];
      try {
        outcomes = await Promise.all(
          Array.from({ length: 60 }, () =>
            meter.meter(key, new Date()).catch((error: unknown) => {
              if (error instanceof DependencyError && error.dependency === 'quota') return error;
              throw error;
            }),
          ),
        );
      } finally {
        faults.setRule(undefined);
      }
      const admitted = outcomes.filter(
        (outcome) => !(outcome instanceof DependencyError) && outcome.ok,
      ).length;
      const refused = outcomes.filter((outcome) => outcome instanceof DependencyError).length;
      const counted = Number((await counterItem(key))?.month_count?.N) - 1;
      const { landed } = since(mark);
      console.log(
        `metering under resets (${name}): 60 sent, ${admitted} admitted, ${refused} refused (503), ` +
          `${counted} counted, ${landed} writes landed`,
      );
      expect(admitted + refused).toBe(60);
      // Nothing counted twice: every count is one landed write, and there is at most one per request.
      expect(counted).toBe(landed);
      expect(counted).toBeLessThanOrEqual(60);
      // Every admitted request counted; a refused one at most once (its write may have landed unseen).
      expect(counted).toBeGreaterThanOrEqual(admitted);
      expect(counted - admitted).toBeLessThanOrEqual(refused);
      // Most lost answers are recognised (their token is among the last writes).
      expect(admitted).toBeGreaterThan(40);
    });
  },
);

it('the counter item keeps the last 8 tokens, newest first, and stays under 1 KB: one WCU per write', async () => {
  const meter = new DynamoQuotaMeter({ client: db.client, table: db.countersTable });
  const key = keyRecord({ tier: 'partner', limits: { minute: 10_000, month: 100_000 } });
  for (let i = 0; i < 20; i++) await meter.meter(key, new Date());
  const before = (await counterItem(key))!;
  await meter.meter(key, new Date());
  const item = (await counterItem(key))!;
  // The ring shifts by one per write, newest first, each right side read from the item as it was.
  const ring = (of: typeof item) => Array.from({ length: 8 }, (_, i) => of[`w${i}`]?.S);
  expect(new Set(ring(item)).size).toBe(8);
  expect(ring(item).slice(1)).toEqual(ring(before).slice(0, 7));
  // DynamoDB's item size: attribute names plus values (strings by their UTF-8 bytes, numbers about one byte
  // per two digits plus one).
  let size = 0;
  for (const [attribute, value] of Object.entries(item)) {
    size += Buffer.byteLength(attribute);
    if (value.S !== undefined) size += Buffer.byteLength(value.S);
    if (value.N !== undefined) size += Math.ceil(value.N.replace(/^-/, '').length / 2) + 1;
  }
  console.log(`counter item: ${Object.keys(item).length} attributes, ${size} bytes`);
  expect(Object.keys(item).filter((attribute) => /^w\d+$/.test(attribute))).toHaveLength(8);
  expect(size).toBeLessThan(1024);
});
