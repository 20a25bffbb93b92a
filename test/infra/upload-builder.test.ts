/**
 * The upload builder as synthesized (infra/upload-builder.ts): its trigger, its least-privilege role, its
 * asynchronous invocation, the alarm on a failed build, the upload policy output, and its bundle's budget.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { EVENT_SOURCE } from '../../builder/upload/report.js';
import { resolveProps } from '../../infra/props.js';
import { UPLOAD_EVENT_SOURCE } from '../../infra/upload-builder.js';
import { bundledBuilder, logicalId, roleStatements, type Synthesised, synth } from './helpers.js';

/**
 * The builder asset's budget (index.mjs without its map): it carries the AWS SDK's S3 client, node-tar and
 * the builder (616 KB when the budget was set). Cold start is no concern for a job of seconds to minutes, but
 * growth should show.
 */
/**
 * The upload builder's asset (index.mjs): 609,282 B with the S3 client and tar (the bundle's largest parts),
 * below the 631,955 B it was with cli-progress; then 633,887 B once it read snapshots exactly (issue 47: the
 * I-JSON reading, the nesting-bounded scan and the printable-text rule, about 12 KB, most of it the messages
 * that say what is wrong and what to write). About 20 KB of room for the uploads' own changes, none for a
 * terminal or a second SDK client.
 */
const BUILDER_BUDGET_BYTES = 640 * 1024;

let synthesised: Synthesised;
let template: Template;
let ids: { fn: string; role: string; bucket: string; policy: string; logs: string };
beforeAll(() => {
  synthesised = synth({ alarmEmail: 'ops@example.com' });
  template = synthesised.template;
  ids = {
    fn: logicalId(template, 'AWS::Lambda::Function', 'UploadsFunction'),
    role: logicalId(template, 'AWS::IAM::Role', 'UploadsRole'),
    bucket: logicalId(template, 'AWS::S3::Bucket', 'StorageCatalogue'),
    policy: logicalId(template, 'AWS::IAM::ManagedPolicy', 'UploadsUploadPolicy'),
    logs: logicalId(template, 'AWS::Logs::LogGroup', 'UploadsLogs'),
  };
}, 120_000);

const objects = (bucket: string, pattern: string) => ({
  'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, `/${pattern}`]],
});

describe('the upload builder function', () => {
  it('runs Node.js 24 on arm64, 3,008 MB, 15 minutes, one at a time, with its own log group', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Handler: 'index.handler',
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: 3008,
      Timeout: 900,
      ReservedConcurrentExecutions: 1,
      Role: { 'Fn::GetAtt': [ids.role, 'Arn'] },
      LoggingConfig: { LogGroup: { Ref: ids.logs } },
      Environment: {
        Variables: {
          CATALOGUE_BUCKET: { Ref: ids.bucket },
          CATALOGUE_PREFIX: 'catalogue/',
          INCOMING_PREFIX: 'incoming/',
          REPORTS_PREFIX: 'reports/',
          EVENT_BUS_NAME: 'default',
          BUILD_BUDGET_SECONDS: '600',
          // Source maps are read when a failed invocation's stack is logged, never at start.
          NODE_OPTIONS: Match.absent(),
        },
      },
    });
  });

  it('retries a failed upload twice, and keeps throttled ones queued for up to six hours', () => {
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: ids.fn },
      MaximumRetryAttempts: 2,
      MaximumEventAgeInSeconds: 21_600,
    });
  });

  it('is triggered by objects created under incoming/ ending in .tar.gz, and by nothing else', () => {
    template.hasResourceProperties('Custom::S3BucketNotifications', {
      BucketName: { Ref: ids.bucket },
      NotificationConfiguration: {
        LambdaFunctionConfigurations: [
          {
            Events: ['s3:ObjectCreated:*'],
            Filter: {
              Key: {
                FilterRules: [
                  { Name: 'suffix', Value: '.tar.gz' },
                  { Name: 'prefix', Value: 'incoming/' },
                ],
              },
            },
            LambdaFunctionArn: { 'Fn::GetAtt': [ids.fn, 'Arn'] },
          },
        ],
      },
    });
    template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [ids.fn, 'Arn'] },
      Principal: 's3.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [ids.bucket, 'Arn'] },
      SourceAccount: { Ref: 'AWS::AccountId' },
    });
  });

  it('its role: read uploads, write reports, publish under the catalogue prefix, list both, send events, send its failures to their queue; nothing else', () => {
    const statements = roleStatements(template, ids.role).map(({ Sid, Action, Resource, Condition }) => ({
      Sid,
      Action,
      Resource,
      Condition,
    }));

    expect(statements).toEqual([
      {
        Sid: 'WriteOwnLogs',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: { 'Fn::GetAtt': [ids.logs, 'Arn'] },
        Condition: undefined,
      },
      {
        Sid: 'ReadUploads',
        Action: 's3:GetObject',
        Resource: objects(ids.bucket, 'incoming/*'),
        Condition: undefined,
      },
      {
        Sid: 'WriteReports',
        Action: ['s3:GetObject', 's3:PutObject'],
        Resource: objects(ids.bucket, 'reports/*'),
        Condition: undefined,
      },
      {
        Sid: 'PublishCatalogue',
        Action: ['s3:DeleteObject', 's3:GetObject', 's3:PutObject'],
        Resource: objects(ids.bucket, 'catalogue/*'),
        Condition: undefined,
      },
      {
        Sid: 'ListUploadsAndCatalogue',
        Action: 's3:ListBucket',
        Resource: { 'Fn::GetAtt': [ids.bucket, 'Arn'] },
        Condition: { StringLike: { 's3:prefix': ['incoming/*', 'catalogue/*', 'reports/*'] } },
      },
      {
        Sid: 'SendUploadEvents',
        Action: 'events:PutEvents',
        Resource: {
          'Fn::Join': [
            '',
            [
              'arn:',
              { Ref: 'AWS::Partition' },
              ':events:',
              { Ref: 'AWS::Region' },
              ':',
              { Ref: 'AWS::AccountId' },
              ':event-bus/default',
            ],
          ],
        },
        Condition: undefined,
      },
      // The on-failure destination: Lambda sends a failed invocation's record with the function's role.
      {
        Sid: undefined,
        Action: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
        Resource: { 'Fn::GetAtt': [logicalId(template, 'AWS::SQS::Queue', 'UploadFailuresQueue'), 'Arn'] },
        Condition: undefined,
      },
    ]);
  });

  it('alarms on a failed build (any error of the function in 5 minutes), to the alarm topic', () => {
    const topic = { Ref: logicalId(template, 'AWS::SNS::Topic', 'AlarmTopic') };
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Catalogue-upload-build-failed',
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: ids.fn } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      TreatMissingData: 'notBreaching',
      AlarmActions: [topic],
      OKActions: [topic],
    });
  });
});

describe("the publisher's application: one policy", () => {
  it('allows uploading .tar.gz under incoming/ and reading reports, nothing else, and is output', () => {
    template.hasResourceProperties('AWS::IAM::ManagedPolicy', {
      PolicyDocument: {
        Statement: [
          {
            Sid: 'UploadSnapshots',
            Effect: 'Allow',
            Action: ['s3:AbortMultipartUpload', 's3:PutObject'],
            Resource: objects(ids.bucket, 'incoming/*.tar.gz'),
          },
          {
            Sid: 'ReadReports',
            Effect: 'Allow',
            Action: 's3:GetObject',
            Resource: objects(ids.bucket, 'reports/*'),
          },
        ],
      },
    });
    template.hasOutput('UploadPolicyArn', { Value: { Ref: ids.policy } });
    template.hasOutput('UploadUri', {
      Value: { 'Fn::Join': ['', ['s3://', { Ref: ids.bucket }, '/incoming/']] },
    });
    template.hasOutput('ReportsUri', {
      Value: { 'Fn::Join': ['', ['s3://', { Ref: ids.bucket }, '/reports/']] },
    });
    template.hasOutput('UploadEventPattern', { Value: JSON.stringify({ source: [EVENT_SOURCE] }) });
    template.hasOutput('UploadBuilderFunctionName', { Value: { Ref: ids.fn } });
    template.hasOutput('UploadBuilderLogGroupName', { Value: Match.anyValue() });
  });

  it('names the event source the builder sends', () => {
    expect(UPLOAD_EVENT_SOURCE).toBe(EVENT_SOURCE);
  });
});

describe('settings', () => {
  it('memory and timeout are checked; the catalogue prefix stays clear of the upload prefixes', () => {
    expect(resolveProps({ uploadBuilderMemorySize: 10_240 }).uploadBuilderMemorySize).toBe(10_240);
    expect(() => resolveProps({ uploadBuilderMemorySize: 512 })).toThrow(
      'uploadBuilderMemorySize must be an integer between 1024 and 10240 (got 512)',
    );
    expect(() => resolveProps({ uploadBuilderTimeoutSeconds: 901 })).toThrow(
      'uploadBuilderTimeoutSeconds must be an integer between 120 and 900 (got 901)',
    );
    expect(() => resolveProps({ cataloguePrefix: 'incoming/live/' })).toThrow(
      "cataloguePrefix must not contain or be under incoming/, where snapshots are uploaded and reports written (got 'incoming/live/')",
    );
  });
});

describe('the bundle', () => {
  it('stays within its budget and loads only Node.js built-ins (everything else is bundled)', () => {
    const bundle = bundledBuilder(synthesised.assemblyDir);
    const meta = JSON.parse(readFileSync(bundle.metafile, 'utf8'));
    // Only what Lambda loads is in the asset; the metafile is beside the assembly.
    expect(bundle.files).toEqual(['index.mjs', 'index.mjs.map']);
    const inputs = Object.values(
      meta.outputs as Record<string, { entryPoint?: string; inputs: object }>,
    ).find((output) => output.entryPoint)!.inputs;
    const packages = new Set(
      Object.keys(inputs).flatMap((file) =>
        [...file.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)/g)].map((m) => m[1]!),
      ),
    );
    const code = readFileSync(bundle.path, 'utf8');
    const loaded = [...code.matchAll(/(?:^|[;}\s])import\s*(?:[^'"()]*?from\s*)?["']([^"']+)["']/g)].map(
      (m) => m[1],
    );

    expect(bundle.bytes).toBeLessThanOrEqual(BUILDER_BUDGET_BYTES);
    expect(packages).toContain('@aws-sdk/client-s3');
    expect(packages).toContain('tar');
    expect(packages).not.toContain('esbuild');
    // No terminal code: the bar is builder/report/terminal.ts's, which only the CLIs import.
    expect(packages).not.toContain('cli-progress');
    expect(Object.keys(inputs).some((file) => file.endsWith('builder/report/terminal.ts'))).toBe(false);
    expect(loaded.filter((specifier) => !isBuiltin(specifier!))).toEqual([]);
  });

  it("starts without source maps, and maps a failed invocation's stack to the builder's sources then", () => {
    const bundle = bundledBuilder(synthesised.assemblyDir);
    // The asset as Lambda loads it, in a fresh node without --enable-source-maps; no CATALOGUE_BUCKET, so the
    // first invocation fails when it reads its settings.
    const script = `
      const { handler } = await import(${JSON.stringify(pathToFileURL(bundle.path).href)});
      try { await handler({ Records: [] }, { getRemainingTimeInMillis: () => 900000 }); }
      catch (error) { console.log(JSON.stringify({ message: error.message, stack: error.stack })); }`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1' },
      encoding: 'utf8',
    });
    const thrown = JSON.parse(out) as { message: string; stack: string };

    expect(thrown.message).toBe('CATALOGUE_BUCKET is not set');
    expect(thrown.stack).toMatch(/\n {4}at \w+ \((?:.*\/)?builder\/lambda\.ts:\d+:\d+\)/);
    expect(thrown.stack).not.toContain('index.mjs');
  });
});
