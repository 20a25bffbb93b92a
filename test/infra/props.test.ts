/** The stack with every optional setting, and the settings it refuses (before any synthesis). */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CatalogueStackProps,
  PROXY_DEPLOYMENTS,
  type ProxyDeployment,
  resolveProps,
  SettingsError,
} from '../../infra/props.js';
import { CatalogueStack } from '../../infra/stack.js';
import {
  ALL_OPTIONS,
  CERTIFICATE,
  logicalId,
  newApp,
  PUBLISHER,
  roleStatements,
  synth,
  WEB_ACL,
} from './helpers.js';

describe('with every option', () => {
  let template: Template;
  let bucket: string;
  beforeAll(() => {
    template = synth(ALL_OPTIONS, 'Catalogue', { bundle: false }).template;
    bucket = logicalId(template, 'AWS::S3::Bucket', 'StorageCatalogue');
  });

  it('serves the custom domain with its certificate and TLS 1.2 (2021) at least', () => {
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        Aliases: ['api.example.com'],
        ViewerCertificate: {
          AcmCertificateArn: CERTIFICATE,
          MinimumProtocolVersion: 'TLSv1.2_2021',
          SslSupportMethod: 'sni-only',
        },
        WebACLId: WEB_ACL,
        PriceClass: 'PriceClass_All',
      }),
    });
    template.hasOutput('ApiUrl', { Value: 'https://api.example.com/v1' });
  });

  it('mails every alarm and recovery to the alarm address', () => {
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
    const topic = { Ref: logicalId(template, 'AWS::SNS::Topic', 'AlarmTopic') };
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((r) => r.Properties);
    // The proxy's six, the admin API's, a deploy's four, the upload builder's three, the scheduled check's.
    expect(alarms).toHaveLength(15);
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual([topic]);
      expect(alarm.OKActions).toEqual([topic]);
    }
    template.hasOutput('AlarmTopicArn', { Value: topic });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Catalogue-proxy-5xx-rate',
      Threshold: 2,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Catalogue-proxy-p99-duration',
      Threshold: 1500,
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Catalogue-proxy-401-rate',
      Threshold: 120,
    });
  });

  it('switches a deploy all at once when asked, still through CodeDeploy and its alarms', () => {
    template.hasResourceProperties('AWS::CodeDeploy::DeploymentGroup', {
      DeploymentConfigName: 'CodeDeployDefault.LambdaAllAtOnce',
      AlarmConfiguration: Match.objectLike({ Enabled: true }),
    });
  });

  it('scopes both roles to the configured prefix', () => {
    const objects = { 'Fn::Join': ['', [{ 'Fn::GetAtt': [bucket, 'Arn'] }, '/data/v1/*']] };
    const prefixCondition = { StringLike: { 's3:prefix': ['data/v1/*'] } };
    const proxy = roleStatements(template, logicalId(template, 'AWS::IAM::Role', 'ProxyRole'));
    const publisher = roleStatements(template, logicalId(template, 'AWS::IAM::Role', 'PublisherRole'));

    expect(proxy.find((s) => s.Sid === 'ReadPublishedObjects')?.Resource).toEqual(objects);
    expect(proxy.find((s) => s.Sid === 'ListPublishedObjects')?.Condition).toEqual(prefixCondition);
    expect(publisher.find((s) => s.Sid === 'WriteCatalogueObjects')?.Resource).toEqual(objects);
    expect(publisher.find((s) => s.Sid === 'ListCatalogueObjects')?.Condition).toEqual(prefixCondition);
    template.hasOutput('CataloguePrefix', { Value: 'data/v1/' });
  });

  it('lets only the given principal assume the publisher role', () => {
    template.hasResourceProperties('AWS::IAM::Role', {
      AssumeRolePolicyDocument: {
        Statement: [{ Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { AWS: PUBLISHER } }],
      },
    });
  });

  it('traces with X-Ray and applies the Lambda settings', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      MemorySize: 1024,
      Timeout: 15,
      ReservedConcurrentExecutions: 20,
      TracingConfig: { Mode: 'Active' },
      Environment: {
        Variables: Match.objectLike({
          CATALOGUE_PREFIX: 'data/v1/',
          KEY_CACHE_TTL_MS: '10000',
          POINTER_TTL_MS: '1000',
          DEPENDENCY_TIMEOUT_MS: '3000',
        }),
      },
    });
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
    const proxyActions = roleStatements(template, logicalId(template, 'AWS::IAM::Role', 'ProxyRole')).flatMap(
      (s) => s.Action,
    );
    expect(proxyActions).toEqual(
      expect.arrayContaining(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']),
    );
  });

  it('turns deletion protection off and lets data go with the stack when asked', () => {
    for (const table of Object.values(template.findResources('AWS::DynamoDB::Table'))) {
      expect(table.Properties.DeletionProtectionEnabled).toBe(false);
      expect(table.DeletionPolicy).toBe('Delete');
    }
    for (const b of Object.values(template.findResources('AWS::S3::Bucket')))
      expect(b.DeletionPolicy).toBe('Delete');
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: [Match.objectLike({ ExpirationInDays: 30 })] },
    });
  });
});

describe('at the bucket root', () => {
  it('grants ListBucket without a prefix condition (an empty prefix would match nothing)', () => {
    const template = synth({ cataloguePrefix: '' }, 'Root', { bundle: false }).template;

    const proxy = roleStatements(template, logicalId(template, 'AWS::IAM::Role', 'ProxyRole'));
    expect(proxy.find((s) => s.Sid === 'ListPublishedObjects')).toEqual({
      Sid: 'ListPublishedObjects',
      Effect: 'Allow',
      Action: 's3:ListBucket',
      Resource: { 'Fn::GetAtt': [logicalId(template, 'AWS::S3::Bucket', 'StorageCatalogue'), 'Arn'] },
    });
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ CATALOGUE_PREFIX: '' }) },
    });
  });
});

describe('invalid settings', () => {
  it.each<[CatalogueStackProps, string]>([
    [
      { cataloguePrefix: 'catalogue' },
      "cataloguePrefix must be '' or path segments each ending in '/', of letters, digits and !_.'()- (got 'catalogue')",
    ],
    [
      { cataloguePrefix: '/catalogue/' },
      "cataloguePrefix must be '' or path segments each ending in '/', of letters, digits and !_.'()- (got '/catalogue/')",
    ],
    [
      { cataloguePrefix: 'cat*/' },
      "cataloguePrefix must be '' or path segments each ending in '/', of letters, digits and !_.'()- (got 'cat*/')",
    ],
    [{ domainName: 'api.example.com' }, 'domainName and certificateArn must be given together'],
    [{ certificateArn: CERTIFICATE }, 'domainName and certificateArn must be given together'],
    [
      { domainName: 'API.example.com', certificateArn: CERTIFICATE },
      "domainName must be a lower-case DNS name such as api.example.com (got 'API.example.com')",
    ],
    [
      { domainName: 'api.example.com', certificateArn: 'arn:aws:iam::123456789012:server-certificate/x' },
      "certificateArn must be the ARN of an ACM certificate (got 'arn:aws:iam::123456789012:server-certificate/x')",
    ],
    [
      { domainName: 'api.example.com', certificateArn: CERTIFICATE.replace('us-east-1', 'eu-west-1') },
      'certificateArn must be a certificate in us-east-1, the only region CloudFront uses (got eu-west-1)',
    ],
    [{ alarmEmail: 'ops' }, "alarmEmail must be an e-mail address (got 'ops')"],
    [
      { publisherPrincipalArn: 'ci-role' },
      "publisherPrincipalArn must be the ARN of an IAM role, user or account root (got 'ci-role')",
    ],
    [{ memorySize: 64 }, 'memorySize must be an integer between 128 and 10240 (got 64)'],
    [{ timeoutSeconds: 1000 }, 'timeoutSeconds must be an integer between 1 and 900 (got 1000)'],
    [{ reservedConcurrency: 0 }, 'reservedConcurrency must be an integer between 1 and 100000 (got 0)'],
    [
      { logRetentionDays: 2 },
      'logRetentionDays must be one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653 (got 2)',
    ],
    [{ accessLogRetentionDays: 0 }, 'accessLogRetentionDays must be an integer between 1 and 3650 (got 0)'],
    [{ keyCacheTtlMs: -1 }, 'keyCacheTtlMs must be an integer between 0 and 3600000 (got -1)'],
    [{ pointerTtlMs: 1.5 }, 'pointerTtlMs must be an integer between 0 and 3600000 (got 1.5)'],
    [{ dependencyTimeoutMs: 0 }, 'dependencyTimeoutMs must be an integer between 1 and 60000 (got 0)'],
    [
      { timeoutSeconds: 8, dependencyTimeoutMs: 2_000 },
      'timeoutSeconds (8) must exceed four dependency timeouts (4 × 2000 ms)',
    ],
    [
      { webAclArn: WEB_ACL, wafRateLimitPer5Min: 2_000 },
      'webAclArn and wafRateLimitPer5Min exclude each other: give one web ACL or the other',
    ],
    [{ wafRateLimitPer5Min: 5 }, 'wafRateLimitPer5Min must be an integer between 10 and 2000000000 (got 5)'],
    [
      { unauthorizedPerMinuteThreshold: 0 },
      'unauthorizedPerMinuteThreshold must be an integer between 1 and 100000000 (got 0)',
    ],
    [{ errorRateThresholdPercent: 0 }, 'errorRateThresholdPercent must be above 0 and at most 100 (got 0)'],
    [
      { p99DurationThresholdMs: 20_000 },
      'p99DurationThresholdMs must be an integer between 1 and 10000 (got 20000)',
    ],
    [
      { proxyDeployment: 'Canary10Percent5Minute' as ProxyDeployment },
      `proxyDeployment must be ${PROXY_DEPLOYMENTS.slice(0, -1).join(', ')} or AllAtOnce (got 'Canary10Percent5Minute'): did you mean Canary10Percent5Minutes?`,
    ],
    [
      { proxyDeployment: 'allatonce' as ProxyDeployment },
      `proxyDeployment must be ${PROXY_DEPLOYMENTS.slice(0, -1).join(', ')} or AllAtOnce (got 'allatonce'): did you mean AllAtOnce?`,
    ],
    [
      { proxyDeployment: 'blue-green' as ProxyDeployment },
      `proxyDeployment must be ${PROXY_DEPLOYMENTS.slice(0, -1).join(', ')} or AllAtOnce (got 'blue-green')`,
    ],
  ])('refuses %o, with that one problem', (props, message) => {
    const refused = (() => {
      try {
        new CatalogueStack(newApp(), 'Invalid', props);
      } catch (error) {
        return error;
      }
    })();
    expect(refused).toBeInstanceOf(SettingsError);
    expect((refused as SettingsError).problems).toEqual([message]);
  });

  it('names every bad setting at once, one line each', () => {
    expect(() => resolveProps({ memorySize: 64, alarmEmail: 'ops', keyCacheTtlMs: -1 })).toThrow(
      new SettingsError([
        "alarmEmail must be an e-mail address (got 'ops')",
        'memorySize must be an integer between 128 and 10240 (got 64)',
        'keyCacheTtlMs must be an integer between 0 and 3600000 (got -1)',
      ]),
    );
  });
});

describe('with a rate-based web ACL (wafRateLimitPer5Min)', () => {
  let template: Template;
  beforeAll(() => {
    const app = newApp({ bundle: false });
    template = Template.fromStack(new CatalogueStack(app, 'Waf', { wafRateLimitPer5Min: 2_000 }));
  });

  it('creates a CLOUDFRONT web ACL with one rate-based rule per client IP, answering 429 in the envelope', () => {
    template.resourceCountIs('AWS::WAFv2::WebACL', 1);
    const acl = Object.values(template.findResources('AWS::WAFv2::WebACL'))[0]!.Properties;

    expect(acl.Scope).toBe('CLOUDFRONT');
    expect(acl.DefaultAction).toEqual({ Allow: {} });
    expect(acl.Rules).toEqual([
      expect.objectContaining({
        Name: 'RateLimitPerIp',
        Statement: {
          RateBasedStatement: { Limit: 2000, AggregateKeyType: 'IP', EvaluationWindowSec: 300 },
        },
        Action: {
          Block: { CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'RateLimited' } },
        },
      }),
    ]);
    const body = JSON.parse(acl.CustomResponseBodies.RateLimited.Content);
    expect(body.error).toMatchObject({
      code: 'rate_limit_exceeded',
      request_id: expect.stringMatching(/^req_/),
    });
  });

  it('attaches it to the distribution', () => {
    const acl = logicalId(template, 'AWS::WAFv2::WebACL', 'EdgeWebAcl');
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({ WebACLId: { 'Fn::GetAtt': [acl, 'Arn'] } }),
    });
    template.hasOutput('WebAclArn', { Value: { 'Fn::GetAtt': [acl, 'Arn'] } });
  });

  it('stops a deployment outside us-east-1 with a message naming webAclArn', () => {
    const rules = template.toJSON().Rules;
    const [, rule] = Object.entries(rules as Record<string, { Assertions: unknown[] }>).find(([id]) =>
      id.startsWith('EdgeWebAclRegion'),
    )!;

    expect(rule.Assertions).toEqual([
      {
        Assert: { 'Fn::Equals': [{ Ref: 'AWS::Region' }, 'us-east-1'] },
        AssertDescription: expect.stringContaining('pass its ARN as webAclArn'),
      },
    ]);
  });

  it('refuses at synthesis a stack bound to another region', () => {
    expect(
      () =>
        new CatalogueStack(newApp(), 'WafEu', {
          wafRateLimitPer5Min: 2_000,
          env: { account: '123456789012', region: 'eu-west-1' },
        }),
    ).toThrow(
      'wafRateLimitPer5Min creates a CloudFront web ACL, which AWS WAF allows only in us-east-1: deploy this stack in us-east-1, or create the web ACL there and pass its ARN as webAclArn (region eu-west-1)',
    );
  });

  it('is absent by default', () => {
    expect(
      Object.keys(
        Template.fromStack(new CatalogueStack(newApp({ bundle: false }), 'NoWaf')).findResources(
          'AWS::WAFv2::WebACL',
        ),
      ),
    ).toEqual([]);
  });
});
