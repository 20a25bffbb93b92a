/**
 * Section 8: why the request path has one client. The two hot calls through the request path's client (lean
 * signed requests: LeanS3ObjectStore, DynamoQuotaMeter over LeanCounterTransport) and, for reference, through
 * the AWS SDK (S3ObjectStore's GetObject, the same DynamoQuotaMeter over the SDK's calls of
 * test/helpers/sdk-dynamo.ts), side by side in this one process, against the stack's s3rver and dynalite
 * (their CPU is in their own process, not counted here). Batches alternate between the clients; CPU per call
 * is `process.cpuUsage()` around a batch divided by its calls.
 */
import { randomBytes } from 'node:crypto';
import { credentialProvider, dynamoClient, regionOf, s3Client } from '../aws/sdk.js';
import { cachedKeys, createProxy } from '../proxy/app.js';
import { loadConfig } from '../proxy/config.js';
import type { ProxyHandler } from '../proxy/core/types.js';
import { DynamoKeyStore } from '../proxy/keys/dynamo.js';
import { DynamoQuotaMeter } from '../proxy/quota/dynamo.js';
import { LeanCounterTransport } from '../proxy/quota/dynamo-lean.js';
import type { ObjectStore } from '../store/objects/interface.js';
import { S3ObjectStore } from '../store/objects/s3.js';
import { LeanS3ObjectStore } from '../store/objects/s3-lean.js';
import type { KeyRecord } from '../tables/keys.js';
import { sdkCounterTransport } from '../test/helpers/sdk-dynamo.js';
import type { Stack } from './e2e.js';
import { AUTH, type Picks } from './mix.js';
import { progress, type SectionResult } from './report.js';
import { HUGE_LIMITS, STACK_BUCKET, STACK_TABLES } from './settings.js';
import { fmt, median, percentile, table } from './stats.js';

/** The object the ranged GETs read: 64 KiB, of which each GET reads 8 KiB (about a 50-record page). */
const OBJECT_KEY = 'bench-lean/object';
const OBJECT_BYTES = 65_536;
const RANGE: [number, number] = [4_096, 4_096 + 8_192];

export type Client = 'sdk' | 'lean';
export const CLIENTS: readonly Client[] = ['sdk', 'lean'];

export interface HotCalls {
  /** One ranged GetObject. */
  get(): Promise<void>;
  /** One meter() of a key with room: one conditional UpdateItem in steady state. */
  meter(): Promise<void>;
  close(): Promise<void>;
}

/** Both hot calls through one client, against the given endpoints. */
export function hotCalls(client: Client, s3Endpoint: string, dynamoEndpoint: string): HotCalls {
  const key: KeyRecord = {
    keyHash: '0'.repeat(64),
    keyId: `bench-lean-${client}-${randomBytes(4).toString('hex')}`,
    tier: 'partner',
    status: 'active',
    limits: HUGE_LIMITS,
    created: new Date().toISOString(),
  };
  const region = regionOf();
  let store: ObjectStore;
  let meter: DynamoQuotaMeter;
  let close: () => Promise<void>;
  if (client === 'sdk') {
    const s3 = s3Client({ endpoint: s3Endpoint });
    const dynamo = dynamoClient({ endpoint: dynamoEndpoint });
    store = new S3ObjectStore({ client: s3, bucket: STACK_BUCKET });
    meter = new DynamoQuotaMeter({
      transport: sdkCounterTransport(dynamo),
      table: STACK_TABLES.countersTable,
    });
    close = async () => {
      s3.destroy();
      dynamo.destroy();
    };
  } else {
    const lean = new LeanS3ObjectStore({
      bucket: STACK_BUCKET,
      endpoint: s3Endpoint,
      region,
      credentials: credentialProvider(s3Endpoint),
    });
    const transport = new LeanCounterTransport({
      endpoint: dynamoEndpoint,
      region,
      credentials: credentialProvider(dynamoEndpoint),
    });
    store = lean;
    meter = new DynamoQuotaMeter({ transport, table: STACK_TABLES.countersTable });
    close = async () => {
      await lean.close();
      await transport.close();
    };
  }
  return {
    async get() {
      const result = await store.get(OBJECT_KEY, { range: RANGE });
      if (!result.ok || result.body.byteLength !== RANGE[1] - RANGE[0])
        throw new Error(`${client} get: ${result.ok ? 'short body' : result.reason}`);
    },
    async meter() {
      const result = await meter.meter(key, new Date());
      if (!result.ok) throw new Error(`${client} meter: refused`);
    },
    close,
  };
}

/** Put the object the GETs read (once per stack). */
export async function putBenchObject(s3Endpoint: string): Promise<void> {
  const client = s3Client({ endpoint: s3Endpoint });
  try {
    await new S3ObjectStore({ client, bucket: STACK_BUCKET }).put(OBJECT_KEY, randomBytes(OBJECT_BYTES));
  } finally {
    client.destroy();
  }
}

interface Samples {
  cpuUsPerCall: number[];
  wallMs: number[];
}

async function batch(call: () => Promise<void>, n: number, into: Samples): Promise<void> {
  const times = new Float64Array(n);
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const started = performance.now();
    await call();
    times[i] = performance.now() - started;
  }
  const used = process.cpuUsage(cpu);
  into.cpuUsPerCall.push((used.user + used.system) / n);
  into.wallMs.push(...times);
}

export interface LeanFigures {
  calls: number;
  rounds: number;
  rows: { call: 'get' | 'meter'; client: Client; cpuUs: number; p50: number; p99: number }[];
}

/** N calls per batch, `rounds` batches per client and call, alternating which client goes first. */
export async function measureHotCalls(stack: Stack, calls: number, rounds: number): Promise<LeanFigures> {
  await putBenchObject(stack.s3Endpoint);
  const clients = Object.fromEntries(
    CLIENTS.map((c) => [c, hotCalls(c, stack.s3Endpoint, stack.dynamoEndpoint)]),
  ) as Record<Client, HotCalls>;
  const samples = new Map<string, Samples>();
  const slot = (call: string, client: Client) => {
    const name = `${call}/${client}`;
    if (!samples.has(name)) samples.set(name, { cpuUsPerCall: [], wallMs: [] });
    return samples.get(name)!;
  };
  try {
    // Warm-up: connections, credentials, the JIT, the meter's minute window.
    for (const client of CLIENTS) {
      for (let i = 0; i < 50; i++) {
        await clients[client].get();
        await clients[client].meter();
      }
    }
    for (let round = 0; round < rounds; round++) {
      progress(`8. round ${round + 1}/${rounds}: ${calls} GETs and ${calls} meter() calls per client`);
      const order = round % 2 === 0 ? CLIENTS : [...CLIENTS].reverse();
      for (const call of ['get', 'meter'] as const) {
        for (const client of order) await batch(() => clients[client][call](), calls, slot(call, client));
      }
    }
  } finally {
    for (const client of CLIENTS) await clients[client].close();
  }
  const rows: LeanFigures['rows'] = [];
  for (const call of ['get', 'meter'] as const) {
    for (const client of CLIENTS) {
      const s = slot(call, client);
      const sorted = Float64Array.from(s.wallMs).sort();
      rows.push({
        call,
        client,
        cpuUs: median(s.cpuUsPerCall),
        p50: percentile(sorted, 50),
        p99: percentile(sorted, 99),
      });
    }
  }
  return { calls, rounds, rows };
}

/**
 * Whole requests through the production wiring (lean), and through the same wiring with the SDK's clients put
 * in its place: CPU per request of the proxy process.
 */
async function measureRequests(stack: Stack, picks: Picks, calls: number, rounds: number) {
  const target = `/v1/modules?manufacturer_id=${picks.bigMaker}&sort=name`;
  const config = loadConfig(stack.env);
  if (!config.ok) throw new Error(config.problems.join('; '));
  const c = config.config;
  const s3 = s3Client({ endpoint: c.s3Endpoint });
  const dynamo = sdkCounterTransport(dynamoClient({ endpoint: c.dynamodbEndpoint }));
  const handles: Record<Client, ProxyHandler> = {
    lean: createProxy(config, { log: () => {} }),
    sdk: createProxy(config, {
      log: () => {},
      objects: new S3ObjectStore({ client: s3, bucket: c.bucket }),
      keys: cachedKeys(new DynamoKeyStore({ transport: dynamo, table: c.keysTable }), c),
      quota: new DynamoQuotaMeter({ transport: dynamo, table: c.countersTable }),
    }),
  };
  const [path, query] = target.split('?') as [string, string];
  const call = (client: Client) => async () => {
    const response = await handles[client]({ method: 'GET', path, query, headers: AUTH });
    if (response.status !== 200) throw new Error(`${client} ${target}: ${response.status}`);
  };
  const samples: Record<Client, Samples> = {
    sdk: { cpuUsPerCall: [], wallMs: [] },
    lean: { cpuUsPerCall: [], wallMs: [] },
  };
  for (const client of CLIENTS) for (let i = 0; i < 50; i++) await call(client)();
  for (let round = 0; round < rounds; round++) {
    progress(`8. round ${round + 1}/${rounds}: ${calls} first pages through createProxy per client`);
    for (const client of round % 2 === 0 ? CLIENTS : [...CLIENTS].reverse())
      await batch(call(client), calls, samples[client]);
  }
  s3.destroy();
  return Object.fromEntries(
    CLIENTS.map((client) => {
      const sorted = Float64Array.from(samples[client].wallMs).sort();
      return [
        client,
        {
          cpuUs: median(samples[client].cpuUsPerCall),
          p50: percentile(sorted, 50),
          p99: percentile(sorted, 99),
        },
      ];
    }),
  ) as Record<Client, { cpuUs: number; p50: number; p99: number }>;
}

export async function benchLean(stack: Stack, picks: Picks): Promise<SectionResult> {
  const calls = Number(process.env.BENCH_LEAN_CALLS ?? 300);
  const rounds = Number(process.env.BENCH_LEAN_ROUNDS ?? 5);
  const figures = await measureHotCalls(stack, calls, rounds);
  const requests = await measureRequests(stack, picks, calls, rounds);
  const row = (call: 'get' | 'meter', client: Client) =>
    figures.rows.find((r) => r.call === call && r.client === client)!;
  const label = { get: 'S3 ranged GET (8 KiB of a 64 KiB object)', meter: 'meter(): one UpdateItem' };
  const lines: (string | number)[][] = [];
  for (const call of ['get', 'meter'] as const) {
    const sdk = row(call, 'sdk');
    const lean = row(call, 'lean');
    lines.push([label[call], 'AWS SDK v3', fmt.int(sdk.cpuUs), fmt.ms(sdk.p50), fmt.ms(sdk.p99)]);
    lines.push([
      label[call],
      'lean (aws4 + node:http)',
      fmt.int(lean.cpuUs),
      fmt.ms(lean.p50),
      fmt.ms(lean.p99),
    ]);
    lines.push([
      label[call],
      '**SDK / lean**',
      `**${fmt.x(sdk.cpuUs / lean.cpuUs)}**`,
      fmt.x(sdk.p50 / lean.p50),
      fmt.x(sdk.p99 / lean.p99),
    ]);
  }
  const whole = 'a warm filtered, sorted first page through createProxy (the whole request)';
  lines.push([
    whole,
    'AWS SDK v3',
    fmt.int(requests.sdk.cpuUs),
    fmt.ms(requests.sdk.p50),
    fmt.ms(requests.sdk.p99),
  ]);
  lines.push([
    whole,
    'lean (aws4 + node:http)',
    fmt.int(requests.lean.cpuUs),
    fmt.ms(requests.lean.p50),
    fmt.ms(requests.lean.p99),
  ]);
  lines.push([
    whole,
    '**SDK / lean**',
    `**${fmt.x(requests.sdk.cpuUs / requests.lean.cpuUs)}**`,
    fmt.x(requests.sdk.p50 / requests.lean.p50),
    fmt.x(requests.sdk.p99 / requests.lean.p99),
  ]);
  const cpuRatio = (call: 'get' | 'meter') => row(call, 'sdk').cpuUs / row(call, 'lean').cpuUs;
  const saved =
    row('get', 'sdk').cpuUs +
    row('meter', 'sdk').cpuUs -
    row('get', 'lean').cpuUs -
    row('meter', 'lean').cpuUs;
  const markdown = [
    `Both clients in the bench process, against the stack's s3rver and dynalite (another process, whose CPU is not counted). ` +
      `${figures.rounds} rounds; each round runs a batch of ${figures.calls} sequential calls per client and call, alternating which client goes first. ` +
      'CPU per call: `process.cpuUsage()` (user + system) around a batch divided by its calls, median over the rounds; wall times are per call over all rounds. ' +
      "Lean, the request path's one client: `LeanS3ObjectStore` and `DynamoQuotaMeter` over `LeanCounterTransport` (aws/signed.ts: `aws4` over `node:http`); SDK, for reference only: `S3ObjectStore` (GetObject) and the same `DynamoQuotaMeter` over the SDK's calls (test/helpers/sdk-dynamo.ts). " +
      "The last rows time whole requests (a warm filtered, sorted first page: cached key, one ranged GET, one UpdateItem) through `createProxy(loadConfig())`, and through the same wiring with the SDK's clients passed in its place, in the same alternating batches: the proxy-side CPU of a request, core included.",
    '',
    table(['call', 'client', 'CPU µs per call', 'wall p50 ms', 'wall p99 ms'], lines),
    '',
    `Per request (one GET and one metering write) the lean client saves about ${fmt.int(saved)} µs of CPU here; on a 512 MB Lambda (${(1769 / 512).toFixed(2)}× slower CPU) that is about ${fmt.ms((saved * 1769) / 512 / 1000)} ms of billed duration and latency per request. ` +
      'The proxy has one client on its request path, the lean one, everywhere (the Lambda function, `npm start`, the tests); the SDK serves the CLIs, the builder and set-up.',
    '',
  ].join('\n');
  return {
    markdown,
    commands: [],
    targets: [
      {
        name: 'Lean hot calls: CPU per call, SDK / lean',
        target: 'lean faster, same fault behaviour',
        measured: `GET ${fmt.int(row('get', 'sdk').cpuUs)} vs ${fmt.int(row('get', 'lean').cpuUs)} µs (${fmt.x(cpuRatio('get'))}), UpdateItem ${fmt.int(row('meter', 'sdk').cpuUs)} vs ${fmt.int(row('meter', 'lean').cpuUs)} µs (${fmt.x(cpuRatio('meter'))})`,
        ok: cpuRatio('get') > 1 && cpuRatio('meter') > 1,
      },
    ],
    data: { saved, requestCpuSdkUs: requests.sdk.cpuUs, requestCpuLeanUs: requests.lean.cpuUs },
  };
}
