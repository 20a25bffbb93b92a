/**
 * The check from outside (infra/scheduled-check.ts): a function on a schedule running the smoke checks through
 * the public URL, its alarm (two of three runs failed or missing, missing data breaching, to the alarm topic),
 * the check key made and registered by a custom resource with partner limits a run a minute never reaches, the
 * roles (the check reads its secret and the live version; only the deploy-time function writes the keys
 * table), and the read-only policy of `npm run smoke -- --stack`. Infra declares the metric and the catalogue
 * files it reads by name: they agree with ops/ and store/.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  CHECK_KEY_LIMITS,
  SCHEDULED_CHECK_METRIC as DECLARED,
  LIVE_VERSION_READS,
} from '../../infra/scheduled-check.js';
import { SCHEDULED_CHECK_METRIC } from '../../ops/scheduled.js';
import { POINTER_KEY, VERSIONS_DIR } from '../../store/layout.js';
import { allowedActions, CERTIFICATE, logicalId, roleStatements, synth } from './helpers.js';

let template: Template;
// biome-ignore lint/suspicious/noExplicitAny: the template's JSON, read as it is
let resources: Record<string, { Type: string; Properties: Record<string, any> }>;
let ids: Record<
  'check' | 'provider' | 'secret' | 'key' | 'keys' | 'counters' | 'topic' | 'bucket' | 'distribution',
  string
>;
beforeAll(() => {
  template = synth({}, 'Catalogue', { bundle: false }).template;
  resources = template.toJSON().Resources;
  ids = {
    check: logicalId(template, 'AWS::Lambda::Function', 'ScheduledCheckFunction'),
    provider: logicalId(template, 'AWS::Lambda::Function', 'ScheduledCheckKeyProviderFunction'),
    secret: logicalId(template, 'AWS::SecretsManager::Secret', 'ScheduledCheckKeySecret'),
    key: logicalId(template, 'Custom::CatalogueCheckKey', 'ScheduledCheckKey'),
    keys: logicalId(template, 'AWS::DynamoDB::Table', 'StorageKeys'),
    counters: logicalId(template, 'AWS::DynamoDB::Table', 'StorageCounters'),
    topic: logicalId(template, 'AWS::SNS::Topic', 'AlarmTopic'),
    bucket: logicalId(template, 'AWS::S3::Bucket', 'StorageCatalogue'),
    distribution: logicalId(template, 'AWS::CloudFront::Distribution', 'EdgeDistribution'),
  };
}, 120_000);

const roleOf = (fn: string) =>
  (resources[fn]!.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0]!;

describe('the scheduled check', () => {
  it('runs ops/lambda.ts every minute through the public URL, never run twice', () => {
    const fn = resources[ids.check]!.Properties;
    const publicUrl = {
      'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [ids.distribution, 'DomainName'] }, '/v1']],
    };

    expect(fn.Handler).toBe('index.handler');
    expect(fn.Environment.Variables).toMatchObject({
      CHECK_API_URL: publicUrl,
      CHECK_KEY_SECRET_ARN: { Ref: ids.secret },
      CHECK_CATALOGUE_URI: { 'Fn::Join': ['', ['s3://', { Ref: ids.bucket }, '/catalogue/']] },
      METRICS_NAMESPACE: 'CatalogueReadApi/Catalogue',
    });
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(1 minute)',
      State: 'ENABLED',
      Targets: [
        {
          Arn: { 'Fn::GetAtt': [ids.check, 'Arn'] },
          Id: 'Target0',
          RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 },
        },
      ],
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: ids.check },
      MaximumRetryAttempts: 0,
    });
  });

  it('alarms when two of three runs fail or do not report (missing data breaching), to the alarm topic', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Catalogue-scheduled-check-failed',
      Namespace: 'CatalogueReadApi/Catalogue',
      MetricName: 'ScheduledCheckPassed',
      Dimensions: [{ Name: 'check', Value: 'public-url' }],
      Statistic: 'Minimum',
      Period: 60,
      Threshold: 1,
      ComparisonOperator: 'LessThanThreshold',
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      TreatMissingData: 'breaching',
      AlarmActions: [{ Ref: ids.topic }],
      OKActions: [{ Ref: ids.topic }],
    });
  });

  it('goes through the custom domain when there is one, and every scheduledCheckMinutes', () => {
    const other = synth(
      { domainName: 'api.example.com', certificateArn: CERTIFICATE, scheduledCheckMinutes: 5 },
      'Other',
      { bundle: false },
    ).template;
    other.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      Environment: {
        Variables: {
          CHECK_API_URL: 'https://api.example.com/v1',
          CHECK_DOCS_URL: 'https://api.example.com/docs',
        },
      },
    });
    other.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(5 minutes)' });
    other.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Other-scheduled-check-failed',
      Period: 300,
    });
  });

  it('names the metric and the catalogue files as ops/ and store/ do', () => {
    expect(DECLARED).toEqual(SCHEDULED_CHECK_METRIC);
    expect(LIVE_VERSION_READS).toEqual({ pointer: POINTER_KEY, versions: VERSIONS_DIR });
  });

  it('reads its key and the live version, nothing else: no table, no admin API, no write', () => {
    expect(allowedActions(template, roleOf(ids.check)).sort()).toEqual([
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      's3:GetObject',
      's3:ListBucket',
      'secretsmanager:GetSecretValue',
    ]);
    const reads = roleStatements(template, roleOf(ids.check)).find((s) => s.Sid === 'ReadLiveVersion')!;
    expect(reads.Resource).toEqual([
      { 'Fn::Join': ['', [{ 'Fn::GetAtt': [ids.bucket, 'Arn'] }, '/catalogue/current.json']] },
      { 'Fn::Join': ['', [{ 'Fn::GetAtt': [ids.bucket, 'Arn'] }, '/catalogue/versions/*']] },
    ]);
  });
});

describe('the check key', () => {
  it('is made and registered at deploy in the keys table, with partner limits, a generation to rotate it', () => {
    expect(resources[ids.key]!.Properties).toEqual({
      ServiceToken: { 'Fn::GetAtt': [ids.provider, 'Arn'] },
      KeysTable: { Ref: ids.keys },
      CountersTable: { Ref: ids.counters },
      SecretArn: { Ref: ids.secret },
      Label: 'scheduled smoke check (Catalogue)',
      LimitMinute: '30',
      LimitMonth: '200000',
      Generation: '1',
    });
    template.hasOutput('CheckKeyId', { Value: { 'Fn::GetAtt': [ids.key, 'KeyId'] } });
    template.hasOutput('CheckKeySecretArn', { Value: { Ref: ids.secret } });
  });

  it('lets only the deploy-time function write the tables: UpdateItem of the keys table (the key) and the counters table (a stop lifted), the secret', () => {
    const statements = roleStatements(template, roleOf(ids.provider));
    expect(statements.find((s) => s.Sid === 'RegisterCheckKey')).toMatchObject({
      Action: 'dynamodb:UpdateItem',
      Resource: [{ 'Fn::GetAtt': [ids.counters, 'Arn'] }, { 'Fn::GetAtt': [ids.keys, 'Arn'] }],
    });
    expect(allowedActions(template, roleOf(ids.provider)).sort()).toEqual([
      'dynamodb:UpdateItem',
      'logs:CreateLogStream',
      'logs:PutLogEvents',
      'secretsmanager:GetSecretValue',
      'secretsmanager:PutSecretValue',
    ]);
    expect(resources[ids.provider]!.Properties.Handler).toBe('index.handler');
  });

  it('has limits a run a minute, a deploy hook and an operator never exhaust', () => {
    // A run makes two metered requests (the 200 and its 304); a month has at most 31 × 24 × 60 runs.
    const monthly = 2 * 31 * 24 * 60;
    expect(CHECK_KEY_LIMITS.month).toBeGreaterThanOrEqual(2 * monthly);
    // The schedule's two, a deploy hook's two and an operator's two in the same minute, with room.
    expect(CHECK_KEY_LIMITS.minute).toBeGreaterThanOrEqual(4 * 6);
  });
});

describe("npm run smoke -- --stack's policy", () => {
  it('reads the outputs, the check key and the live version; nothing else', () => {
    const id = logicalId(template, 'AWS::IAM::ManagedPolicy', 'ScheduledCheckSmokePolicy');
    const statements = resources[id]!.Properties.PolicyDocument.Statement as {
      Sid: string;
      Action: string | string[];
    }[];

    expect(statements.map((s) => [s.Sid, s.Action])).toEqual([
      ['ReadStackOutputs', 'cloudformation:DescribeStacks'],
      ['ReadCheckKey', 'secretsmanager:GetSecretValue'],
      ['ReadLiveVersion', 's3:GetObject'],
      ['ListVersions', 's3:ListBucket'],
    ]);
    expect(statements[0]).toMatchObject({ Resource: { Ref: 'AWS::StackId' } });
    template.hasOutput('SmokeCheckPolicyArn', { Value: { Ref: id } });
  });
});
