/**
 * What a month costs at 1 M, 10 M, 100 M and 1 B requests: this stack (CloudFront, Lambda, DynamoDB, S3:
 * per-request costs measured by section 4) side by side with the always-on deployment an operator would weigh
 * — containers behind a load balancer (ECS on Fargate, an Application Load Balancer) and a managed PostgreSQL
 * (RDS, Multi-AZ) — sized for the load, from published prices. Pure: section 4 (calls.ts) feeds it its
 * measured figures and prints its tables; every price and assumption is below, with its source.
 */
import { fmt, table } from './stats.js';

/** Hours in a month, as AWS's price pages count them. */
const MONTH_HOURS = 730;
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
  /**
   * The flat-rate plans (since 18 November 2025): one monthly price per distribution for delivery, AWS WAF,
   * DDoS protection, Route 53 DNS, CloudWatch Logs ingestion and CloudFront Functions, no overage charges
   * (past the allowance AWS may slow the distribution down or ask for another plan).
   */
  plans: [
    { name: 'Free plan', usd: 0, requests: 1e6, gb: 100 },
    { name: 'Pro plan', usd: 15, requests: 10e6, gb: 50_000 },
    { name: 'Business plan', usd: 200, requests: 125e6, gb: 50_000 },
    { name: 'Premium plan', usd: 1_000, requests: 500e6, gb: 50_000 },
  ],
};

/** The always-on deployment's prices, us-east-1, on demand. */
export const ALWAYS_ON = {
  /** ECS on Fargate, Linux/ARM (Graviton). */
  fargateVcpuHour: 0.03238,
  fargateGbHour: 0.00356,
  albHour: 0.0225,
  albLcuHour: 0.008,
  /** One LCU-hour per GB the ALB processes (for containers as targets), the dimension that dominates here. */
  albGbPerLcu: 1,
  /** Each public IPv4 address: the ALB's (one per Availability Zone) and each task's (public subnets, no NAT). */
  publicIpv4Hour: 0.005,
  /** Data transfer out to the internet (EC2, ELB), first 10 TB a month, after the first 100 GB. */
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
};

/** What both deployments pay whatever the traffic: the alarms and the cursor secret (docs/operating.md). */
export const FIXED_MONTH_USD = 1.3;

export const COST_SOURCES = [
  'Fargate, Linux/ARM, us-east-1: $0.03238 per vCPU-hour, $0.00356 per GB-hour — aws.amazon.com/fargate/pricing, as tabulated by vantage.sh "AWS Fargate Pricing Explained" and cloudburn.io (rates of March 2026).',
  'Application Load Balancer, us-east-1: $0.0225 per ALB-hour, $0.008 per LCU-hour; an LCU is 25 new connections/s, 3,000 active connections/min, 1 GB processed per hour (containers as targets) or 1,000 rule evaluations/s, whichever is highest — aws.amazon.com/elasticloadbalancing/pricing, as quoted by cloud-horizons.com (May 2026) and handbook.vantage.sh.',
  'RDS for PostgreSQL, us-east-1, on demand: db.t4g.micro $0.016, db.t4g.small $0.032, db.t4g.medium $0.065 per hour Single-AZ, twice that Multi-AZ — infratally.com "AWS RDS pricing explained" (2026); db.m6g.large $0.159 Single-AZ, $0.318 Multi-AZ — gitlab-environment-toolkit issue 236; gp3 storage $0.115 per GB-month (per instance, so twice Multi-AZ) — usage.ai RDS pricing (June 2026).',
  'Public IPv4 addresses: $0.005 per address-hour since 1 February 2024, for the load balancer (one per zone) and every task with a public address — aws.amazon.com/blogs/aws/new-aws-public-ipv4-address-charge-public-ip-insights (announced 2023-07-28).',
  'Data transfer out to the internet from a region (EC2, ELB): the first 100 GB a month free, then $0.09 per GB up to 10 TB — aws.amazon.com/ec2/pricing/on-demand, as quoted by wring.co (2026) and AWS re:Post.',
  'CloudFront pay-as-you-go (US, Mexico, Canada): $0.0100 per 10,000 HTTPS requests, $0.085/$0.080/$0.060/$0.040 per GB out for the first 10 TB/next 40 TB/next 100 TB/beyond, CloudFront Functions $0.10 per million — aws.amazon.com/cloudfront/pricing.',
  'CloudFront flat-rate plans (launched 2025-11-18), per distribution and month: Free $0 (1 M requests, 100 GB), Pro $15 (10 M, 50 TB), Business $200 (125 M, 50 TB), Premium $1,000 (500 M, 50 TB); AWS WAF (a web ACL is required and included), DDoS protection, Route 53 DNS, CloudWatch Logs ingestion and CloudFront Functions included; no overage charges, requests blocked by WAF not counted; not with Lambda@Edge, real-time logs or legacy features (origin access identities, ForwardedValues) — aws.amazon.com/cloudfront/pricing and the CloudFront Developer Guide, "flat-rate pricing plans", as summarised by bybowu.com (2025-11-30) and finops.com.py.',
  "Looked up on 2026-11-25 in stored copies of these pages (no live AWS price API). Always-free tiers (CloudFront's 1 TB and 10 M requests, Lambda's 1 M requests) are ignored on both sides, as in the table per million above; the 100 GB of free internet transfer counts, because it is not a free-tier promotion.",
];

/** What one request of the measured mix costs this stack besides the edge, and its bytes on the wire. */
export interface PerRequest {
  lambdaUsd: number;
  dynamoUsd: number;
  s3Usd: number;
  /** Response bytes plus the edge's headers (blended over the mix). */
  bytes: number;
}

interface Edge {
  label: string;
  usd: number;
}

/** CloudFront's price for a month, pay-as-you-go, with or without a viewer-request function. */
function cloudFrontPayg(requests: number, gb: number, withFunction: boolean): number {
  let transfer = 0;
  let from = 0;
  for (const [upTo, price] of CLOUDFRONT.transferTiers) {
    if (gb <= from) break;
    transfer += (Math.min(gb, upTo) - from) * price;
    from = upTo;
  }
  return (
    (requests / 1e4) * CLOUDFRONT.httpsPer10k +
    (withFunction ? (requests / 1e6) * CLOUDFRONT.functionPerMillion : 0) +
    transfer
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

export interface ServerlessMonth {
  edge: Edge;
  lambda: number;
  /** DynamoDB and S3. */
  storage: number;
  total: number;
}

/** This stack for a month of `requests` (every request reaches CloudFront and its viewer function). */
export function serverlessMonth(requests: number, per: PerRequest): ServerlessMonth {
  const edge = cheapestCloudFront(requests, (requests * per.bytes) / GB, true);
  const lambda = requests * per.lambdaUsd;
  const storage = requests * (per.dynamoUsd + per.s3Usd);
  return { edge, lambda, storage, total: edge.usd + lambda + storage + FIXED_MONTH_USD };
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
  total: number;
}

/** The always-on deployment for a month of `requests` of `bytes` each, sized for its busiest hour. */
export function alwaysOnMonth(requests: number, bytes: number): AlwaysOnMonth {
  const averageRps = requests / (MONTH_HOURS * 3600);
  const peakRps = averageRps * SIZING.peakToAverage;
  const vcpus = peakRps / SIZING.rpsPerVcpu;
  // The smallest shape that serves the peak on the minimum number of tasks, else more of the largest.
  const shape =
    SIZING.taskShapes.find(([vcpu]) => vcpu * SIZING.minTasks >= vcpus) ?? SIZING.taskShapes.at(-1)!;
  const tasks = Math.max(SIZING.minTasks, Math.ceil(vcpus / shape[0]));
  const containers =
    tasks * (shape[0] * ALWAYS_ON.fargateVcpuHour + shape[1] * ALWAYS_ON.fargateGbHour) * MONTH_HOURS;
  const gb = (requests * bytes) / GB;
  // Processed bytes dominate the LCU here (a new connection per 10 requests is 1.5 LCU at 1 B requests a month).
  const lcuHours = gb / ALWAYS_ON.albGbPerLcu;
  const addresses = 2 + tasks;
  const network =
    ALWAYS_ON.albHour * MONTH_HOURS +
    lcuHours * ALWAYS_ON.albLcuHour +
    addresses * ALWAYS_ON.publicIpv4Hour * MONTH_HOURS;
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
  return {
    averageRps,
    peakRps,
    tasks,
    shape,
    containers,
    network,
    database,
    edge,
    total: containers + network + database.usd + edge.usd + FIXED_MONTH_USD,
  };
}

/**
 * The monthly volume from which the always-on deployment costs less, searched on a fine logarithmic grid
 * (100 k to 10 B requests); undefined when it never does there.
 */
export function crossover(per: PerRequest): number | undefined {
  for (let exponent = 5; exponent <= 10; exponent += 0.005) {
    const requests = 10 ** exponent;
    if (alwaysOnMonth(requests, per.bytes).total < serverlessMonth(requests, per).total) return requests;
  }
  return undefined;
}

const VOLUMES = [1e6, 10e6, 100e6, 1e9];
const volume = (n: number) => (n >= 1e9 ? `${n / 1e9} B` : `${fmt.int(n / 1e6)} M`);
const usd = (n: number) => `$${n < 100 ? n.toFixed(2) : fmt.int(Math.round(n))}`;

/** Section 4's comparison: the month at four volumes, the crossover, and the assumptions. */
export function costComparisonMarkdown(per: PerRequest): string {
  const rows = VOLUMES.map((requests) => {
    const ours = serverlessMonth(requests, per);
    const theirs = alwaysOnMonth(requests, per.bytes);
    return [
      volume(requests),
      `${theirs.averageRps.toFixed(1)} (${theirs.peakRps.toFixed(1)})`,
      `${usd(ours.edge.usd)} (${ours.edge.label.replace('CloudFront ', '')})`,
      usd(ours.lambda),
      usd(ours.storage),
      `**${usd(ours.total)}**`,
      `${usd(theirs.containers)} (${theirs.tasks} × ${theirs.shape[0]} vCPU / ${theirs.shape[1]} GB)`,
      usd(theirs.network),
      `${usd(theirs.database.usd)} (${theirs.database.name})`,
      `${usd(theirs.edge.usd)} (${theirs.edge.label.replace('CloudFront ', '')})`,
      `**${usd(theirs.total)}**`,
      fmt.x(theirs.total / ours.total),
    ];
  });
  const at = crossover(per);
  const withWaf = (requests: number) => {
    // This stack's own web ACL (wafRateLimitPer5Min): $5 + $1 a month and $0.60 per million requests; a
    // flat-rate plan includes one.
    const ours = serverlessMonth(requests, per);
    const waf = ours.edge.label.includes('plan') ? 0 : 6 + (requests / 1e6) * 0.6;
    return ours.total + waf;
  };
  return [
    `Per request of the blended mix above, this stack pays Lambda ${fmt.usd(per.lambdaUsd * 1e6)}, DynamoDB ${fmt.usd(per.dynamoUsd * 1e6)} and S3 ${fmt.usd(per.s3Usd * 1e6)} per million, and sends ${fmt.int(per.bytes)} B on average; CloudFront is priced for each month as the cheaper of pay-as-you-go and the smallest flat-rate plan whose allowance covers it. ` +
      `The always-on deployment: ECS on Fargate (ARM) behind an Application Load Balancer, and RDS for PostgreSQL Multi-AZ, sized for the busiest hour (${SIZING.peakToAverage}× the month's average rate; ${SIZING.rpsPerVcpu} requests/s per vCPU, at least ${SIZING.minTasks} tasks in two zones; the smallest RDS class for the peak, ${SIZING.rdsStorageGb} GB gp3), its edge the cheaper of the ALB straight to the internet and CloudFront in front. Both pay ${usd(FIXED_MONTH_USD)} a month of alarms and the cursor secret; neither price includes people's time.`,
    '',
    table(
      [
        'requests / month',
        'req/s average (busiest hour)',
        'this stack: edge',
        'Lambda',
        'DynamoDB + S3',
        'this stack: month',
        'always-on: containers',
        'ALB + IPv4',
        'PostgreSQL',
        'edge',
        'always-on: month',
        'always-on / this stack',
      ],
      rows,
    ),
    '',
    at === undefined
      ? 'The always-on deployment costs more at every volume from 100 k to 10 B requests a month.'
      : `**Crossover: from about ${volume(Math.round(at / 1e6) * 1e6)} requests a month the always-on deployment costs less** (a scan of this model in steps of 1.2 %). Below it this stack wins by its idle month (${usd(serverlessMonth(0, per).total)} against ${usd(alwaysOnMonth(0, per.bytes).total)} for two tasks, the load balancer and a Multi-AZ database that run with no traffic); above it the per-request fees dominate — CloudFront's requests and viewer function ($1.10 per million, pay-as-you-go) and DynamoDB's metering write ($0.625 per million), which the always-on deployment replaces with capacity it pays by the hour.`,
    '',
    `With this stack's optional web ACL (\`wafRateLimitPer5Min\`: $6 a month and $0.60 per million requests inspected, included in a flat-rate plan), this stack's month is ${VOLUMES.map((n) => `${usd(withWaf(n))} at ${volume(n)}`).join(', ')}. The flat-rate plans cover this stack to 500 M requests a month (Premium); beyond, CloudFront is pay-as-you-go (a plan's requests cannot be split over two distributions of one API).`,
    '',
    "What the model leaves out: an always-on deployment sized for 3× the average rate drops requests in a burst beyond that unless it scales out in time (this stack scales per request, within the reserved concurrency); its Multi-AZ database is one writer, and a metering write per request is 100–1,200 writes a second at the busiest hour of 100 M–1 B requests; patching, backups and failover drills are people's time. Reserved instances or Savings Plans (up to ~50 % on Fargate and RDS for one to three years) move the crossover down; this stack has no commitment discount on its largest items.",
    '',
    'Prices:',
    '',
    ...COST_SOURCES.map((source) => `- ${source}`),
    '',
  ].join('\n');
}
