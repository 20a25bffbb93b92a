/**
 * Exact metering when the network loses the meter's answer: dynalite behind a fault-injecting proxy that lets
 * the UpdateItem land and then loses its answer — a reset before any byte, a 500, a body cut mid-way (reset
 * or closed), a Content-Length shorter or longer than the body, no answer at all — through the request
 * path's one client (lean signed requests). A request is counted at most once whatever happens, a request
 * admitted is always counted, and a lost answer is recognised by the meter's own token in the item instead of
 * being sent again; a burst of one key with every third answer lost reports how many are recognised.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callWithDeadline, meteringDeadlineMs } from '../../../proxy/core/deadline.js';
import { DynamoQuotaMeter, RECENT_WRITES, TOKEN_SLOTS } from '../../../proxy/quota/dynamo.js';
import type { MeterOutcome } from '../../../proxy/quota/interface.js';
import { DependencyError } from '../../../store/errors.js';
import type { KeyRecord } from '../../../tables/keys.js';
import {
  type DynamoFixture,
  dynamoFixture,
  itemBytes,
  keyRecord,
  leanTransport,
} from '../../helpers/dynamo.js';
import { type FaultAction, type FaultProxy, startFaultProxy } from '../../helpers/fault-proxy.js';

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

/**
 * The dependency timeout (DEPENDENCY_TIMEOUT_MS): the default 2 s, or 1 s where no request waits for it; for the
 * burst, long enough that dynalite's one thread (shared with the fault proxy and the rest of a loaded test run)
 * is never the limit: its figures are recognition, not capacity.
 */
const DEFAULT_TIMEOUT_MS = 2_000;
const SHORT_TIMEOUT_MS = 1_000;
const BURST_TIMEOUT_MS = 10_000;

/** A meter as the proxy wires it for `timeoutMs`, through the fault proxy, on a client of its own. */
function faultyMeter(timeoutMs = SHORT_TIMEOUT_MS): DynamoQuotaMeter {
  const transport = leanTransport(faults.endpoint);
  closers.push(() => transport.close());
  return new DynamoQuotaMeter({ transport, table: db.countersTable, writeTimeoutMs: timeoutMs });
}

/** One metering call as the handler makes it, under its metering deadline; a fault is a DependencyError. */
function meterOnce(
  meter: DynamoQuotaMeter,
  key: KeyRecord,
  timeoutMs = SHORT_TIMEOUT_MS,
): Promise<MeterOutcome | DependencyError> {
  const deadline = meteringDeadlineMs(timeoutMs);
  return callWithDeadline('quota', deadline, (signal) => meter.meter(key, new Date(), { signal })).catch(
    (error: unknown) => {
      if (error instanceof DependencyError && error.dependency === 'quota') return error;
      throw error;
    },
  );
}

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
    updates: seen.filter((r) => isUpdate(r.target)).length,
    /** UpdateItems DynamoDB applied: answered 200 by the server, whatever the client got. */
    landed: seen.filter((r) => isUpdate(r.target) && r.status === 200).length,
    gets: seen.filter((r) => isGet(r.target)).length,
  };
}

/**
 * Every way a write's answer is lost after the write landed, and how many requests try it; the last two end
 * only at the write's deadline, so they run once, at the default timeout (the read then has its 500 ms).
 */
const LOST_ANSWERS: [string, FaultAction, number][] = [
  ['reset before any byte of the answer', 'reset-after', 10],
  [
    'answered 500 ("may have succeeded")',
    {
      status: 500,
      body: '{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError"}',
      forward: true,
    },
    10,
  ],
  ['200, then the body cut and the connection reset', 'cut-reset', 10],
  ['200, then the body cut and the connection closed', 'truncate', 10],
  ['200 with a Content-Length shorter than the body (cut JSON that looks whole)', 'short-length', 10],
  ['200 with a Content-Length longer than the body (the rest never comes)', 'long-length', 1],
  ['no answer at all (the write deadline passes)', 'hold-after', 1],
];

describe.each(LOST_ANSWERS)('a write that landed, its answer lost: %s', (_name, action, requests) => {
  it('is recognised by one consistent read, never sent again: admitted, counted once', async () => {
    // Only a request that waits for its write's deadline needs the default timeout.
    const timeoutMs =
      action === 'long-length' || action === 'hold-after' ? DEFAULT_TIMEOUT_MS : SHORT_TIMEOUT_MS;
    const meter = faultyMeter(timeoutMs);
    const key = keyRecord();
    expect(await meterOnce(meter, key, timeoutMs)).toMatchObject({ ok: true });
    const mark = faults.seen.length;
    faults.setRule(({ headers }) => (isUpdate(String(headers['x-amz-target'])) ? action : undefined));
    const outcomes: (MeterOutcome | DependencyError)[] = [];
    try {
      for (let i = 0; i < requests; i++) outcomes.push(await meterOnce(meter, key, timeoutMs));
    } finally {
      faults.setRule(undefined);
    }
    expect(outcomes.map((outcome) => ('ok' in outcome ? outcome.ok : outcome.message))).toEqual(
      outcomes.map(() => true),
    );
    // Each request's headers still say what is left: its own count is in them.
    expect(outcomes.at(-1)).toMatchObject({ remainingMinute: 60 - 1 - requests });
    expect(since(mark)).toEqual({ updates: requests, landed: requests, gets: requests });
    expect((await counterItem(key))?.month_count?.N).toBe(String(requests + 1));
  });
});

it('a write that did not land and lost its answer: 503, not counted, not sent again', async () => {
  const meter = faultyMeter();
  const key = keyRecord();
  expect(await meterOnce(meter, key)).toMatchObject({ ok: true });
  const mark = faults.seen.length;
  // Refused before it reaches DynamoDB, as a connection that dies on the way does.
  faults.setRule(({ headers }) =>
    isUpdate(String(headers['x-amz-target']))
      ? { status: 500, body: '{"__type":"InternalServerError"}' }
      : undefined,
  );
  let outcome: MeterOutcome | DependencyError;
  try {
    outcome = await meterOnce(meter, key);
  } finally {
    faults.setRule(undefined);
  }
  expect(outcome).toMatchObject({
    name: 'DependencyError',
    message: 'quota write failed (InternalServerError)',
  });
  expect(since(mark)).toEqual({ updates: 1, landed: 0, gets: 1 });
  expect((await counterItem(key))?.month_count?.N).toBe('1');
});

/** A refund's write (proxy/quota/dynamo.ts, `refund`): the one UpdateItem that decrements. */
const isRefund = (body: Buffer) => body.toString().includes('month_count - :one');

describe.each([
  ['its answer lost after it landed (a reset)', 'reset-after' as FaultAction, '0'],
  [
    'answered 500 before it reached DynamoDB',
    { status: 500, body: '{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError"}' } as FaultAction,
    '1',
  ],
])('a refund (its read failed after the meter admitted it), %s', (_name, action, left) => {
  it('fails as the quota dependency, is never sent again, and the request is counted at most once', async () => {
    const meter = faultyMeter();
    const key = keyRecord();
    const now = new Date();
    const admitted = await meterOnce(meter, key);
    if (admitted instanceof DependencyError || !admitted.ok) throw new Error('not admitted');
    const mark = faults.seen.length;
    faults.setRule(({ headers, body }) =>
      isUpdate(String(headers['x-amz-target'])) && isRefund(body) ? action : undefined,
    );
    let refunded: unknown;
    try {
      refunded = await callWithDeadline('quota', SHORT_TIMEOUT_MS, (signal) =>
        meter.refund(key, now, admitted, { signal }),
      ).catch((error: unknown) => error);
    } finally {
      faults.setRule(undefined);
    }
    expect(refunded).toMatchObject({
      name: 'DependencyError',
      message: expect.stringMatching(/^quota refund failed/),
    });
    // One write, not resent: it landed (the count is back to 0) or it did not (the request stays counted once).
    expect(since(mark)).toEqual({ updates: 1, landed: left === '0' ? 1 : 0, gets: 0 });
    expect((await counterItem(key))?.month_count?.N).toBe(left);
  });
});

/**
 * 90 requests of one key at once, every third UpdateItem's answer lost after it landed, `meters` meters
 * sharing the requests in turn: the outcomes and what DynamoDB saw.
 */
async function burst(meters: number) {
  const key = keyRecord({ tier: 'partner', limits: { minute: 10_000, month: 100_000 } });
  const all = Array.from({ length: meters }, () => faultyMeter(BURST_TIMEOUT_MS));
  // Each meter connected and the item's window open, as in a warm service.
  for (const meter of all) expect(await meterOnce(meter, key, BURST_TIMEOUT_MS)).toMatchObject({ ok: true });
  const mark = faults.seen.length;
  let updates = 0;
  faults.setRule(({ headers }) =>
    isUpdate(String(headers['x-amz-target'])) && ++updates % 3 === 0 ? 'reset-after' : undefined,
  );
  let outcomes: (MeterOutcome | DependencyError)[];
  try {
    outcomes = await Promise.all(
      Array.from({ length: 90 }, (_, i) => meterOnce(all[i % meters]!, key, BURST_TIMEOUT_MS)),
    );
  } finally {
    faults.setRule(undefined);
  }
  const admitted = outcomes.filter((outcome) => !(outcome instanceof DependencyError) && outcome.ok).length;
  const refused = outcomes.filter((outcome) => outcome instanceof DependencyError).length;
  const counted = Number((await counterItem(key))?.month_count?.N) - meters;
  const { landed, gets } = since(mark);
  const charged = counted - admitted;
  console.log(
    `metering burst (${meters === 1 ? 'one container, as npm start' : `${meters} containers, as Lambda`}): ` +
      `90 requests of one key, every third answer lost (${Math.floor(landed / 3)} lost; the last ${RECENT_WRITES} tokens and ${TOKEN_SLOTS} slots): ` +
      `${admitted} admitted, ${charged} refused and charged, ${refused - charged} refused uncharged; ` +
      `${counted} counted, ${landed} writes landed, ${gets} reads`,
  );
  expect(admitted + refused).toBe(90);
  // Nothing counted twice: every count is one landed write, and there is at most one per request.
  expect(counted).toBe(landed);
  // Every admitted request counted; a refused one at most once (its write may have landed unseen).
  expect(counted).toBeGreaterThanOrEqual(admitted);
  expect(charged).toBeLessThanOrEqual(refused);
  // One read per lost answer, no more.
  expect(gets).toBe(Math.floor(landed / 3));
  return { admitted, charged, uncharged: refused - charged };
}

describe('a burst of 90 requests of one key, every third answer lost: admitted, refused and charged, refused uncharged', () => {
  // Every write lands (the answers are lost after it), so nothing refused goes uncharged; with 8 tokens
  // shifted through the item (before issue 31) 76–77 of 90 were admitted and 13–14 refused and charged.
  it('from 90 containers at once (Lambda: one request per container)', async () => {
    // Each request's read follows its reset at once, fewer than 8 writes later (measured: 90 of 90).
    const { admitted, uncharged } = await burst(90);
    expect(uncharged).toBe(0);
    expect(admitted).toBeGreaterThanOrEqual(87);
  });

  it('from one container (npm start: one process)', async () => {
    // Its requests queue behind its connections, so more than 8 writes may land before a read; its slots are
    // taken in turn, again only 40 of its writes later, which a burst of 90 in flight can reach (measured:
    // 87–88 of 90 on dynalite over LevelDB; 82 since the local DynamoDB answers a write within its turn of
    // the event loop (issue 40: its store in memory), so more of the burst lands before a lost answer's read).
    const { admitted, uncharged } = await burst(1);
    expect(uncharged).toBe(0);
    expect(admitted).toBeGreaterThanOrEqual(78);
  });
});

it(`the counter item keeps the last ${RECENT_WRITES} tokens newest first and one per slot (${TOKEN_SLOTS}), within 700 bytes at its largest`, async () => {
  const meter = new DynamoQuotaMeter({ transport: db.transport, table: db.countersTable });
  const key = keyRecord({ tier: 'partner', limits: { minute: 10_000, month: 100_000 } });
  for (let i = 0; i < TOKEN_SLOTS; i++) await meter.meter(key, new Date());
  const before = (await counterItem(key))!;
  await meter.meter(key, new Date());
  const item = (await counterItem(key))!;
  const named = (pattern: RegExp) => Object.keys(item).filter((attribute) => pattern.test(attribute));
  const recent = (of: typeof item) => Array.from({ length: RECENT_WRITES }, (_, i) => of[`w${i}`]?.S);
  // The recent writes shift by one per write, newest first, each right side read from the item as it was.
  expect(new Set(recent(item)).size).toBe(RECENT_WRITES);
  expect(recent(item).slice(1)).toEqual(recent(before).slice(0, -1));
  // One meter takes every slot in turn: all are filled, each with a token of its own; the newest write
  // replaced exactly one, with the newest token.
  const slots = named(/^s\d+$/);
  expect(slots).toHaveLength(TOKEN_SLOTS);
  expect(new Set(slots.map((slot) => before[slot]!.S)).size).toBe(TOKEN_SLOTS);
  const replaced = slots.filter((slot) => item[slot]!.S !== before[slot]!.S);
  expect(replaced.map((slot) => item[slot]!.S)).toEqual([item.w0!.S]);
  // At its largest: counts at the largest limits a key can have, the minute and expiry in seconds.
  const largest = {
    ...item,
    month_count: { N: String(Number.MAX_SAFE_INTEGER) },
    minute_count: { N: String(Number.MAX_SAFE_INTEGER) },
  };
  console.log(
    `counter item: ${Object.keys(item).length} attributes, ${itemBytes(item)} bytes now, ${itemBytes(largest)} at its largest`,
  );
  expect(itemBytes(largest)).toBeLessThanOrEqual(700);
});
