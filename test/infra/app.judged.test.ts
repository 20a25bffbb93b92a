/**
 * The synthesized templates read by a check written apart from the stack's code: the app run as the CDK CLI
 * runs it (infra/app.ts, cdk-nag included, assets left unbuilt), its cloud assembly read from disk as plain JSON
 * (manifest.json, then each stack's template file), and every claim checked on that JSON alone, with none of
 * the project's constructs, helpers or CDK's assertion library:
 * - every alarm of every stack has an ALARM action and an OK action;
 * - an alarm on CloudFront's metrics exists in a stack whose environment is us-east-1;
 * - a scheduled rule invokes a function, and an alarm on that function's metric treats missing data as breaching;
 * - the CodeDeploy deployment group watches a 4xx alarm and one on Lambda's own per-version errors, and the
 *   alias has a post-traffic hook function with time to bake;
 * - the upload builder's asynchronous invocations have an on-failure destination with an alarm on it;
 * - the catalogue bucket is versioned with a rule expiring noncurrent versions;
 * - `-c keysTableName=…` puts that name in every function's KEYS_TABLE and leaves no keys table of the stack.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const INFRA = fileURLToPath(new URL('../../infra/', import.meta.url));
const CDK_JSON = JSON.parse(readFileSync(join(INFRA, 'cdk.json'), 'utf8')) as { context: object };

// biome-ignore lint/suspicious/noExplicitAny: a reader of untyped JSON, on purpose
type Any = any;
interface Stack {
  name: string;
  region: string;
  resources: Record<string, Any>;
}

const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

/** Run the app with `context` added, and read every stack it synthesized. */
async function synthesize(context: Record<string, unknown>): Promise<Stack[]> {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk-judged-'));
  outdirs.push(outdir);
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'app.ts'], {
    cwd: INFRA,
    env: {
      PATH: process.env.PATH,
      CDK_OUTDIR: outdir,
      CDK_CONTEXT_JSON: JSON.stringify({ ...CDK_JSON.context, 'aws:cdk:bundling-stacks': [], ...context }),
    },
    timeout: 170_000,
  });
  const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8'));
  return Object.values(manifest.artifacts as Record<string, Any>)
    .filter((artifact) => artifact.type === 'aws:cloudformation:stack')
    .map((artifact) => ({
      name: artifact.properties.stackName ?? '',
      region: String(artifact.environment).split('/').pop()!,
      resources: JSON.parse(readFileSync(join(outdir, artifact.properties.templateFile), 'utf8')).Resources,
    }));
}

const ofType = (stack: Stack, type: string) =>
  Object.entries(stack.resources).filter(([, resource]) => resource.Type === type);
/** Every metric an alarm reads: its own, or those of its math. */
const metricsOf = (alarm: Any): Any[] =>
  alarm.Properties.MetricName
    ? [
        {
          Namespace: alarm.Properties.Namespace,
          MetricName: alarm.Properties.MetricName,
          Dimensions: alarm.Properties.Dimensions ?? [],
        },
      ]
    : (alarm.Properties.Metrics ?? []).filter((m: Any) => m.MetricStat).map((m: Any) => m.MetricStat.Metric);
const refersTo = (value: unknown, id: string) => JSON.stringify(value ?? null).includes(`"${id}"`);

let stacks: Stack[];
let api: Stack;
beforeAll(async () => {
  stacks = await synthesize({});
  api = stacks.find((stack) => ofType(stack, 'AWS::CloudFront::Distribution').length > 0)!;
}, 180_000);

describe('the synthesized templates, judged', () => {
  it('every alarm of every stack has an ALARM action and an OK action', () => {
    const alarms = stacks.flatMap((stack) => ofType(stack, 'AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(10);
    for (const [id, alarm] of alarms) {
      expect(alarm.Properties.AlarmActions?.length ?? 0, id).toBeGreaterThan(0);
      expect(alarm.Properties.OKActions?.length ?? 0, id).toBeGreaterThan(0);
    }
  });

  it("an alarm on CloudFront's metrics exists in us-east-1", () => {
    const inUsEast1 = stacks.filter((stack) => stack.region === 'us-east-1');
    const cloudFront = inUsEast1.flatMap((stack) =>
      ofType(stack, 'AWS::CloudWatch::Alarm').filter(([, alarm]) =>
        metricsOf(alarm).some((metric) => metric.Namespace === 'AWS/CloudFront'),
      ),
    );
    expect(cloudFront.length).toBeGreaterThanOrEqual(2);
    expect(api.region).not.toBe('us-east-1');
  });

  it('a schedule runs a function, and an alarm on what it reports treats missing data as breaching', () => {
    const rules = ofType(api, 'AWS::Events::Rule').filter(([, rule]) =>
      /^rate\(/.test(rule.Properties.ScheduleExpression ?? ''),
    );
    const targets = rules.flatMap(([, rule]) =>
      rule.Properties.Targets.map((t: Any) => t.Arn['Fn::GetAtt']?.[0]),
    );
    expect(targets.some((id: string) => api.resources[id]?.Type === 'AWS::Lambda::Function')).toBe(true);
    const breaching = ofType(api, 'AWS::CloudWatch::Alarm').filter(
      ([, a]) => a.Properties.TreatMissingData === 'breaching',
    );
    expect(breaching.length).toBeGreaterThan(0);
  });

  it('the deployment group watches 4xx and Lambda’s own per-version errors; the alias bakes in a post-traffic hook', () => {
    const [[, group]] = ofType(api, 'AWS::CodeDeploy::DeploymentGroup') as [[string, Any]];
    const watched = group.Properties.AlarmConfiguration.Alarms.map((a: Any) => api.resources[a.Name.Ref]);
    const metrics = watched.flatMap(metricsOf);
    const dimension = (metric: Any, name: string) =>
      metric.Dimensions.find((d: Any) => d.Name === name)?.Value;
    expect(metrics.some((m: Any) => dimension(m, 'status_class') === '4xx')).toBe(true);
    expect(
      metrics.some(
        (m: Any) =>
          m.Namespace === 'AWS/Lambda' &&
          ['Errors', 'Url5xxCount'].includes(m.MetricName) &&
          dimension(m, 'ExecutedVersion'),
      ),
    ).toBe(true);
    const [[, alias]] = ofType(api, 'AWS::Lambda::Alias') as [[string, Any]];
    const hook = api.resources[alias.UpdatePolicy.CodeDeployLambdaAliasUpdate.AfterAllowTrafficHook.Ref];
    expect(hook.Type).toBe('AWS::Lambda::Function');
    expect(hook.Properties.Timeout).toBeGreaterThan(5 * 60);
  });

  it("the upload builder's failed invocations go to a destination with an alarm on it", () => {
    const configs = ofType(api, 'AWS::Lambda::EventInvokeConfig').filter(
      ([, c]) => c.Properties.DestinationConfig?.OnFailure,
    );
    expect(configs).toHaveLength(1);
    const destination = configs[0]![1].Properties.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0];
    const alarmed = ofType(api, 'AWS::CloudWatch::Alarm').filter(([, a]) =>
      refersTo(metricsOf(a), destination),
    );
    expect(alarmed.length).toBe(1);
  });

  it('the catalogue bucket is versioned and expires noncurrent versions', () => {
    const versioned = ofType(api, 'AWS::S3::Bucket').filter(
      ([, b]) => b.Properties.VersioningConfiguration?.Status === 'Enabled',
    );
    expect(versioned).toHaveLength(1);
    const rules = versioned[0]![1].Properties.LifecycleConfiguration.Rules;
    expect(rules.some((rule: Any) => rule.NoncurrentVersionExpiration?.NoncurrentDays > 0)).toBe(true);
  });

  it('keysTableName switches every function to the restored table and drops the stack’s own', async () => {
    const restored = (await synthesize({ keysTableName: 'keys-restored-judged' })).find(
      (stack) => ofType(stack, 'AWS::CloudFront::Distribution').length > 0,
    )!;
    const readers = ofType(restored, 'AWS::Lambda::Function').filter(
      ([, fn]) => fn.Properties.Environment?.Variables?.KEYS_TABLE,
    );
    expect(readers.length).toBeGreaterThanOrEqual(2);
    for (const [, fn] of readers)
      expect(fn.Properties.Environment.Variables.KEYS_TABLE).toBe('keys-restored-judged');
    const keyTables = ofType(restored, 'AWS::DynamoDB::Table').filter(([, t]) =>
      t.Properties.KeySchema.some((k: Any) => k.AttributeName === 'key_hash'),
    );
    expect(keyTables).toEqual([]);
    for (const [, resource] of ofType(restored, 'Custom::CatalogueCheckKey')) {
      expect(resource.Properties.KeysTable).toBe('keys-restored-judged');
    }
  }, 180_000);
});
