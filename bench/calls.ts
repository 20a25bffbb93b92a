/**
 * Section 4: dependency calls per request, by request type, and what a million requests cost on AWS.
 * The proxy runs in this process, wired as proxy/app.ts wires it (the request path's one client, lean signed
 * requests, for the object store, the key lookups and the meter; CachedKeyStore over DynamoKeyStore) against
 * the stack's s3rver and dynalite, with counters: an ObjectStore wrapper (every get) and a DynamoDB transport
 * wrapper (every call, by table).
 */
import { credentialProvider, regionOf } from '../aws/sdk.js';
import { createProxy } from '../proxy/app.js';
import { loadConfig } from '../proxy/config.js';
import type { ProxyHandler, ProxyResponse } from '../proxy/core/types.js';
import { CachedKeyStore } from '../proxy/keys/cached.js';
import { DynamoKeyStore } from '../proxy/keys/dynamo.js';
import { requestMetrics } from '../proxy/log/metrics.js';
import { DynamoQuotaMeter } from '../proxy/quota/dynamo.js';
import { LeanCounterTransport } from '../proxy/quota/dynamo-lean.js';
import type { CounterTransport } from '../proxy/quota/dynamo-transport.js';
import { POINTER_KEY } from '../store/layout.js';
import type { GetOptions, GetOutcome, ObjectStore } from '../store/objects/interface.js';
import { LeanS3ObjectStore } from '../store/objects/s3-lean.js';
import {
  costComparisonMarkdown,
  DEFAULT_SETTINGS,
  type PerRequest,
  PLATFORM_LINE_BYTES,
} from './cost-model.js';
import type { Stack } from './e2e.js';
import { AUTH, type Picks } from './mix.js';
import { progress, type SectionResult } from './report.js';
import { STACK_BUCKET } from './settings.js';
import { fmt, median, table } from './stats.js';

/** us-east-1 list prices; see PRICE_SOURCES. */
export const PRICES = {
  lambdaArmGbSecond: 0.0000133334,
  lambdaPerMillion: 0.2,
  s3GetPerThousand: 0.0004,
  dynamoWritePerMillion: 0.625,
  dynamoReadPerMillion: 0.125,
  cloudFrontHttpsPer10k: 0.01,
  cloudFrontFunctionPerMillion: 0.1,
  cloudFrontTransferPerGb: 0.085,
};

export const PRICE_SOURCES = [
  'Lambda (arm64): $0.0000133334 per GB-second (first 7.5 billion GB-s a month), $0.20 per million requests — aws.amazon.com/lambda/pricing (archived copy of 2026-06-18), same figures in third-party summaries (cloudchipr.com "AWS Lambda Pricing", 2024).',
  'S3 Standard: GET $0.0004 per 1,000 requests — aws.amazon.com/s3/pricing; c3x.dev "S3 request fees explained".',
  'DynamoDB on-demand: $0.625 per million write request units and $0.125 per million read request units since 1 November 2024, when AWS halved on-demand throughput prices (the $1.25 per million WRU in older material is the price before that) — airbyte.com "DynamoDB pricing" (July 2025), jusdb.com (August 2025).',
  'CloudFront (United States, Mexico, Canada): HTTPS requests $0.0100 per 10,000, data transfer out $0.085 per GB (first 10 TB); CloudFront Functions $0.10 per million invocations; origin fetches from AWS origins are free — aws.amazon.com/cloudfront/pricing.',
  'Prices were looked up on 2026-11-22 in stored copies of these pages (no live AWS price API); always-free allowances are monthly and applied in the month table, not in this table per million.',
];

/** Cost-model assumptions that are not measured here. */
export const ASSUMPTIONS = {
  lambdaMemoryMb: 512,
  /** Lambda gives a full vCPU at 1,769 MB; at 512 MB CPU-bound work runs this many times longer. */
  cpuSlowdown: 1769 / 512,
  s3GetMs: 25,
  dynamoWriteMs: 6,
  dynamoReadMs: 4,
  /** Response header bytes on the wire beyond what the proxy sets (CloudFront adds its own). */
  extraHeaderBytes: 300,
  /** What clients ask for (the client package's fetch, browsers, curl --compressed): the coding measured. */
  acceptEncoding: 'gzip',
  /** CloudWatch Logs ingestion per GB (the per-million table below; the month table applies the free 5 GB). */
  logsPerGb: 0.5,
};

interface Counts {
  dataReads: number;
  pointerReads: number;
  keyGets: number;
  counterWrites: number;
  counterReads: number;
  otherDynamo: number;
}

const zero = (): Counts => ({
  dataReads: 0,
  pointerReads: 0,
  keyGets: 0,
  counterWrites: 0,
  counterReads: 0,
  otherDynamo: 0,
});

class CountingObjectStore implements ObjectStore {
  constructor(
    readonly inner: ObjectStore,
    readonly counts: Counts,
  ) {}
  get(key: string, options?: GetOptions): Promise<GetOutcome> {
    if (key.endsWith(POINTER_KEY)) this.counts.pointerReads++;
    else this.counts.dataReads++;
    return this.inner.get(key, options);
  }
}

interface Wired {
  handle: ProxyHandler;
  counts: Counts;
  /**
   * The request log lines the proxy wrote: their number and bytes (each with its newline), and the bytes their
   * CloudWatch metrics add on Lambda.
   */
  logged: { lines: number; bytes: number; metricsBytes: number };
  close(): void;
}

/** Counts the DynamoDB calls of the request path by table: key lookups, metering writes and reads. */
function countTransport(
  transport: CounterTransport,
  counts: Counts,
  tables: { keysTable: string; countersTable: string },
): CounterTransport {
  return {
    updateItem(input, signal) {
      if (input.TableName === tables.countersTable) counts.counterWrites++;
      else counts.otherDynamo++;
      return transport.updateItem(input, signal);
    },
    getItem(input, signal) {
      if (input.TableName === tables.keysTable) counts.keyGets++;
      else if (input.TableName === tables.countersTable) counts.counterReads++;
      else counts.otherDynamo++;
      return transport.getItem(input, signal);
    },
  };
}

/** The proxy as proxy/app.ts builds it, with counters in front of S3 and DynamoDB. */
function wire(stack: Stack): Wired {
  const config = loadConfig(stack.env);
  if (!config.ok) throw new Error(config.problems.join('; '));
  const c = config.config;
  const counts = zero();
  const objects = new LeanS3ObjectStore({
    bucket: STACK_BUCKET,
    endpoint: c.s3Endpoint,
    region: regionOf(),
    credentials: credentialProvider(c.s3Endpoint),
  });
  const dynamo = new LeanCounterTransport({
    endpoint: c.dynamodbEndpoint,
    region: regionOf(),
    credentials: credentialProvider(c.dynamodbEndpoint),
  });
  const counted = countTransport(dynamo, counts, c);
  const logged = { lines: 0, bytes: 0, metricsBytes: 0 };
  // The metrics as the deployed stack's sink adds them: its namespace (infra/request-metrics.ts, the default
  // stack name) and a function version of two digits. The first line is a cold start's; the rows below are warm.
  const metrics = requestMetrics({
    METRICS_NAMESPACE: 'CatalogueReadApi/CatalogueReadApi',
    AWS_LAMBDA_FUNCTION_VERSION: '12',
  })!;
  const handle = createProxy(config, {
    objects: new CountingObjectStore(objects, counts),
    keys: new CachedKeyStore(new DynamoKeyStore({ transport: counted, table: c.keysTable }), {
      ttlMs: c.keyCacheTtlMs,
      maxEntries: c.keyCacheMaxEntries,
    }),
    quota: new DynamoQuotaMeter({
      transport: counted,
      table: c.countersTable,
      writeTimeoutMs: c.dependencyTimeoutMs,
    }),
    // The request line as the sink writes it (proxy/log/sink.ts: JSON and a newline), measured, not kept.
    log: (line) => {
      const json = JSON.stringify(line);
      logged.lines++;
      logged.bytes += Buffer.byteLength(json) + 1;
      logged.metricsBytes += Buffer.byteLength(metrics.line(json, line)) - Buffer.byteLength(json);
    },
  });
  return {
    handle,
    counts,
    logged,
    close() {
      void objects.close();
      void dynamo.close();
    },
  };
}

interface Kind {
  label: string;
  method: string;
  target: string;
  headers: Record<string, string>;
  /** Weight in the blended cost row. */
  weight: number;
}

function call(
  handle: ProxyHandler,
  kind: Pick<Kind, 'method' | 'target' | 'headers'>,
): Promise<ProxyResponse> {
  const q = kind.target.indexOf('?');
  return handle({
    method: kind.method,
    path: q < 0 ? kind.target : kind.target.slice(0, q),
    query: q < 0 ? '' : kind.target.slice(q + 1),
    headers: kind.headers,
  });
}

function wireBytes(response: ProxyResponse): number {
  let bytes = 17 + (response.body?.byteLength ?? 0);
  for (const [name, value] of Object.entries(response.headers)) bytes += name.length + value.length + 4;
  return bytes + ASSUMPTIONS.extraHeaderBytes;
}

export async function benchCalls(stack: Stack, picks: Picks): Promise<SectionResult> {
  const N = 40;
  const wired = wire(stack);
  try {
    const { handle, counts, logged } = wired;
    const get = (target: string, headers: Record<string, string> = {}) =>
      call(handle, { method: 'GET', target, headers: { ...AUTH, ...headers } });
    const coded = { 'accept-encoding': ASSUMPTIONS.acceptEncoding };

    // The first request of a fresh instance (cold caches).
    const list = `/v1/modules?manufacturer_id=${picks.bigMaker}&sort=name`;
    const cold = await get(list);
    if (cold.status !== 200) throw new Error(`cold request: ${cold.status} ${cold.body?.toString()}`);
    const coldCounts = { ...counts };
    const coldMetricsBytes = logged.metricsBytes;

    const first = JSON.parse(cold.body!.toString()) as { page: { next_cursor: string | null } };
    if (!first.page.next_cursor) throw new Error(`${list} has a single page; pick a bigger manufacturer`);
    const cursorPage = `${list}&cursor=${first.page.next_cursor}`;
    // Each coding has its own ETag: the one a client asking for gzip revalidates with.
    const etag = (target: string) => get(target, coded).then((r) => r.headers.etag!);
    const detail = `/v1/modules/${picks.moduleId}`;
    const maker = `/v1/manufacturers/${picks.medianMaker}?include=modules`;
    const kinds: Kind[] = [
      { label: 'list, first page (filtered, sorted)', method: 'GET', target: list, headers: {}, weight: 30 },
      { label: 'list, cursor page', method: 'GET', target: cursorPage, headers: {}, weight: 25 },
      { label: 'module detail', method: 'GET', target: detail, headers: {}, weight: 15 },
      {
        label: 'manufacturer detail (median size), include=modules',
        method: 'GET',
        target: maker,
        headers: {},
        weight: 5,
      },
      {
        label: '304, first page',
        method: 'GET',
        target: list,
        headers: { 'if-none-match': await etag(list) },
        weight: 8,
      },
      {
        label: '304, cursor page',
        method: 'GET',
        target: cursorPage,
        headers: { 'if-none-match': await etag(cursorPage) },
        weight: 5,
      },
      {
        label: '304, detail',
        method: 'GET',
        target: detail,
        headers: { 'if-none-match': await etag(detail) },
        weight: 5,
      },
      { label: 'HEAD, first page', method: 'HEAD', target: list, headers: {}, weight: 1 },
      { label: 'OPTIONS', method: 'OPTIONS', target: list, headers: {}, weight: 1 },
      {
        label: '404, missing module',
        method: 'GET',
        target: `/v1/modules/${picks.missingModuleId}`,
        headers: {},
        weight: 3,
      },
      {
        label: '400, invalid parameter',
        method: 'GET',
        target: '/v1/modules?limit=1000',
        headers: {},
        weight: 2,
      },
      {
        label: '401, unknown key',
        method: 'GET',
        target: list,
        headers: { authorization: `Bearer pk_live_${'U'.repeat(22)}` },
        weight: 0,
      },
      {
        label: '401, malformed header',
        method: 'GET',
        target: list,
        headers: { authorization: 'Token abc' },
        weight: 0,
      },
      { label: '405, POST', method: 'POST', target: list, headers: {}, weight: 0 },
    ];

    progress(`4. counting dependency calls (${kinds.length} request types × ${N})`);
    const rows: {
      kind: Kind;
      counts: Counts;
      ms: number;
      cpuMs: number;
      bytes: number;
      identityBytes: number;
      logBytes: number;
      metricsBytes: number;
      status: number;
    }[] = [];
    for (const kind of kinds) {
      const asked = kind.label.startsWith('401') ? kind.headers : { ...AUTH, ...kind.headers };
      const identityBytes = wireBytes(await call(handle, { ...kind, headers: asked }));
      const headers = { ...asked, ...coded };
      // Warm: fills the key cache (the unknown key's too) and lets the JIT settle on this request's path.
      for (let i = 0; i < 3; i++) await call(handle, { ...kind, headers });
      const before = { ...counts };
      const loggedBefore = { ...logged };
      const times: number[] = [];
      const cpuTimes: number[] = [];
      let last: ProxyResponse | undefined;
      for (let i = 0; i < N; i++) {
        const cpuBefore = process.cpuUsage();
        const started = performance.now();
        last = await call(handle, { ...kind, headers });
        times.push(performance.now() - started);
        const used = process.cpuUsage(cpuBefore);
        cpuTimes.push((used.user + used.system) / 1000);
      }
      const per = zero();
      for (const key of Object.keys(per) as (keyof Counts)[]) per[key] = (counts[key] - before[key]) / N;
      rows.push({
        kind,
        counts: per,
        ms: median(times),
        cpuMs: median(cpuTimes),
        bytes: wireBytes(last!),
        identityBytes,
        logBytes: (logged.bytes - loggedBefore.bytes) / Math.max(1, logged.lines - loggedBefore.lines),
        metricsBytes:
          (logged.metricsBytes - loggedBefore.metricsBytes) / Math.max(1, logged.lines - loggedBefore.lines),
        status: last!.status,
      });
    }

    // Cost per million requests.
    const cost = rows.map((row) => {
      const cpu = row.cpuMs * ASSUMPTIONS.cpuSlowdown;
      const c = row.counts;
      const s3Reads = c.dataReads + c.pointerReads;
      // The key lookup first; then an answer's object reads and the metering write at once, so the longer of
      // the two (proxy/core/handler.ts; the meter's reads after a lost answer are part of the metering).
      const dependencyMs =
        c.keyGets * ASSUMPTIONS.dynamoReadMs +
        Math.max(
          s3Reads * ASSUMPTIONS.s3GetMs,
          c.counterWrites * ASSUMPTIONS.dynamoWriteMs + c.counterReads * ASSUMPTIONS.dynamoReadMs,
        );
      const billedMs = Math.max(1, Math.ceil(cpu + dependencyMs));
      const lambda =
        PRICES.lambdaPerMillion +
        1e6 * (ASSUMPTIONS.lambdaMemoryMb / 1024) * (billedMs / 1000) * PRICES.lambdaArmGbSecond;
      const s3 = s3Reads * PRICES.s3GetPerThousand * 1000;
      const dynamo =
        c.counterWrites * PRICES.dynamoWritePerMillion +
        (c.keyGets * 0.5 + c.counterReads) * PRICES.dynamoReadPerMillion;
      const edge = PRICES.cloudFrontHttpsPer10k * 100 + PRICES.cloudFrontFunctionPerMillion;
      const transfer = ((row.bytes * 1e6) / 1e9) * PRICES.cloudFrontTransferPerGb;
      const logs =
        (((row.logBytes + row.metricsBytes + PLATFORM_LINE_BYTES) * 1e6) / 1e9) * ASSUMPTIONS.logsPerGb;
      return {
        cpu,
        dependencyMs,
        billedMs,
        lambda,
        s3,
        dynamo,
        edge,
        transfer,
        logs,
        total: lambda + s3 + dynamo + edge + transfer + logs,
      };
    });
    const weights = rows.map((r) => r.kind.weight);
    const weightSum = weights.reduce((a, b) => a + b, 0);
    const blend = (pick: (c: (typeof cost)[number]) => number) =>
      cost.reduce((sum, c, i) => sum + pick(c) * weights[i]!, 0) / weightSum;
    const blendRow = (pick: (r: (typeof rows)[number]) => number) =>
      rows.reduce((sum, r, i) => sum + pick(r) * weights[i]!, 0) / weightSum;
    const blendedBytes = blendRow((r) => r.bytes);
    const perRequest: PerRequest = {
      cpuMs: blendRow((r) => r.cpuMs),
      waitMs: blend((c) => c.dependencyMs),
      counterWrites: blendRow((r) => r.counts.counterWrites),
      readUnits: blendRow((r) => r.counts.keyGets * 0.5 + r.counts.counterReads),
      s3Gets: blendRow((r) => r.counts.dataReads + r.counts.pointerReads),
      bytes: blendedBytes,
      logBytes: blendRow((r) => r.logBytes),
      metricsBytes: blendRow((r) => r.metricsBytes),
    };

    const countRow = (c: Counts) => [
      fmt.s(c.dataReads).replace(/\.0$/, ''),
      c.pointerReads.toFixed(2),
      c.keyGets.toFixed(2),
      c.counterWrites.toFixed(2),
      (c.counterReads + c.otherDynamo).toFixed(2),
    ];
    const markdown = [
      `The proxy in the bench process, wired like proxy/app.ts (the object store over s3rver, DynamoKeyStore and DynamoQuotaMeter over dynalite, all through the request path's one client, lean signed requests; CachedKeyStore, 30 s TTL; pointer re-checked every 5 s), with a counting ObjectStore wrapper and a counting DynamoDB transport wrapper. Each request type was sent 3 times to warm the caches, then ${N} times in sequence; the table shows calls per request (means), the median handler time and the median CPU time of a call.`,
      '',
      table(
        [
          'request',
          'status',
          'object reads (data)',
          'pointer re-checks',
          'DynamoDB GetItem (keys)',
          'DynamoDB UpdateItem (counters)',
          'other DynamoDB',
          'handler ms (median, local servers)',
          'proxy CPU ms per request',
          'response bytes (identity)',
          `response bytes (${ASSUMPTIONS.acceptEncoding})`,
          'request log line bytes (fields + metrics)',
        ],
        rows.map((r) => [
          r.kind.label,
          r.status,
          ...countRow(r.counts),
          fmt.ms(r.ms),
          fmt.ms(r.cpuMs),
          fmt.int(r.identityBytes - ASSUMPTIONS.extraHeaderBytes),
          fmt.int(r.bytes - ASSUMPTIONS.extraHeaderBytes),
          `${fmt.int(r.logBytes)} + ${fmt.int(r.metricsBytes)}`,
        ]),
      ),
      '',
      `Clients ask for ${ASSUMPTIONS.acceptEncoding} (the client package's fetch, browsers, \`curl --compressed\`): the blended answer is ${fmt.int(blendedBytes)} B on the wire, ${((100 * blendedBytes) / blendRow((r) => r.identityBytes)).toFixed(0)} % of the ${fmt.int(blendRow((r) => r.identityBytes))} B it would be uncoded (${ASSUMPTIONS.extraHeaderBytes} B of edge headers in both). The request log line (measured: what the proxy's log sink writes for it on Lambda) is ${fmt.int(perRequest.logBytes + perRequest.metricsBytes)} B blended: ${fmt.int(perRequest.logBytes)} B of fields and ${fmt.int(perRequest.metricsBytes)} B of its CloudWatch metrics in the embedded metric format (proxy/log/metrics.ts; an environment's first line carries ${fmt.int(coldMetricsBytes)} B of them, its cold start counted too: once per environment, left out); at the default system log level Lambda adds its START, END and REPORT lines, ${PLATFORM_LINE_BYTES} B (bench/cost-model.ts), ${fmt.int(perRequest.logBytes + perRequest.metricsBytes + PLATFORM_LINE_BYTES)} B in all.`,
      '',
      `First request of a fresh instance (cold key cache and pointer): ${coldCounts.dataReads} data read, ${coldCounts.pointerReads} pointer read, ${coldCounts.keyGets} key GetItem, ${coldCounts.counterWrites} counter UpdateItem${coldCounts.counterWrites === 1 ? '' : 's'}, ${coldCounts.counterReads + coldCounts.otherDynamo} other. ` +
        'In steady state a warm instance adds one conditional pointer GET every 5 s and one key GetItem per key every 30 s; the meter needs a second UpdateItem on the first request of each minute window (an `open` after the optimistic `count` fails; dynalite does not return the failed item, AWS does, which saves a read only in the rare case of a refused request).',
      '',
      '### Cost model per million requests',
      '',
      `Billed Lambda duration = proxy CPU time + waits on dependencies, rounded up to the millisecond. CPU time: the "proxy CPU ms per request" above (median over the ${N} calls of this process's \`process.cpuUsage()\` around each call: the core plus the lean client's work for its S3 and DynamoDB calls — signing, serialising, parsing — but no HTTP server), × ${ASSUMPTIONS.cpuSlowdown.toFixed(2)} because a ${ASSUMPTIONS.lambdaMemoryMb} MB function gets ${ASSUMPTIONS.lambdaMemoryMb}/1769 of a vCPU (Graviton and this EPYC taken as equally fast per core). Dependency waits are assumptions (not measured here): S3 GET ${ASSUMPTIONS.s3GetMs} ms, DynamoDB UpdateItem ${ASSUMPTIONS.dynamoWriteMs} ms, GetItem ${ASSUMPTIONS.dynamoReadMs} ms (in-region p50s); a key lookup comes first, then an answer's object reads (one after the other) and the metering write at the same time, so the longer of the two counts (proxy/core/handler.ts). Memory ${ASSUMPTIONS.lambdaMemoryMb} MB (infra/props.ts default), arm64. Transfer: ${ASSUMPTIONS.acceptEncoding} response bytes + ${ASSUMPTIONS.extraHeaderBytes} B of edge headers. Logs: the request line with its metrics and Lambda's platform lines at $${ASSUMPTIONS.logsPerGb} per GB ingested. Every request is one CloudFront HTTPS request and one viewer-request function invocation. Always-free allowances are monthly, not per million: they are applied in the month table below, not here.`,
      '',
      table(
        [
          'request',
          'CPU ms on Lambda',
          'billed ms',
          'Lambda',
          'S3',
          'DynamoDB',
          'CloudFront requests + function',
          'data transfer',
          'CloudWatch Logs',
          'total per 1M',
        ],
        [
          ...rows.map((r, i) => {
            const c = cost[i]!;
            return [
              r.kind.label,
              fmt.ms(c.cpu),
              c.billedMs,
              fmt.usd(c.lambda),
              fmt.usd(c.s3),
              fmt.usd(c.dynamo),
              fmt.usd(c.edge),
              fmt.usd(c.transfer),
              fmt.usd(c.logs),
              `**${fmt.usd(c.total)}**`,
            ];
          }),
          [
            `blended (weights ${rows
              .filter((r) => r.kind.weight > 0)
              .map((r) => r.kind.weight)
              .join('/')} over the rows above)`,
            fmt.ms(blend((c) => c.cpu)),
            fmt.s(blend((c) => c.billedMs)),
            fmt.usd(blend((c) => c.lambda)),
            fmt.usd(blend((c) => c.s3)),
            fmt.usd(blend((c) => c.dynamo)),
            fmt.usd(blend((c) => c.edge)),
            fmt.usd(blend((c) => c.transfer)),
            fmt.usd(blend((c) => c.logs)),
            `**${fmt.usd(blend((c) => c.total))}**`,
          ],
        ],
      ),
      '',
      'A 405 is answered by the CloudFront viewer-request function before Lambda in the deployed stack (infra/viewer-request.js); its row above prices it as if it reached Lambda.',
      '',
      'Prices (us-east-1 / US edge, list prices):',
      '',
      ...PRICE_SOURCES.map((s) => `- ${s}`),
      '',
      '### Cost per month against an always-on deployment',
      '',
      costComparisonMarkdown(perRequest, { ...DEFAULT_SETTINGS, memoryMb: ASSUMPTIONS.lambdaMemoryMb }),
    ].join('\n');
    const listRow = rows[0]!;
    return {
      markdown,
      commands: [],
      targets: [
        {
          name: 'Per request: ≤ 2 object reads, 1 DynamoDB write (steady state)',
          target: 'design budget',
          measured: `list page: ${listRow.counts.dataReads} read, ${listRow.counts.counterWrites.toFixed(2)} writes; max over types: ${Math.max(...rows.map((r) => r.counts.dataReads))} reads, ${Math.max(...rows.map((r) => r.counts.counterWrites)).toFixed(2)} writes`,
          ok: rows.every((r) => r.counts.dataReads <= 2 && r.counts.counterWrites <= 1.1),
        },
      ],
    };
  } finally {
    wired.close();
  }
}
