/**
 * The check functions' entry (infra/scheduled-check.ts bundles it twice): `handler`, run on a schedule, checks
 * the public URL and logs one line with the metric its alarm watches (ops/scheduled.ts); `deployHook`, the
 * proxy deploys' post-traffic hook, checks and bakes the new version and tells CodeDeploy (ops/deploy-hook.ts).
 * Both read the check key from its secret (cached for 10 minutes, so a rotated key is used within that time)
 * with the function role's credentials, and never log it.
 */

import { alarmsInAlarm, putHookStatus, serviceClient } from '../aws/deploys.js';
import { endpointSetting, integerSetting, roleCredentials } from '../aws/env.js';
import { getSecretString, secretsClient } from '../aws/secrets.js';
import { errorMessage } from '../store/errors.js';
import { deployHook as runDeployHook } from './deploy-hook.js';
import { checkEnvironment, scheduledCheckLine, scheduledTarget, unchecked } from './scheduled.js';
import { runChecks } from './smoke.js';

/** How long a run may take: well inside the schedule's minute and the function's timeout. */
const RUN_DEADLINE_MS = 25_000;
/** How long a read key is used before it is read again. */
const KEY_TTL_MS = 10 * 60_000;

let cachedKey: { key: string; readAt: number } | undefined;

/** The check key, from its secret (cached). */
async function checkKey(arn: string): Promise<string> {
  if (cachedKey && Date.now() - cachedKey.readAt < KEY_TTL_MS) return cachedKey.key;
  const endpoint = endpointSetting('secretsmanager')?.value;
  const client = secretsClient(arn, { endpoint, credentials: roleCredentials(endpoint) });
  try {
    const key = await getSecretString(client, arn, AbortSignal.timeout(5_000));
    cachedKey = { key, readAt: Date.now() };
    return key;
  } finally {
    await client.close();
  }
}

/** Every check against the public URL with the check key; a run that cannot start fails every check. */
async function publicChecks() {
  const environment = checkEnvironment(process.env);
  try {
    const target = scheduledTarget(environment, await checkKey(environment.keySecretArn));
    return { environment, checks: await runChecks(target, Date.now() + RUN_DEADLINE_MS, () => new Date()) };
  } catch (error) {
    cachedKey = undefined;
    return { environment, checks: unchecked(`the check key could not be read: ${errorMessage(error)}`) };
  }
}

const log = (line: object) => process.stdout.write(`${JSON.stringify(line)}\n`);

/** The scheduled run: one log line (with its metric); it never throws, so Lambda does not run it again. */
export async function handler(): Promise<void> {
  const { environment, checks } = await publicChecks();
  log(scheduledCheckLine(environment, checks, Date.now()));
}

/** CodeDeploy's event for a lifecycle hook. */
interface HookEvent {
  DeploymentId?: string;
  LifecycleEventHookExecutionId?: string;
}

/** The deploy hook: checks, bake, and the verdict sent to CodeDeploy (Failed when anything throws). */
export async function deployHook(event: HookEvent): Promise<void> {
  const deploymentId = event.DeploymentId ?? '';
  const executionId = event.LifecycleEventHookExecutionId ?? '';
  if (!deploymentId || !executionId) throw new Error('not a CodeDeploy lifecycle hook event');
  const alarms = (process.env.DEPLOY_ALARM_NAMES ?? '').split(',').filter(Boolean);
  const cloudwatch = serviceClient('cloudwatch');
  const codedeploy = serviceClient('codedeploy');
  let verdict: { status: 'Succeeded' | 'Failed'; reason?: string };
  try {
    const bake = integerSetting(process.env, 'DEPLOY_BAKE_MINUTES', { fallback: 0, min: 0, max: 14 });
    if (!bake.ok) throw new Error(bake.problem);
    verdict = await runDeployHook({
      runChecks: async () => (await publicChecks()).checks,
      alarmsInAlarm: () => alarmsInAlarm(cloudwatch, alarms, AbortSignal.timeout(10_000)),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      now: Date.now,
      log,
      bakeMs: bake.value * 60_000,
      pollMs: 30_000,
    });
  } catch (error) {
    verdict = { status: 'Failed', reason: `the hook failed: ${errorMessage(error)}` };
  }
  log({ type: 'deploy_hook', step: 'verdict', deployment_id: deploymentId, ...verdict });
  try {
    await putHookStatus(codedeploy, { deploymentId, executionId, status: verdict.status });
  } finally {
    await Promise.all([cloudwatch.close(), codedeploy.close()]);
  }
}
