/**
 * The lean metering transport (LeanCounterTransport) against dynalite, answer for answer the same as the AWS
 * SDK's calls (the reference, in this test only); AWS's answers dynalite does not give (the failed item, throttling, 5xx) from a loopback server;
 * faults as the meter's DependencyErrors; and its signature checked against the bytes actually sent.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import type { RetryStrategyV2 } from '@smithy/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialProvider, dynamoClient } from '../../../aws/sdk.js';
import { SignedClient } from '../../../aws/signed.js';
import { DynamoQuotaMeter } from '../../../proxy/quota/dynamo.js';
import { LeanCounterTransport } from '../../../proxy/quota/dynamo-lean.js';
import type { CounterTransport } from '../../../proxy/quota/dynamo-transport.js';
import { DependencyError } from '../../../store/errors.js';
import { at, type DynamoFixture, dynamoFixture, keyRecord } from '../../helpers/dynamo.js';
import { sdkCounterTransport } from '../../helpers/sdk-dynamo.js';
import { CHECK_CREDENTIALS, type SigV4CheckServer, startSigV4Check } from '../../helpers/sigv4-check.js';
import { type SlowProxy, startSlowProxy } from '../../helpers/slow-proxy.js';

let db: DynamoFixture;
const closers: (() => unknown)[] = [];

function lean(endpoint = db.server.endpoint, credentials = credentialProvider(endpoint)) {
  const transport = new LeanCounterTransport({ endpoint, region: 'us-east-1', credentials });
  closers.push(() => transport.close());
  return transport;
}

/** The AWS SDK's calls in the transport's answer shape: the reference the lean transport is held to. */
function sdk(endpoint = db.server.endpoint): CounterTransport {
  const client = dynamoClient({ endpoint });
  closers.push(() => client.destroy());
  return sdkCounterTransport(client);
}

beforeAll(async () => {
  db = await dynamoFixture();
});
afterAll(async () => {
  for (const close of closers) await close();
  await db?.dispose();
});

/** A counting write on its own item: `count` when `minute` is 7, else a failed condition. */
function countInput(pk: string, minute: number): UpdateItemCommandInput {
  return {
    TableName: db.countersTable,
    Key: { pk: { S: pk } },
    UpdateExpression: 'SET n = if_not_exists(n, :zero) + :one, #minute = :m',
    ConditionExpression: 'attribute_not_exists(#minute) OR #minute = :m',
    ExpressionAttributeNames: { '#minute': 'minute' },
    ExpressionAttributeValues: { ':one': { N: '1' }, ':zero': { N: '0' }, ':m': { N: String(minute) } },
    ReturnValues: 'ALL_NEW',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  };
}

/** The outcome of a call as a comparable value: the answer, or the error's name. */
const settle = <T>(call: Promise<T>) =>
  call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error: (error as Error).name }),
  );

describe('LeanCounterTransport answers as the SDK does (dynalite)', () => {
  it('UpdateItem: the new item; a failed condition as a value; GetItem: the item or nothing', async () => {
    const results: Record<string, unknown[]> = {};
    for (const [name, transport] of [
      ['sdk', sdk()],
      ['lean', lean()],
    ] as const) {
      const pk = `parity-${name}`;
      results[name] = [
        await settle(transport.getItem({ TableName: db.countersTable, Key: { pk: { S: pk } } })),
        await settle(transport.updateItem(countInput(pk, 7))),
        await settle(transport.updateItem(countInput(pk, 7))),
        await settle(transport.updateItem(countInput(pk, 8))),
        await settle(
          transport.getItem({ TableName: db.countersTable, Key: { pk: { S: pk } }, ConsistentRead: true }),
        ),
        await settle(transport.updateItem({ ...countInput(pk, 7), TableName: 'no-such-table' })),
      ];
    }
    const item = (n: number, name: string) => ({
      pk: { S: `parity-${name}` },
      n: { N: String(n) },
      minute: { N: '7' },
    });
    expect(results.lean).toEqual([
      { value: undefined },
      { value: { ok: true, attributes: item(1, 'lean') } },
      { value: { ok: true, attributes: item(2, 'lean') } },
      // dynalite does not return the failed item; AWS does (below).
      { value: { ok: false, item: undefined } },
      { value: item(2, 'lean') },
      { error: 'ResourceNotFoundException' },
    ]);
    expect(JSON.stringify(results.sdk).replaceAll('parity-sdk', 'parity-lean')).toBe(
      JSON.stringify(results.lean),
    );
  });
});

describe('answers only AWS gives (loopback server)', () => {
  let server: Server;
  let endpoint: string;
  let reply: { status: number; body: string } = { status: 200, body: '{}' };
  /** Answers for the next requests, before `reply`; `requests` counts what arrived. */
  const script: { status: number; body: string; afterwards?: () => void }[] = [];
  let requests = 0;
  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        requests++;
        const next: (typeof script)[number] = script.shift() ?? reply;
        response.writeHead(next.status, { 'content-type': 'application/x-amz-json-1.0' }).end(next.body);
        next.afterwards?.();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => {
      server.close(resolve);
      server.closeAllConnections();
    });
  });

  const failedItem = {
    pk: { S: 'k#2026-11' },
    minute: { N: '1795427400' },
    minute_count: { N: '60' },
    month_count: { N: '61' },
  };

  it('a failed condition with the old item (ReturnValuesOnConditionCheckFailure: ALL_OLD), as the SDK reads it', async () => {
    reply = {
      status: 400,
      body: JSON.stringify({
        __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
        message: 'The conditional request failed',
        Item: failedItem,
      }),
    };
    const input = countInput('k#2026-11', 7);
    expect(await lean(endpoint).updateItem(input)).toEqual({ ok: false, item: failedItem });
    expect(await sdk(endpoint).updateItem(input)).toEqual({ ok: false, item: failedItem });
  });

  it.each([
    [
      400,
      { __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException', message: 'slow down' },
      'ThrottlingException',
    ],
    [
      400,
      { __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException' },
      'ProvisionedThroughputExceededException',
    ],
  ])('%i %j, twice → the meter fails closed with DependencyError (%s)', async (status, body, name) => {
    reply = { status, body: typeof body === 'string' ? body : JSON.stringify(body) };
    const meter = new DynamoQuotaMeter({ transport: lean(endpoint), table: 'counters' });
    requests = 0;
    const failed = await meter
      .meter(keyRecord(), at('2026-11-21T10:00:00Z'))
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(DependencyError);
    expect(failed).toMatchObject({ dependency: 'quota', message: `quota write failed (${name})` });
    // Throttling answers are sent once more, as by the SDK (maxAttempts 2): DynamoDB applied nothing.
    expect(requests).toBe(2);
  });

  it.each([
    [500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError' }, 'InternalServerError'],
    [503, '<html>Service Unavailable</html>', 'HTTP 503'],
  ])(
    '%i %j to a write → not sent again (it may have been applied); the meter looks for its own write, then fails closed (%s)',
    async (status, body, name) => {
      reply = { status, body: typeof body === 'string' ? body : JSON.stringify(body) };
      const meter = new DynamoQuotaMeter({ transport: lean(endpoint), table: 'counters' });
      requests = 0;
      const failed = await meter
        .meter(keyRecord(), at('2026-11-21T10:00:00Z'))
        .catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(DependencyError);
      expect(failed).toMatchObject({ dependency: 'quota', message: `quota write failed (${name})` });
      // One UpdateItem, never resent; then its GetItem (a read, sent once more after a 5xx, as by the SDK).
      expect(requests).toBe(3);
    },
  );

  it('a throttled write is sent once more after the SDK backoff, and its second answer stands; a failed one is not', async () => {
    const attributes = { minute_count: { N: '1' }, month_count: { N: '1' } };
    const throttled = {
      status: 400,
      body: JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException' }),
    };
    script.push(throttled, { status: 200, body: JSON.stringify({ Attributes: attributes }) });
    requests = 0;
    expect(await lean(endpoint).updateItem(countInput('k#2026-11', 7))).toEqual({ ok: true, attributes });
    expect(requests).toBe(2);
    // A 500 may have been applied: sent again, it could count the request twice.
    script.push({ status: 500, body: JSON.stringify({ __type: 'InternalServerError' }) });
    requests = 0;
    expect(
      await lean(endpoint)
        .updateItem(countInput('k#2026-11', 7))
        .catch((error: unknown) => error),
    ).toMatchObject({ name: 'InternalServerError', status: 500 });
    expect(requests).toBe(1);
    // A refused condition is an answer, not a fault: sent once.
    reply = {
      status: 400,
      body: JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException' }),
    };
    requests = 0;
    expect(await lean(endpoint).updateItem(countInput('k#2026-11', 7))).toEqual({
      ok: false,
      item: undefined,
    });
    expect(requests).toBe(1);
  });

  it("the caller's deadline ends the backoff: AbortError, no second request", async () => {
    // A strategy whose backoff never ends: the call settles only because the deadline ends it.
    const endless: RetryStrategyV2 = {
      acquireInitialRetryToken: async () => ({ getRetryCount: () => 0, getRetryDelay: () => 0 }),
      refreshRetryTokenForRetry: () => new Promise(() => {}),
      recordSuccess: () => {},
    };
    const client = new SignedClient({
      origin: endpoint,
      service: 'dynamodb',
      region: 'us-east-1',
      credentials: async () => CHECK_CREDENTIALS,
      retryStrategy: endless,
    });
    closers.push(() => client.close());
    const deadline = new AbortController();
    script.push({ status: 400, body: '{}', afterwards: () => setTimeout(() => deadline.abort(), 20) });
    requests = 0;
    const failed = await client
      .request({
        method: 'POST',
        path: '/',
        body: '{}',
        signal: deadline.signal,
        errorCode: () => 'ThrottlingException',
      })
      .catch((error: unknown) => error);
    expect(failed).toMatchObject({ name: 'AbortError' });
    expect(requests).toBe(1);
  });
});

describe('LeanCounterTransport faults', () => {
  let slow: SlowProxy;
  beforeAll(async () => {
    slow = await startSlowProxy({ targetPort: db.server.port });
  });
  afterAll(async () => {
    await slow?.close();
  });

  it('a stopped server: the meter throws DependencyError; after a restart the same transport meters again', async () => {
    const meter = new DynamoQuotaMeter({ transport: lean(), table: db.countersTable });
    const key = keyRecord();
    expect((await meter.meter(key, new Date())).ok).toBe(true);
    await db.server.stop();
    try {
      const down = await meter.meter(key, new Date()).catch((error: unknown) => error);
      expect(down).toMatchObject({ name: 'DependencyError', dependency: 'quota' });
      expect((down as DependencyError).cause).toBeDefined();
    } finally {
      await db.server.start();
    }
    expect(await meter.meter(key, new Date())).toMatchObject({ ok: true, remainingMinute: 58 });
  });

  it.each([
    ['slowed past the deadline', () => slow.setDelay(5_000)],
    ['accepting connections and never answering', () => slow.setMode('blackhole')],
    ['already aborted', () => {}],
  ])('a server %s: the abort signal ends the meter call with a DependencyError', async (how, fault) => {
    const through = () => new DynamoQuotaMeter({ transport: lean(slow.endpoint), table: db.countersTable });
    const key = keyRecord();
    expect((await through().meter(key, new Date())).ok).toBe(true);
    fault();
    slow.dropConnections();
    // A write is not sent again after a reset (it may have landed): a transport of its own, with no kept-alive
    // connection that the drop closed under it, so the call meets the fault rather than a dead connection.
    const meter = through();
    try {
      const signal = how === 'already aborted' ? AbortSignal.abort() : AbortSignal.timeout(200);
      const late = await meter.meter(key, new Date(), { signal }).catch((error: unknown) => error);
      expect(late).toMatchObject({
        name: 'DependencyError',
        dependency: 'quota',
        message: 'quota write failed (AbortError)',
      });
    } finally {
      slow.setDelay(0);
      slow.setMode('pass');
      slow.dropConnections();
    }
    expect((await meter.meter(key, new Date())).ok).toBe(true);
  });
});

describe('what LeanCounterTransport sends', () => {
  let check: SigV4CheckServer;
  beforeAll(async () => {
    check = await startSigV4Check((_, response) => {
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.0' }).end('{"Attributes":{}}');
    });
  });
  afterAll(async () => {
    await check?.close();
  });

  it('a signed POST of the SDK input shape to the JSON protocol, signature matching the bytes sent', async () => {
    const transport = lean(check.endpoint, async () => CHECK_CREDENTIALS);
    const input = countInput('k#2026-11', 7);

    expect(await transport.updateItem(input)).toEqual({ ok: true, attributes: {} });

    const [sent] = check.requests;
    expect(sent).toMatchObject({ method: 'POST', path: '/', problem: undefined });
    expect(sent!.headers['x-amz-target']).toBe('DynamoDB_20120810.UpdateItem');
    expect(sent!.headers['content-type']).toBe('application/x-amz-json-1.0');
    expect(sent!.headers.authorization).toContain('/us-east-1/dynamodb/aws4_request');
    expect(JSON.parse(sent!.body)).toEqual(input);
  });
});
