/**
 * What a CodeDeploy lifecycle hook of the proxy's deploys calls (ops/deploy-hook.ts), as lean signed requests
 * (aws/signed.ts): CloudWatch's DescribeAlarms (the Query protocol: a form POST, an XML answer) for the deploy
 * alarms now in ALARM, and CodeDeploy's PutLifecycleEventHookExecutionStatus (JSON 1.1) for the hook's verdict.
 */
import { awsRegion, endpointSetting, roleCredentials } from './env.js';
import { AwsCallError, SignedClient } from './signed.js';

/** A client of `service` in this region, at its configured endpoint (tests) or AWS's, signed by the role. */
export function serviceClient(service: 'cloudwatch' | 'codedeploy'): SignedClient {
  const region = awsRegion();
  const endpoint = endpointSetting(service)?.value;
  const host = service === 'cloudwatch' ? 'monitoring' : 'codedeploy';
  return new SignedClient({
    origin: endpoint ?? `https://${host}.${region}.amazonaws.com`,
    service: host,
    region,
    credentials: roleCredentials(endpoint),
    connections: 1,
  });
}

/** `&`, `<`, `>`, `"` and `'` as XML writes them, read back. */
function xmlText(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

/**
 * The alarms among `names` that are in ALARM now: DescribeAlarms filtered by CloudWatch itself on the state
 * (`StateValue=ALARM`), so the answer names only those; their `<AlarmName>`s are read from it.
 * @example await alarmsInAlarm(serviceClient('cloudwatch'), ['Catalogue-proxy-new-version-5xx-rate-v7'])
 */
export async function alarmsInAlarm(
  client: SignedClient,
  names: readonly string[],
  signal?: AbortSignal,
): Promise<string[]> {
  if (names.length === 0) return [];
  const form = new URLSearchParams({ Action: 'DescribeAlarms', Version: '2010-08-01', StateValue: 'ALARM' });
  for (const [index, name] of names.entries()) form.set(`AlarmNames.member.${index + 1}`, name);
  const response = await client.request({
    method: 'POST',
    path: '/',
    headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body: form.toString(),
    signal,
    retryOnReset: true,
    errorCode: ({ status }) => (status === 200 ? undefined : `HTTP ${status}`),
  });
  const body = response.body.toString('utf8');
  if (response.status !== 200) {
    const code = /<Code>([^<]+)<\/Code>/.exec(body)?.[1] ?? `HTTP ${response.status}`;
    throw new AwsCallError(code, `DescribeAlarms failed (${code})`, response.status);
  }
  const found = [...body.matchAll(/<AlarmName>([^<]*)<\/AlarmName>/g)].map((match) => xmlText(match[1]!));
  return names.filter((name) => found.includes(name));
}

/**
 * Tell CodeDeploy how a lifecycle hook ended: `Succeeded` lets the deploy finish, `Failed` rolls it back.
 * @example await putHookStatus(serviceClient('codedeploy'), { deploymentId, executionId, status: 'Failed' })
 */
export async function putHookStatus(
  client: SignedClient,
  hook: { deploymentId: string; executionId: string; status: 'Succeeded' | 'Failed' },
  signal?: AbortSignal,
): Promise<void> {
  const response = await client.request({
    method: 'POST',
    path: '/',
    headers: {
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': 'CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus',
    },
    body: JSON.stringify({
      deploymentId: hook.deploymentId,
      lifecycleEventHookExecutionId: hook.executionId,
      status: hook.status,
    }),
    signal,
    retryOnReset: true,
    errorCode: ({ status }) => (status === 200 ? undefined : `HTTP ${status}`),
  });
  if (response.status !== 200) {
    let code = `HTTP ${response.status}`;
    try {
      code =
        (JSON.parse(response.body.toString('utf8')) as { __type?: string }).__type?.split('#').pop() ?? code;
    } catch {
      // Not JSON: named after the status.
    }
    throw new AwsCallError(code, `PutLifecycleEventHookExecutionStatus failed (${code})`, response.status);
  }
}
