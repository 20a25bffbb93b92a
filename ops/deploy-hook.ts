/**
 * The proxy deploys' post-traffic hook (CodeDeploy's AfterAllowTraffic, infra/deploy-hook.ts): once every
 * request goes to the new version, it runs the smoke checks through the public URL (so against that version),
 * then keeps watching for `bakeMs` — the deploy alarms every `pollMs`, the smoke checks again at the end — and
 * tells CodeDeploy `Failed` (every request goes back to the previous version, the stack update rolls back) at
 * the first failing check or alarm, `Succeeded` otherwise. The first deploy creates the alias without
 * CodeDeploy: the hook does not run then.
 */
import type { CheckResult } from './checks.js';
import { outcome } from './smoke.js';

/** The checks that need a published catalogue: with none live they cannot judge a version. */
const NEED_A_CATALOGUE = ['200 with ETag', '304 revalidation', 'rate-limit headers', 'live version'];

export interface DeployHookDeps {
  /** The smoke checks against the public URL. */
  runChecks: () => Promise<CheckResult[]>;
  /** The deploy alarms now in ALARM (none: an empty list). */
  alarmsInAlarm: () => Promise<string[]>;
  sleep: (ms: number) => Promise<void>;
  now: () => number;
  /** One JSON log line per step. */
  log: (line: Record<string, unknown>) => void;
  /** How long to watch once the checks have passed (the bake); 0: the checks once. */
  bakeMs: number;
  /** How often the alarms are read during the bake. */
  pollMs: number;
}

/**
 * Why a run of the checks fails the deploy, or undefined when it passes. With no catalogue version live, the
 * keyed checks cannot pass whatever the version (503 configuration_error): they do not judge it then.
 */
export function checksVerdict(checks: readonly CheckResult[]): string | undefined {
  const live = checks.find((check) => check.name === 'live version');
  const unpublished = live?.verdict === 'fail' && / no version is live$/.test(live.detail);
  const judged = unpublished ? checks.filter((check) => !NEED_A_CATALOGUE.includes(check.name)) : checks;
  const { ok, failed, skipped } = outcome(judged, { allowSkipped: false });
  return ok ? undefined : `smoke check failed: ${[...failed, ...skipped].join(', ')}`;
}

/** One run of the checks, logged; its failure's reason, if any. */
async function checked(deps: DeployHookDeps, step: string): Promise<string | undefined> {
  const checks = await deps.runChecks();
  const reason = checksVerdict(checks);
  deps.log({ type: 'deploy_hook', step, ok: reason === undefined, reason, checks });
  return reason;
}

/**
 * Run the hook: `Succeeded` or `Failed` with the reason (the caller reports it to CodeDeploy).
 * @example const { status } = await deployHook({ runChecks, alarmsInAlarm, sleep, now: Date.now, log, bakeMs: 300_000, pollMs: 30_000 });
 */
export async function deployHook(
  deps: DeployHookDeps,
): Promise<{ status: 'Succeeded' | 'Failed'; reason?: string }> {
  const first = await checked(deps, 'checks');
  if (first) return { status: 'Failed', reason: first };
  const until = deps.now() + deps.bakeMs;
  while (deps.now() < until) {
    await deps.sleep(Math.min(deps.pollMs, until - deps.now()));
    const alarming = await deps.alarmsInAlarm();
    deps.log({ type: 'deploy_hook', step: 'bake', alarms_in_alarm: alarming });
    if (alarming.length > 0) return { status: 'Failed', reason: `in ALARM: ${alarming.join(', ')}` };
  }
  if (deps.bakeMs > 0) {
    const last = await checked(deps, 'checks after the bake');
    if (last) return { status: 'Failed', reason: last };
  }
  return { status: 'Succeeded' };
}
