/**
 * What the canary cannot see at low traffic, computed from the deploy alarm's own definition in the synthesized
 * template (one-minute periods, M of N breaching, missing data not breaching): the chance that a version failing
 * every request is stopped before every request moves to it, for requests arriving at random (Poisson) at a
 * given rate, a traffic shift's shares minute by minute, and the last minute's metrics arriving after the shift.
 * The guide's table (docs/operating.md, "Safe deploys") must say the same.
 */
import { readFileSync } from 'node:fs';
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { synth } from './helpers.js';

const GUIDE = readFileSync(new URL('../../docs/operating.md', import.meta.url), 'utf8');

/**
 * The chance that M of any N consecutive minutes had at least one request to the new version, when minute i
 * sends it `shares[i]` of `perMinute` requests (an exact sum over the last N-1 minutes' states).
 */
function stoppedOdds(perMinute: number, shares: readonly number[], alarm: { n: number; m: number }): number {
  let states = new Map<string, number>([['', 1]]);
  let alarmed = 0;
  for (const share of shares) {
    const seen = 1 - Math.exp(-perMinute * share);
    const next = new Map<string, number>();
    for (const [history, p] of states) {
      for (const [bit, q] of [
        ['1', seen],
        ['0', 1 - seen],
      ] as const) {
        const window = `${history}${bit}`.slice(-alarm.n);
        if ([...window].filter((b) => b === '1').length >= alarm.m) alarmed += p * q;
        else next.set(window.slice(-(alarm.n - 1)), (next.get(window.slice(-(alarm.n - 1))) ?? 0) + p * q);
      }
    }
    states = next;
  }
  return alarmed;
}

/** The minutes a traffic shift judges before every request moves (the last one's data comes after). */
const canary = (minutes: number) => Array.from({ length: minutes - 1 }, () => 0.1);
const linear = (every: number) =>
  Array.from({ length: 9 }, (_, step) => Array.from({ length: every }, () => (step + 1) / 10))
    .flat()
    .slice(0, -1);
const SHIFTS: [string, number[]][] = [
  ['Canary10Percent5Minutes', canary(5)],
  ['Canary10Percent15Minutes', canary(15)],
  ['Canary10Percent30Minutes', canary(30)],
  ['Linear10PercentEvery1Minute', linear(1)],
  ['Linear10PercentEvery3Minutes', linear(3)],
];

let template: Template;
beforeAll(() => {
  template = synth({}, 'Odds', { bundle: false }).template;
}, 120_000);

describe('the canary at low traffic', () => {
  it("matches the guide's table, computed from the 5xx deploy alarm's definition", () => {
    const alarm = Object.values(template.findResources('AWS::CloudWatch::Alarm')).find((a) =>
      JSON.stringify(a.Properties.AlarmName).includes('proxy-new-version-5xx-rate-v'),
    )!.Properties;
    expect(alarm.Metrics.find((m: { Id: string }) => m.Id === 'invocations').MetricStat.Period).toBe(60);
    const definition = { n: alarm.EvaluationPeriods as number, m: alarm.DatapointsToAlarm as number };

    const table = GUIDE.slice(GUIDE.indexOf('<!-- canary odds'));
    for (const perMinute of [1, 6, 20, 60]) {
      const cells = SHIFTS.map(
        ([, shares]) => `${Math.round(100 * stoppedOdds(perMinute, shares, definition))} %`,
      );
      expect(table).toContain(`| ${perMinute} | ${cells.join(' | ')} |`);
    }
    // The issue's own figures for the default: 55 % at 6 requests a minute, 98 % at 20.
    expect(Math.round(100 * stoppedOdds(6, canary(5), definition))).toBe(55);
    expect(Math.round(100 * stoppedOdds(20, canary(5), definition))).toBe(98);
    expect(table).toContain(
      `| requests / minute | \`${SHIFTS[0]![0]}\` (default) | ${SHIFTS.slice(1)
        .map(([name]) => `\`${name}\``)
        .join(' | ')} |`,
    );
  });

  it('is certain with a request every minute, and nothing without any', () => {
    expect(stoppedOdds(1_000, canary(5), { n: 3, m: 2 })).toBeCloseTo(1, 9);
    expect(stoppedOdds(0, canary(30), { n: 3, m: 2 })).toBe(0);
  });
});
