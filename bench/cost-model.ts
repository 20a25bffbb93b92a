/**
 * What a month costs at 1 M, 10 M, 100 M and 1 B requests: this stack (CloudFront, Lambda, DynamoDB, S3,
 * CloudWatch Logs: per-request figures measured by section 4) side by side with the always-on deployment an
 * operator would weigh — containers behind a load balancer (ECS on Fargate, an Application Load Balancer) and a
 * managed PostgreSQL (RDS, Multi-AZ) — sized for the load, from published prices. Both sides are priced alike:
 * the always-free allowances each would get alone in an account (CloudFront's, Lambda's, DynamoDB's, CloudWatch
 * Logs', the regional 100 GB of transfer), none of the 12-month or credit offers; the bytes clients ask for
 * (gzip); one request log line per request on both. This stack is priced with its settings (the proxy's memory,
 * the counters table's capacity mode, Lambda's platform log lines), so the table shows what the high-volume
 * settings buy. Pure: section 4 (calls.ts) feeds it its measured figures and prints its tables; every price and
 * assumption is below, with its source.
 */
import { fmt, table } from './stats.js';

/** Hours in a month, as AWS's price pages count them. */
const MONTH_HOURS = 730;
const MONTH_SECONDS = MONTH_HOURS * 3600;
const GB = 1e9;

/** CloudFront, United States, Mexico and Canada (the default price class's cheapest edge). */
export const CLOUDFRONT = {
  httpsPer10k: 0.01,
  functionPerMillion: 0.1,
  /** Data transfer out to the internet per GB, by monthly tier (GB up to which the price holds). */
  transferTiers: [
    [10_000, 0.085],
    [50_000, 0.08],
    [150_000, 0.06],
    [Number.POSITIVE_INFINITY, 0.04],
  ] as const,
  /** Always free, every month, pay-as-you-go: 1 TB out, 10 M HTTP(S) requests, 2 M function invocations. */
  free: { gb: 1_000, requests: 10e6, functions: 2e6 },
  /**
   * The flat-rate plans (since 18 November 2025): one monthly price per distribution for delivery, AWS WAF,
   * DDoS protection, Route 53 DNS, CloudWatch Logs ingestion of its own logs and CloudFront Functions, no
   * overage charges (past the allowance AWS may slow the distribution down or ask for another plan).
   */
  plans: [
    { name: 'Free plan', usd: 0, requests: 1e6, gb: 100 },
    { name: 'Pro plan', usd: 15, requests: 10e6, gb: 50_000 },
    { name: 'Business plan', usd: 200, requests: 125e6, gb: 50_000 },
    { name: 'Premium plan', usd: 1_000, requests: 500e6, gb: 50_000 },
  ],
};

/** Lambda (arm64), DynamoDB, S3 and CloudWatch Logs, us-east-1. */
export const SERVERLESS = {
  lambdaPerMillion: 0.2,
  lambdaArmGbSecond: 0.0000133334,
  /** Always free, every month: 1 M requests and 400,000 GB-seconds. */
  lambdaFree: { requests: 1e6, gbSeconds: 400_000 },
  /** A full vCPU at 1,769 MB; below, CPU-bound work runs proportionally longer. */
  fullVcpuMb: 1769,
  dynamoWritePerMillion: 0.625,
  dynamoReadPerMillion: 0.125,
  wcuHour: 0.00065,
  rcuHour: 0.00013,
  /** Always free, every month, per account and region: 25 WCU and 25 RCU of provisioned capacity. */
  dynamoFreeWcu: 25,
  s3GetPerThousand: 0.0004,
  /** CloudWatch Logs ingestion per GB (Standard class; Lambda's own logs at this price up to 10 TB a month). */
  logsPerGb: 0.5,
  /** Always free, every month: 5 GB of log data. */
  logsFreeGb: 5,
  /** CloudWatch custom metrics per metric-month (first 10,000), by the hour a metric gets data. */
  metricMonth: 0.3,
  /** Always free, every month: 10 custom metrics. */
  freeMetrics: 10,
  /**
   * The request lines' custom metrics at most (docs/operating.md, "The dashboard"): 7 routes × 5 status classes,
   * 5 classes, 5 classes of the one live version; under steady traffic on every route and class, so an upper
   * bound at any volume.
   */
  requestMetrics: 7 * 5 + 5 + 5,
};

/**
 * The lines Lambda writes for each invocation at the default system log level (INFO, text format), as a
 * request of the proxy shows them: what `proxySystemLogLevel=WARN` leaves out.
 */
export const PLATFORM_LINES = [
  'START RequestId: 3f6e0b9a-2c1d-4e8f-9a7b-5c4d3e2f1a0b Version: $LATEST',
  'END RequestId: 3f6e0b9a-2c1d-4e8f-9a7b-5c4d3e2f1a0b',
  'REPORT RequestId: 3f6e0b9a-2c1d-4e8f-9a7b-5c4d3e2f1a0b\tDuration: 12.84 ms\tBilled Duration: 13 ms\tMemory Size: 512 MB\tMax Memory Used: 96 MB\t',
];
export const PLATFORM_LINE_BYTES = PLATFORM_LINES.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);

/** The always-on deployment's prices, us-east-1, on demand. */
export const ALWAYS_ON = {
  /** ECS on Fargate, Linux/ARM (Graviton). */
  fargateVcpuHour: 0.03238,
  fargateGbHour: 0.00356,
  albHour: 0.0225,
  albLcuHour: 0.008,
  /** An LCU is the highest of: 1 GB processed an hour (containers as targets), 25 new connections a second… */
  albGbPerLcu: 1,
  albNewConnectionsPerLcu: 25,
  /** Each public IPv4 address: the ALB's (one per Availability Zone) and each task's (public subnets, no NAT). */
  publicIpv4Hour: 0.005,
  /** Data transfer out to the internet (EC2, ELB), first 10 TB a month, after the always-free 100 GB. */
  internetPerGb: 0.09,
  internetFreeGb: 100,
  /** RDS for PostgreSQL, Multi-AZ (twice the Single-AZ rate: a standby in a second zone). */
  rdsClasses: [
    { name: 'db.t4g.micro', multiAzHour: 0.032, maxPeakRps: 25 },
    { name: 'db.t4g.small', multiAzHour: 0.064, maxPeakRps: 100 },
    { name: 'db.t4g.medium', multiAzHour: 0.13, maxPeakRps: 300 },
    { name: 'db.m6g.large', multiAzHour: 0.318, maxPeakRps: 1_500 },
  ],
  /** gp3 storage per GB-month, twice for Multi-AZ. */
  rdsGp3GbMonth: 0.115,
};

/** What the always-on deployment is sized by (not measured here: assumptions, written down). */
export const SIZING = {
  /** The busiest hour carries this many times the month's average rate. */
  peakToAverage: 3,
  /**
   * Requests per second one Fargate vCPU serves at the busiest hour: half of what one core of this machine gave
   * the PostgreSQL + fastify + pg peer of issue 31 (1,569 req/s on 2 cores, PostgreSQL included), for headroom.
   */
  rpsPerVcpu: 400,
  /** Two tasks, in two Availability Zones, whatever the load. */
  minTasks: 2,
  /** Fargate's task shapes (vCPU, GB), smallest first. */
  taskShapes: [
    [0.25, 0.5],
    [0.5, 1],
    [1, 2],
    [2, 4],
    [4, 8],
  ] as const,
  /** The database: the catalogue (~25,000 modules), keys and counters, with room. */
  rdsStorageGb: 20,
  /** Clients keep connections alive: a new one every this many requests (the ALB's connection LCUs). */
  requestsPerConnection: 10,
};

/** What both deployments pay whatever the traffic: the alarms and the cursor secret (docs/operating.md). */
export const FIXED_MONTH_USD = 1.3;

export const COST_SOURCES = [
  'Fargate, Linux/ARM, us-east-1: $0.03238 per vCPU-hour, $0.00356 per GB-hour — aws.amazon.com/fargate/pricing, as tabulated by vantage.sh "AWS Fargate Pricing Explained" and cloudburn.io (rates of March 2026).',
  'Application Load Balancer, us-east-1: $0.0225 per ALB-hour, $0.008 per LCU-hour; an LCU is 25 new connections/s, 3,000 active connections/min, 1 GB processed per hour (containers as targets) or 1,000 rule evaluations/s, whichever is highest — aws.amazon.com/elasticloadbalancing/pricing, as quoted by cloud-horizons.com (May 2026) and handbook.vantage.sh.',
  'RDS for PostgreSQL, us-east-1, on demand: db.t4g.micro $0.016, db.t4g.small $0.032, db.t4g.medium $0.065 per hour Single-AZ, twice that Multi-AZ — infratally.com "AWS RDS pricing explained" (2026); db.m6g.large $0.159 Single-AZ, $0.318 Multi-AZ — gitlab-environment-toolkit issue 236; gp3 storage $0.115 per GB-month (per instance, so twice Multi-AZ) — usage.ai RDS pricing (June 2026).',
  'Public IPv4 addresses: $0.005 per address-hour since 1 February 2024, for the load balancer (one per zone) and every task with a public address — aws.amazon.com/blogs/aws/new-aws-public-ipv4-address-charge-public-ip-insights (announced 2023-07-28).',
  'Data transfer out to the internet from a region (EC2, ELB): the first 100 GB a month free (always, aggregated over the account), then $0.09 per GB up to 10 TB — aws.amazon.com/ec2/pricing/on-demand, as quoted by wring.co (2026) and AWS re:Post.',
  'CloudFront pay-as-you-go (US, Mexico, Canada): $0.0100 per 10,000 HTTPS requests, $0.085/$0.080/$0.060/$0.040 per GB out for the first 10 TB/next 40 TB/next 100 TB/beyond, CloudFront Functions $0.10 per million; always free every month: 1 TB out, 10 M HTTP(S) requests, 2 M CloudFront Functions invocations — aws.amazon.com/cloudfront/pricing, and bybowu.com (2025-11-30) for the free terabyte.',
  'CloudFront flat-rate plans (launched 2025-11-18), per distribution and month: Free $0 (1 M requests, 100 GB), Pro $15 (10 M, 50 TB), Business $200 (125 M, 50 TB), Premium $1,000 (500 M, 50 TB); AWS WAF (a web ACL is required and included), DDoS protection, Route 53 DNS, CloudWatch Logs ingestion of the distribution\'s own logs and CloudFront Functions included; no overage charges, requests blocked by WAF not counted; a plan change takes effect the next billing cycle; not with Lambda@Edge, real-time logs or legacy features (origin access identities, ForwardedValues) — aws.amazon.com/cloudfront/pricing and the CloudFront Developer Guide, "flat-rate pricing plans", as summarised by bybowu.com (2025-11-30), duckbillhq.com and finops.com.py.',
  'Lambda (arm64): $0.20 per million requests, $0.0000133334 per GB-second; always free every month: 1 M requests and 400,000 GB-seconds — aws.amazon.com/lambda/pricing (archived copy of 2026-06-18).',
  'DynamoDB, us-east-1: on demand $0.625 per million write and $0.125 per million read request units (since 1 November 2024); provisioned $0.00065 per WCU-hour and $0.00013 per RCU-hour, with auto scaling at no charge; always free per account and region: 25 WCU, 25 RCU, 25 GB — aws.amazon.com/dynamodb/pricing ("Free tier … does not expire") and aws.amazon.com/dynamodb/pricing/provisioned.',
  "CloudWatch Logs, us-east-1: ingestion $0.50 per GB (Standard class; Lambda's logs are tiered since 1 May 2025, at this price for the first 10 TB a month), storage $0.03 per GB-month (compressed; a 30-day retention keeps about a month, a few cents here), always free every month: 5 GB; custom metrics $0.30 per metric-month (the first 10,000), 10 always free — aws.amazon.com/cloudwatch/pricing, as quoted by hykell.com (2026) and duckbillgroup.com (May 2025).",
  "Looked up on 2026-11-27 in stored copies of these pages (no live AWS price API), us-east-1 and CloudFront's US/Mexico/Canada edge. Free offers that end (12-month tiers, the credits of accounts opened since July 2025) are left out on both sides.",
];

/** What one request of the measured mix does, blended over the mix (section 4 measures each figure). */
export interface PerRequest {
  /** The proxy's CPU per request at a full vCPU, ms. */
  cpuMs: number;
  /** Waits on S3 and DynamoDB per request, ms (in-region latencies × calls: assumptions). */
  waitMs: number;
  /** Metering writes (UpdateItem, 1 WCU each) per request. */
  counterWrites: number;
  /** Read units per request (key lookups past the cache, eventually consistent: ½ unit each). */
  readUnits: number;
  /** S3 GETs per request (a warm container reads none for hot requests). */
  s3Gets: number;
  /** Bytes on the wire as clients ask for them (gzip), headers included. */
  bytes: number;
  /** The request's one log line without its metrics, its newline included. */
  logBytes: number;
  /**
   * What the line's CloudWatch metrics add to it on Lambda (proxy/log/metrics.ts: the status class, the function
   * version and the embedded-metric-format directive of a warm environment's line). This stack only: the
   * always-on deployment logs the line without them, as its load balancer's own metrics (requests and target
   * answers by status class, response time percentiles) come free of log bytes.
   */
  metricsBytes: number;
}

/** This stack's settings that move its price (infra/props.ts). */
export interface StackSettings {
  /** The proxy function's memory (`memorySize`). */
  memoryMb: number;
  /** `countersCapacity`. */
  countersCapacity: 'on-demand' | 'provisioned';
  /** The least the counters table is provisioned with (`countersMinWriteCapacity`). */
  countersMinWriteCapacity: number;
  /** Auto scaling's target utilisation of the counters table's writes, in percent. */
  countersTargetPercent: number;
  /** Lambda's START/END/REPORT lines per invocation: `proxySystemLogLevel` INFO (true) or WARN (false). */
  platformLogs: boolean;
}

/** The stack as it deploys by default. */
export const DEFAULT_SETTINGS: StackSettings = {
  memoryMb: 512,
  countersCapacity: 'on-demand',
  countersMinWriteCapacity: 25,
  countersTargetPercent: 70,
  platformLogs: true,
};

/** `countersCapacity=provisioned` and `proxySystemLogLevel=WARN` (docs/operating.md, "Cost at volume"). */
export const HIGH_VOLUME_SETTINGS: StackSettings = {
  ...DEFAULT_SETTINGS,
  countersCapacity: 'provisioned',
  platformLogs: false,
};

interface Edge {
  label: string;
  usd: number;
}

/** CloudFront's price for a month, pay-as-you-go, with or without a viewer-request function, free tier applied. */
function cloudFrontPayg(requests: number, gb: number, withFunction: boolean): number {
  let transfer = 0;
  let from = 0;
  for (const [upTo, price] of CLOUDFRONT.transferTiers) {
    if (gb <= from) break;
    transfer += (Math.min(gb, upTo) - from) * price;
    from = upTo;
  }
  // The free terabyte comes off the first tier.
  transfer = Math.max(0, transfer - Math.min(gb, CLOUDFRONT.free.gb) * CLOUDFRONT.transferTiers[0][1]);
  const functions = withFunction
    ? (Math.max(0, requests - CLOUDFRONT.free.functions) / 1e6) * CLOUDFRONT.functionPerMillion
    : 0;
  return (
    (Math.max(0, requests - CLOUDFRONT.free.requests) / 1e4) * CLOUDFRONT.httpsPer10k + functions + transfer
  );
}

/** The cheapest CloudFront for a month: pay-as-you-go, or the smallest flat-rate plan that covers it. */
export function cheapestCloudFront(requests: number, gb: number, withFunction: boolean): Edge {
  const options: Edge[] = [
    { label: 'CloudFront, pay as you go', usd: cloudFrontPayg(requests, gb, withFunction) },
  ];
  for (const plan of CLOUDFRONT.plans)
    if (requests <= plan.requests && gb <= plan.gb)
      options.push({ label: `CloudFront ${plan.name}`, usd: plan.usd });
  return options.reduce((best, option) => (option.usd < best.usd ? option : best));
}

/** CloudWatch Logs for a month of `bytes` ingested. */
function logsMonth(bytes: number): number {
  return Math.max(0, bytes / GB - SERVERLESS.logsFreeGb) * SERVERLESS.logsPerGb;
}

/** The proxy's billed ms per request at `memoryMb`: CPU slowed below a full vCPU, the waits, rounding up. */
export function billedMs(per: PerRequest, memoryMb: number): number {
  return per.cpuMs * Math.max(1, SERVERLESS.fullVcpuMb / memoryMb) + per.waitMs + 0.5;
}

/** Lambda for a month of `requests`, free tier applied. */
function lambdaMonth(requests: number, per: PerRequest, memoryMb: number): number {
  const gbSeconds = ((requests * billedMs(per, memoryMb)) / 1000) * (memoryMb / 1024);
  return (
    (Math.max(0, requests - SERVERLESS.lambdaFree.requests) / 1e6) * SERVERLESS.lambdaPerMillion +
    Math.max(0, gbSeconds - SERVERLESS.lambdaFree.gbSeconds) * SERVERLESS.lambdaArmGbSecond
  );
}

/**
 * The counters table's writes for a month, and the keys table's reads (on demand). Provisioned, auto scaling
 * keeps the provisioned capacity at the target utilisation of the load as it moves through the day, so the
 * month's provisioned capacity averages the month's average rate over the target, never below the minimum.
 */
export function dynamoMonth(requests: number, per: PerRequest, settings: StackSettings): number {
  const reads = ((requests * per.readUnits) / 1e6) * SERVERLESS.dynamoReadPerMillion;
  const writes = requests * per.counterWrites;
  if (settings.countersCapacity === 'on-demand')
    return reads + (writes / 1e6) * SERVERLESS.dynamoWritePerMillion;
  const wcu = Math.max(
    settings.countersMinWriteCapacity,
    writes / MONTH_SECONDS / (settings.countersTargetPercent / 100),
  );
  return reads + Math.max(0, wcu - SERVERLESS.dynamoFreeWcu) * MONTH_HOURS * SERVERLESS.wcuHour;
}

export interface ServerlessMonth {
  edge: Edge;
  lambda: number;
  /** DynamoDB and S3. */
  storage: number;
  logs: number;
  /** The request lines' custom metrics (an upper bound, whatever the volume). */
  metrics: number;
  total: number;
}

/** This stack for a month of `requests` (every request reaches CloudFront and its viewer function). */
export function serverlessMonth(
  requests: number,
  per: PerRequest,
  settings: StackSettings = DEFAULT_SETTINGS,
): ServerlessMonth {
  const edge = cheapestCloudFront(requests, (requests * per.bytes) / GB, true);
  const lambda = lambdaMonth(requests, per, settings.memoryMb);
  const storage =
    dynamoMonth(requests, per, settings) + ((requests * per.s3Gets) / 1000) * SERVERLESS.s3GetPerThousand;
  const lineBytes = per.logBytes + per.metricsBytes + (settings.platformLogs ? PLATFORM_LINE_BYTES : 0);
  const logs = logsMonth(requests * lineBytes);
  const metrics =
    requests > 0
      ? Math.max(0, SERVERLESS.requestMetrics - SERVERLESS.freeMetrics) * SERVERLESS.metricMonth
      : 0;
  return {
    edge,
    lambda,
    storage,
    logs,
    metrics,
    total: edge.usd + lambda + storage + logs + metrics + FIXED_MONTH_USD,
  };
}

export interface AlwaysOnMonth {
  averageRps: number;
  peakRps: number;
  tasks: number;
  shape: readonly [number, number];
  containers: number;
  /** The load balancer's hours and LCUs, and the public IPv4 addresses. */
  network: number;
  database: { name: string; usd: number };
  edge: Edge;
  logs: number;
  total: number;
}

/** The load balancer and its addresses for a month of `requests` and `gb` processed, with `tasks` targets. */
function albMonth(requests: number, gb: number, tasks: number): number {
  // LCUs by the hour's highest dimension: processed bytes or new connections (both at the average rate).
  const lcus = Math.max(
    gb / MONTH_HOURS / ALWAYS_ON.albGbPerLcu,
    requests / SIZING.requestsPerConnection / MONTH_SECONDS / ALWAYS_ON.albNewConnectionsPerLcu,
  );
  const addresses = 2 + tasks;
  return (
    ALWAYS_ON.albHour * MONTH_HOURS +
    lcus * MONTH_HOURS * ALWAYS_ON.albLcuHour +
    addresses * ALWAYS_ON.publicIpv4Hour * MONTH_HOURS
  );
}

/**
 * The always-on deployment for a month of `requests` like this stack's (their bytes on the wire, their log
 * line without this stack's metrics), sized for its busiest hour.
 */
export function alwaysOnMonth(requests: number, per: Pick<PerRequest, 'bytes' | 'logBytes'>): AlwaysOnMonth {
  const averageRps = requests / MONTH_SECONDS;
  const peakRps = averageRps * SIZING.peakToAverage;
  const vcpus = peakRps / SIZING.rpsPerVcpu;
  // The smallest shape that serves the peak on the minimum number of tasks, else more of the largest.
  const shape =
    SIZING.taskShapes.find(([vcpu]) => vcpu * SIZING.minTasks >= vcpus) ?? SIZING.taskShapes.at(-1)!;
  const tasks = Math.max(SIZING.minTasks, Math.ceil(vcpus / shape[0]));
  const containers =
    tasks * (shape[0] * ALWAYS_ON.fargateVcpuHour + shape[1] * ALWAYS_ON.fargateGbHour) * MONTH_HOURS;
  const gb = (requests * per.bytes) / GB;
  const rds = ALWAYS_ON.rdsClasses.find((c) => peakRps <= c.maxPeakRps) ?? ALWAYS_ON.rdsClasses.at(-1)!;
  const database = {
    name: rds.name,
    usd: rds.multiAzHour * MONTH_HOURS + 2 * SIZING.rdsStorageGb * ALWAYS_ON.rdsGp3GbMonth,
  };
  // Its cheapest edge: the load balancer straight to the internet, or CloudFront in front (origin transfer from
  // an AWS origin is free; no viewer function is needed).
  const direct: Edge = {
    label: 'ALB to the internet',
    usd: Math.max(0, gb - ALWAYS_ON.internetFreeGb) * ALWAYS_ON.internetPerGb,
  };
  const front = cheapestCloudFront(requests, gb, false);
  const edge = front.usd < direct.usd ? front : direct;
  // The containers log the same request line to CloudWatch Logs (no platform lines, no embedded metrics).
  const logs = logsMonth(requests * per.logBytes);
  const network = albMonth(requests, gb, tasks);
  return {
    averageRps,
    peakRps,
    tasks,
    shape,
    containers,
    network,
    database,
    edge,
    logs,
    total: containers + network + database.usd + edge.usd + logs + FIXED_MONTH_USD,
  };
}

/**
 * The monthly volume from which the always-on deployment costs less, searched on a fine logarithmic grid
 * (100 k to 10 B requests); undefined when it never does there.
 */
export function crossover(per: PerRequest, settings: StackSettings = DEFAULT_SETTINGS): number | undefined {
  for (let exponent = 5; exponent <= 10; exponent += 0.005) {
    const requests = 10 ** exponent;
    if (alwaysOnMonth(requests, per).total < serverlessMonth(requests, per, settings).total) return requests;
  }
  return undefined;
}

/** A range of monthly volumes where this stack costs more than the always-on deployment, and by how much. */
export interface DearerBand {
  from: number;
  /** The last volume of the scan where it still costs more. */
  to: number;
  /** The widest gap in the band: at which volume, in dollars a month and as a share of the always-on month. */
  worst: { requests: number; usd: number; share: number; database: string };
}

/**
 * Where this stack costs more than the always-on deployment up to `upTo` requests a month, scanned in steps of
 * 0.5 M. `theirs` is the always-on deployment's request (by default the same bytes and line).
 * @example dearerBands(per, HIGH_VOLUME_SETTINGS) // → [{ from: 71.5e6, to: 87.5e6, worst: { … } }]
 */
export function dearerBands(
  per: PerRequest,
  settings: StackSettings,
  upTo = 100e6,
  theirs: Pick<PerRequest, 'bytes' | 'logBytes'> = per,
): DearerBand[] {
  const bands: DearerBand[] = [];
  let open: DearerBand | undefined;
  for (let requests = 0.5e6; requests <= upTo; requests += 0.5e6) {
    const ours = serverlessMonth(requests, per, settings).total;
    const them = alwaysOnMonth(requests, theirs);
    if (ours <= them.total) {
      open = undefined;
      continue;
    }
    const gap = {
      requests,
      usd: ours - them.total,
      share: ours / them.total - 1,
      database: them.database.name,
    };
    if (!open) {
      open = { from: requests, to: requests, worst: gap };
      bands.push(open);
    }
    open.to = requests;
    if (gap.usd > open.worst.usd) open.worst = gap;
  }
  return bands;
}

/**
 * The volume from which the always-on deployment costs less at every volume of the grid up to 10 B (after the
 * last band where this stack is cheaper again); undefined when it never does there.
 */
export function crossoverForGood(
  per: PerRequest,
  settings: StackSettings = DEFAULT_SETTINGS,
): number | undefined {
  let from: number | undefined;
  for (let exponent = 10; exponent >= 5; exponent -= 0.005) {
    const requests = 10 ** exponent;
    if (alwaysOnMonth(requests, per).total >= serverlessMonth(requests, per, settings).total) break;
    from = requests;
  }
  return from;
}

const VOLUMES = [1e6, 10e6, 100e6, 1e9];
const volume = (n: number) => (n >= 1e9 ? `${n / 1e9} B` : `${fmt.int(n / 1e6)} M`);
const usd = (n: number) => `$${n < 100 ? n.toFixed(2) : fmt.int(Math.round(n))}`;
const crossoverText = (at: number | undefined) =>
  at === undefined ? 'beyond 10 B' : `about ${volume(Math.round(at / 1e6) * 1e6)}`;

/** One row of the month table: this stack's parts and month, the always-on deployment's, their ratio. */
function monthRow(requests: number, per: PerRequest, settings: StackSettings): string[] {
  const ours = serverlessMonth(requests, per, settings);
  const theirs = alwaysOnMonth(requests, per);
  return [
    volume(requests),
    `${usd(ours.edge.usd)} (${ours.edge.label.replace('CloudFront ', '')})`,
    usd(ours.lambda),
    usd(ours.storage),
    usd(ours.logs + ours.metrics),
    `**${usd(ours.total)}**`,
    `${usd(theirs.containers)} (${theirs.tasks} × ${theirs.shape[0]} vCPU)`,
    usd(theirs.network),
    `${usd(theirs.database.usd)} (${theirs.database.name})`,
    `${usd(theirs.edge.usd + theirs.logs)}`,
    `**${usd(theirs.total)}**`,
    fmt.x(theirs.total / ours.total),
  ];
}

const MONTH_HEADER = [
  'requests / month',
  'edge',
  'Lambda',
  'DynamoDB + S3',
  'logs + metrics',
  'this stack',
  'always-on: containers',
  'ALB + IPv4',
  'PostgreSQL',
  'edge + logs',
  'always-on',
  'always-on / this stack',
];

const millions = (n: number) => `${(n / 1e6).toFixed(n % 1e6 === 0 ? 0 : 1)} M`;
const bandText = (b: DearerBand) =>
  `from ${millions(b.from)} to ${millions(b.to)} (by up to ${usd(b.worst.usd)} a month, ${(100 * b.worst.share).toFixed(0)} %, at ${millions(b.worst.requests)}, the always-on database a ${b.worst.database})`;

/** The goal of issue 38: no dearer than the always-on deployment up to 100 M a month with `settings`. */
function goalText(per: PerRequest, settings: StackSettings): string {
  const bands = dearerBands(per, settings);
  const said = bands.length === 0 ? 'nowhere' : bands.map(bandText).join(' and ');
  return `Up to 100 M a month, with the high-volume settings this stack costs more ${said}.`;
}

/** Section 4's comparison: the month at four volumes with each settings, the crossovers, the assumptions. */
export function costComparisonMarkdown(per: PerRequest, settings: StackSettings = DEFAULT_SETTINGS): string {
  const highVolume: StackSettings = { ...HIGH_VOLUME_SETTINGS, memoryMb: settings.memoryMb };
  const at = {
    default: crossover(per, settings),
    highVolume: crossover(per, highVolume),
    forGood: crossoverForGood(per, highVolume),
  };
  const lines = PLATFORM_LINE_BYTES;
  return [
    `Per request of the blended mix above (the bytes clients ask for: gzip), this stack's proxy bills ${fmt.ms(billedMs(per, settings.memoryMb))} ms at ${settings.memoryMb} MB, writes ${per.counterWrites.toFixed(2)} counter item, sends ${fmt.int(per.bytes)} B and logs a ${fmt.int(per.logBytes + per.metricsBytes)}-byte request line: ${fmt.int(per.logBytes)} B of fields and ${fmt.int(per.metricsBytes)} B of its CloudWatch metrics (plus ${lines} B of Lambda's START/END/REPORT lines at the default system log level); the metrics' ${SERVERLESS.requestMetrics} custom metrics at most are ${usd(serverlessMonth(1, per, settings).metrics)} a month past the free 10, whatever the volume. ` +
      `CloudFront is priced for each month as the cheaper of pay-as-you-go (its always-free allowance applied) and the smallest flat-rate plan whose allowance covers it. The always-on deployment: ECS on Fargate (ARM) behind an Application Load Balancer, and RDS for PostgreSQL Multi-AZ, sized for the busiest hour (${SIZING.peakToAverage}× the month's average rate; ${SIZING.rpsPerVcpu} requests/s per vCPU, at least ${SIZING.minTasks} tasks in two zones; the smallest RDS class for the peak, ${SIZING.rdsStorageGb} GB gp3), its edge the cheaper of the ALB straight to the internet and CloudFront in front, and the same request line logged per request, without the metrics (its load balancer's own metrics count answers by status class and time them at no log cost). Both pay ${usd(FIXED_MONTH_USD)} a month of alarms and the cursor secret; neither price includes people's time.`,
    '',
    `**Default settings** (counters on demand, Lambda's platform lines logged):`,
    '',
    table(
      MONTH_HEADER,
      VOLUMES.map((requests) => monthRow(requests, per, settings)),
    ),
    '',
    `**High-volume settings** (\`countersCapacity=provisioned\`: auto scaling at ${highVolume.countersTargetPercent} % of the writes, at least ${highVolume.countersMinWriteCapacity} WCU; \`proxySystemLogLevel=WARN\`: no START/END/REPORT lines):`,
    '',
    table(
      MONTH_HEADER,
      VOLUMES.map((requests) => monthRow(requests, per, highVolume)),
    ),
    '',
    `**Crossover: with the default settings the always-on deployment costs less from ${crossoverText(at.default)} requests a month; with the high-volume settings from ${crossoverText(at.highVolume)}, and at every volume from ${crossoverText(at.forGood)}** (a scan of this model in steps of 1.2 %). ${goalText(per, highVolume)} ` +
      `Below it this stack wins by its idle month (${usd(serverlessMonth(0, per, settings).total)} against ${usd(alwaysOnMonth(0, per).total)} for two tasks, the load balancer and a Multi-AZ database that run with no traffic); above it the per-request fees dominate — CloudFront's requests and viewer function ($1.10 per million past the free allowance) and the metering write (on demand $0.625 per million; provisioned, ${usd((1e6 / MONTH_SECONDS / (highVolume.countersTargetPercent / 100)) * MONTH_HOURS * SERVERLESS.wcuHour)} per million at the target utilisation). ` +
      `At 1 B requests a month this stack costs ${usd(serverlessMonth(1e9, per, settings).total / 1e3)} per million requests by default, ${usd(serverlessMonth(1e9, per, highVolume).total / 1e3)} with the high-volume settings, the always-on deployment ${usd(alwaysOnMonth(1e9, per).total / 1e3)}.`,
    '',
    "What the model leaves out: an always-on deployment sized for 3× the average rate drops requests in a burst beyond that unless it scales out in time; this stack scales per request within the reserved concurrency, but a provisioned counters table answers a burst beyond its capacity and DynamoDB's burst credit (up to 300 s of unused capacity) with throttled writes, which the proxy refuses as `503 quota_unavailable` until auto scaling catches up (minutes) — on-demand takes any burst up to twice the previous peak at once. Its Multi-AZ database is one writer, and a metering write per request is 100–1,200 writes a second at the busiest hour of 100 M–1 B requests; patching, backups and failover drills are people's time. Reserved instances or Savings Plans (up to ~50 % on Fargate and RDS for one to three years) move the crossover down; DynamoDB reserved capacity (for provisioned tables) moves it up.",
    '',
    'Prices:',
    '',
    ...COST_SOURCES.map((source) => `- ${source}`),
    '',
  ].join('\n');
}
