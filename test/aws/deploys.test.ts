/**
 * The deploy hook's two AWS calls (aws/deploys.ts) against loopback stand-ins: DescribeAlarms sent as the Query
 * protocol's form, filtered on ALARM by CloudWatch, its alarm names read from the XML (escapes too); the
 * hook's verdict sent to CodeDeploy; refusals named by their code.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { alarmsInAlarm, putHookStatus, serviceClient } from '../../aws/deploys.js';
import { closeServer, listenOnLoopback } from '../helpers/loopback.js';

let answer: { status: number; body: string } = { status: 200, body: '' };
const seen: { headers: IncomingHttpHeaders; body: string }[] = [];
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    seen.push({ headers: request.headers, body: Buffer.concat(chunks).toString() });
    response.writeHead(answer.status).end(answer.body);
  });
});
let endpoint: string;
beforeAll(async () => {
  endpoint = `http://127.0.0.1:${await listenOnLoopback(server)}`;
});
afterAll(() => closeServer(server));
afterEach(() => vi.unstubAllEnvs());

const describeAnswer = (names: string[]) =>
  `<DescribeAlarmsResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/"><DescribeAlarmsResult><MetricAlarms>${names
    .map(
      (name) =>
        `<member><AlarmName>${name}</AlarmName><Dimensions><member><Name>FunctionName</Name><Value>f</Value></member></Dimensions><StateValue>ALARM</StateValue></member>`,
    )
    .join('')}</MetricAlarms><CompositeAlarms/></DescribeAlarmsResult></DescribeAlarmsResponse>`;

describe('alarmsInAlarm', () => {
  it('asks CloudWatch for the named alarms in ALARM and returns the ones it names', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_CLOUDWATCH', endpoint);
    answer = { status: 200, body: describeAnswer(['Api-proxy-new-version-5xx-rate-v7', 'R&amp;D-x']) };
    const client = serviceClient('cloudwatch');

    const found = await alarmsInAlarm(client, ['Api-proxy-new-version-5xx-rate-v7', 'Api-p99-v7', 'R&D-x']);

    expect(found).toEqual(['Api-proxy-new-version-5xx-rate-v7', 'R&D-x']);
    const form = new URLSearchParams(seen.at(-1)!.body);
    expect(Object.fromEntries(form)).toEqual({
      Action: 'DescribeAlarms',
      Version: '2010-08-01',
      StateValue: 'ALARM',
      'AlarmNames.member.1': 'Api-proxy-new-version-5xx-rate-v7',
      'AlarmNames.member.2': 'Api-p99-v7',
      'AlarmNames.member.3': 'R&D-x',
    });
    expect(seen.at(-1)!.headers.authorization).toMatch(/\/monitoring\/aws4_request/);
    await client.close();
  });

  it('names a refusal by its code, and asks nothing for no alarms', async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_CLOUDWATCH', endpoint);
    const client = serviceClient('cloudwatch');
    const before = seen.length;
    expect(await alarmsInAlarm(client, [])).toEqual([]);
    expect(seen.length).toBe(before);

    answer = { status: 403, body: '<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>' };
    await expect(alarmsInAlarm(client, ['a'])).rejects.toMatchObject({ name: 'AccessDenied' });
    await client.close();
  });
});

describe('putHookStatus', () => {
  it("sends the hook's verdict as CodeDeploy's JSON 1.1 call", async () => {
    vi.stubEnv('AWS_ENDPOINT_URL_CODEDEPLOY', endpoint);
    answer = { status: 200, body: '{"lifecycleEventHookExecutionId":"h-1"}' };
    const client = serviceClient('codedeploy');

    await putHookStatus(client, { deploymentId: 'd-1', executionId: 'h-1', status: 'Failed' });

    const sent = seen.at(-1)!;
    expect(sent.headers['x-amz-target']).toBe('CodeDeploy_20141006.PutLifecycleEventHookExecutionStatus');
    expect(JSON.parse(sent.body)).toEqual({
      deploymentId: 'd-1',
      lifecycleEventHookExecutionId: 'h-1',
      status: 'Failed',
    });
    answer = { status: 400, body: '{"__type":"LifecycleEventAlreadyCompletedException"}' };
    await expect(
      putHookStatus(client, { deploymentId: 'd-1', executionId: 'h-1', status: 'Succeeded' }),
    ).rejects.toMatchObject({ name: 'LifecycleEventAlreadyCompletedException' });
    await client.close();
  });
});
