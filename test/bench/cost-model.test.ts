/** The cost model of bench section 4: its arithmetic, on figures worked out by hand from the price lists. */
import { describe, expect, it } from 'vitest';
import {
  alwaysOnMonth,
  cheapestCloudFront,
  crossover,
  type PerRequest,
  serverlessMonth,
} from './cost-model.js';

/** Section 4's blended request of the run of 2026-11-24 (Lambda $0.261, DynamoDB $0.625 per million). */
const MEASURED: PerRequest = { lambdaUsd: 0.261e-6, dynamoUsd: 0.625e-6, s3Usd: 0, bytes: 6_565 };

describe('CloudFront', () => {
  it('pay-as-you-go: $0.01 per 10,000 requests, $0.10 per million function runs, transfer by tier', () => {
    // 1 B requests, 12 TB: $1,000 + $100 + 10,000 GB × $0.085 + 2,000 GB × $0.080.
    expect(cheapestCloudFront(1e9, 12_000, true)).toEqual({
      label: 'CloudFront, pay as you go',
      usd: 1_000 + 100 + 850 + 160,
    });
  });

  it('a flat-rate plan only where its allowance covers the month, and only when cheaper', () => {
    expect(cheapestCloudFront(1e6, 6.6, true)).toEqual({ label: 'CloudFront Free plan', usd: 0 });
    // One request more: beyond Free, and pay-as-you-go ($1.66) is cheaper than Pro ($15) ...
    expect(cheapestCloudFront(1e6 + 1, 6.6, true).label).toBe('CloudFront, pay as you go');
    // ... until 10 M requests ($10 + $1 + 100 GB × $0.085 = $19.50).
    expect(cheapestCloudFront(10e6, 100, true)).toEqual({ label: 'CloudFront Pro plan', usd: 15 });
    // 100 M requests of 6.6 KB: pay-as-you-go ($100 + $10 + 656 GB × $0.085) is cheaper than Business ($200);
    // of 50 KB it is not.
    expect(cheapestCloudFront(100e6, 656, true)).toEqual({
      label: 'CloudFront, pay as you go',
      usd: 100 + 10 + 656 * 0.085,
    });
    expect(cheapestCloudFront(100e6, 5_000, true)).toEqual({ label: 'CloudFront Business plan', usd: 200 });
    // 600 M requests: beyond every plan.
    expect(cheapestCloudFront(600e6, 100, true).label).toBe('CloudFront, pay as you go');
  });
});

describe('the always-on deployment', () => {
  it('is two of the smallest tasks, the load balancer and a micro database with no traffic at all', () => {
    const idle = alwaysOnMonth(0, MEASURED.bytes);
    expect([idle.tasks, idle.shape, idle.database.name]).toEqual([2, [0.25, 0.5], 'db.t4g.micro']);
    // 2 × (0.25 × $0.03238 + 0.5 × $0.00356) × 730 h; $0.0225 × 730 h + 4 addresses × $0.005 × 730 h;
    // $0.032 × 730 h + 2 × 20 GB × $0.115; the fixed $1.30.
    expect(idle.total).toBeCloseTo(14.4197 + 16.425 + 14.6 + 23.36 + 4.6 + 1.3, 2);
  });

  it('grows with the busiest hour: 1 B requests a month are 1,142 req/s at 3× the average', () => {
    const busy = alwaysOnMonth(1e9, MEASURED.bytes);
    expect(busy.peakRps).toBeCloseTo(1_141.6, 1);
    // 2.85 vCPU at 400 req/s each: two tasks of 2 vCPU; beyond 300 req/s, the m-class database.
    expect([busy.tasks, busy.shape, busy.database.name]).toEqual([2, [2, 4], 'db.m6g.large']);
    // 6,565 GB out: the first 100 GB free, then $0.09 (cheaper than CloudFront's $1 per 10,000 requests).
    expect(busy.edge).toEqual({ label: 'ALB to the internet', usd: (6_565 - 100) * 0.09 });
  });
});

describe('this stack against it', () => {
  it('costs its per-request prices and the fixed $1.30', () => {
    const month = serverlessMonth(100e6, MEASURED);
    expect(month.lambda).toBeCloseTo(26.1, 6);
    expect(month.storage).toBeCloseTo(62.5, 6);
    expect(month.total).toBeCloseTo(month.edge.usd + 26.1 + 62.5 + 1.3, 6);
  });

  it('is cheaper below the crossover and dearer above it, which lies between 10 M and 100 M a month', () => {
    const at = crossover(MEASURED)!;
    expect(at).toBeGreaterThan(10e6);
    expect(at).toBeLessThan(100e6);
    const just = (factor: number) =>
      alwaysOnMonth(at * factor, MEASURED.bytes).total - serverlessMonth(at * factor, MEASURED).total;
    expect(just(0.97)).toBeGreaterThan(0);
    expect(just(1)).toBeLessThan(0);
  });
});
