/**
 * The post-traffic hook's decision (ops/deploy-hook.ts), on a fake clock: the checks first, then the bake that
 * reads the alarms every poll and runs the checks again at its end; the first failing check or alarm fails the
 * deploy, and a stack with nothing published does not fail it on the checks that need a catalogue.
 */
import { describe, expect, it } from 'vitest';
import { CHECK_NAMES, type CheckResult } from '../../ops/checks.js';
import { checksVerdict, type DeployHookDeps, deployHook } from '../../ops/deploy-hook.js';

const all = (verdict: CheckResult['verdict'] = 'pass', detail = 'ok'): CheckResult[] =>
  CHECK_NAMES.map((name) => ({ name, verdict, detail, ms: 1 }));

/** A hook on a fake clock: `checks` answers each run in turn, `alarms` each poll in turn (then the last). */
function hook(options: { checks: CheckResult[][]; alarms?: string[][]; bakeMs?: number }) {
  let clock = 0;
  const calls: string[] = [];
  const lines: Record<string, unknown>[] = [];
  let run = 0;
  let poll = 0;
  const alarms = options.alarms ?? [[]];
  const deps: DeployHookDeps = {
    runChecks: async () => {
      calls.push(`checks at ${clock}`);
      return options.checks[Math.min(run++, options.checks.length - 1)]!;
    },
    alarmsInAlarm: async () => {
      calls.push(`alarms at ${clock}`);
      return alarms[Math.min(poll++, alarms.length - 1)]!;
    },
    sleep: async (ms) => {
      clock += ms;
    },
    now: () => clock,
    log: (line) => lines.push(line),
    bakeMs: options.bakeMs ?? 300_000,
    pollMs: 30_000,
  };
  return { deps, calls, lines };
}

describe('deployHook', () => {
  it('passes after the checks, a bake that reads the alarms every 30 s, and the checks again', async () => {
    const { deps, calls } = hook({ checks: [all()] });

    expect(await deployHook(deps)).toEqual({ status: 'Succeeded' });
    expect(calls[0]).toBe('checks at 0');
    expect(calls.filter((call) => call.startsWith('alarms'))).toHaveLength(10);
    expect(calls.at(-2)).toBe('alarms at 300000');
    expect(calls.at(-1)).toBe('checks at 300000');
  });

  it('fails at once on a failing check, naming it, without baking', async () => {
    const checks = all();
    checks[2] = { name: '200 with ETag', verdict: 'fail', detail: '401 invalid_key', ms: 2 };
    const { deps, calls } = hook({ checks: [checks] });

    expect(await deployHook(deps)).toEqual({ status: 'Failed', reason: 'smoke check failed: 200 with ETag' });
    expect(calls).toEqual(['checks at 0']);
  });

  it('fails at the first poll that finds a deploy alarm in ALARM', async () => {
    const { deps, calls } = hook({
      checks: [all()],
      alarms: [[], [], ['Catalogue-proxy-new-version-5xx-rate-v7']],
    });

    expect(await deployHook(deps)).toEqual({
      status: 'Failed',
      reason: 'in ALARM: Catalogue-proxy-new-version-5xx-rate-v7',
    });
    expect(calls.at(-1)).toBe('alarms at 90000');
  });

  it('fails when the checks fail at the end of the bake', async () => {
    const { deps } = hook({ checks: [all(), all('fail', 'no answer in time')] });

    expect((await deployHook(deps)).status).toBe('Failed');
  });

  it('with no bake, runs the checks once and reads no alarm', async () => {
    const { deps, calls } = hook({ checks: [all()], bakeMs: 0 });

    expect(await deployHook(deps)).toEqual({ status: 'Succeeded' });
    expect(calls).toEqual(['checks at 0']);
  });
});

describe('checksVerdict', () => {
  it('does not judge the keyed checks while nothing is published, and still judges the edge and /docs', () => {
    const unpublished = all();
    for (const index of [2, 3, 4]) unpublished[index] = { ...unpublished[index]!, verdict: 'fail' };
    unpublished[7] = {
      name: 'live version',
      verdict: 'fail',
      detail: 's3://b/catalogue/: no version is live',
      ms: 1,
    };

    expect(checksVerdict(unpublished)).toBeUndefined();
    unpublished[0] = { ...unpublished[0]!, verdict: 'fail' };
    expect(checksVerdict(unpublished)).toBe('smoke check failed: edge 401');
  });

  it('names a skipped check as a failure', () => {
    const checks = all();
    checks[6] = { ...checks[6]!, verdict: 'skip' };
    expect(checksVerdict(checks)).toBe('smoke check failed: admin API');
  });
});
