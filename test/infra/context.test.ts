/** CDK context → stack settings (infra/context.ts) and the settings' validation (infra/props.ts). */
import { RemovalPolicy } from 'aws-cdk-lib';
import { PriceClass } from 'aws-cdk-lib/aws-cloudfront';
import { describe, expect, it } from 'vitest';
import {
  closestSetting,
  DEFAULT_STACK_NAME,
  SETTING_NAMES,
  settingsFromContext,
  unknownSettings,
} from '../../infra/context.js';
import { DEFAULTS, resolveProps, SettingsError } from '../../infra/props.js';
import { cdkJsonContext } from './helpers.js';

const fromContext = (context: Record<string, unknown>) => settingsFromContext((key) => context[key]);

describe('settingsFromContext', () => {
  it('keeps every default when no context is given', () => {
    const settings = fromContext({});

    expect(settings).toEqual({ stackName: DEFAULT_STACK_NAME, props: {} });
  });

  it('parses strings, booleans, numbers and enums as given on the command line', () => {
    const settings = fromContext({
      stackName: 'CatalogueStaging',
      cataloguePrefix: 'staging/',
      domainName: 'api.example.com',
      certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc-123',
      alarmEmail: 'ops@example.com',
      publisherPrincipalArn: 'arn:aws:iam::123456789012:role/ci',
      deletionProtection: 'false',
      tracing: 'true',
      memorySize: '1024',
      reservedConcurrency: '50',
      wafRateLimitPer5Min: '2000',
      unauthorizedPerMinuteThreshold: '300',
      priceClass: 'PriceClass_All',
      removalPolicy: 'destroy',
      proxyDeployment: 'AllAtOnce',
    });

    expect(settings).toEqual({
      stackName: 'CatalogueStaging',
      props: {
        cataloguePrefix: 'staging/',
        domainName: 'api.example.com',
        certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc-123',
        alarmEmail: 'ops@example.com',
        publisherPrincipalArn: 'arn:aws:iam::123456789012:role/ci',
        deletionProtection: false,
        tracing: true,
        memorySize: 1024,
        reservedConcurrency: 50,
        wafRateLimitPer5Min: 2000,
        unauthorizedPerMinuteThreshold: 300,
        priceClass: PriceClass.PRICE_CLASS_ALL,
        removalPolicy: RemovalPolicy.DESTROY,
        proxyDeployment: 'AllAtOnce',
      },
    });
  });

  it('accepts typed values from cdk.json', () => {
    expect(fromContext({ tracing: true, memorySize: 768 }).props).toEqual({ tracing: true, memorySize: 768 });
  });

  it('keeps an empty cataloguePrefix (the bucket root) but ignores other empty values', () => {
    expect(fromContext({ cataloguePrefix: '', alarmEmail: '' }).props).toEqual({ cataloguePrefix: '' });
  });

  it.each([
    [{ tracing: 'yes' }, "context tracing must be true or false (got 'yes')"],
    [{ memorySize: '1GB' }, "context memorySize must be a number (got '1GB')"],
    [
      { priceClass: 'cheap' },
      "context priceClass must be one of PriceClass_100, PriceClass_200, PriceClass_All (got 'cheap')",
    ],
    [{ removalPolicy: 'snapshot' }, "context removalPolicy must be retain or destroy (got 'snapshot')"],
    [{ domainName: { name: 'x' } }, 'context domainName must be a string, number or boolean'],
  ])('refuses %o', (context, message) => {
    expect(() => fromContext(context)).toThrow(new SettingsError([message]));
  });

  it('names every bad value at once, one line each', () => {
    expect(() => fromContext({ tracing: 'yes', memorySize: '1GB', removalPolicy: 'snapshot' })).toThrow(
      new SettingsError([
        "context tracing must be true or false (got 'yes')",
        "context memorySize must be a number (got '1GB')",
        "context removalPolicy must be retain or destroy (got 'snapshot')",
      ]),
    );
  });
});

describe('context names', () => {
  /** What the CDK CLI passes besides cdk.json and `-c` (seen in the app's context at `npm run synth`). */
  const CLI_CONTEXT = [
    'aws:cdk:enable-path-metadata',
    'aws:cdk:enable-asset-metadata',
    'aws:cdk:version-reporting',
    'aws:cdk:bundling-stacks',
  ];

  it('takes every setting, the feature flags of cdk.json and what the CDK CLI adds', () => {
    expect(unknownSettings([...SETTING_NAMES, ...Object.keys(cdkJsonContext()), ...CLI_CONTEXT])).toEqual([]);
    expect(
      unknownSettings([
        'availability-zones:account=123456789012:region=eu-west-1',
        'acknowledged-issue-numbers',
      ]),
    ).toEqual([]);
  });

  it.each([
    ['alarmEmial', 'alarmEmail'],
    ['alarm-email', 'alarmEmail'],
    ['AlarmEmail', 'alarmEmail'],
    ['memorysize', 'memorySize'],
    ['prefix', undefined],
    ['cataloguePrfix', 'cataloguePrefix'],
    ['waf', undefined],
  ])('%s is taken for %s', (name, meant) => {
    expect(closestSetting(name)).toBe(meant);
  });

  it('refuses a name that is not a setting, with the closest one, among the other problems', () => {
    const context: Record<string, unknown> = { alarmEmial: 'ops@example.com', tracing: 'yes', nonsense: '1' };
    expect(() => settingsFromContext((key) => context[key], Object.keys(context))).toThrow(
      new SettingsError([
        "unknown setting 'alarmEmial' (-c alarmEmial=…): did you mean alarmEmail?",
        "unknown setting 'nonsense' (-c nonsense=…): the settings are listed in docs/operating.md",
        "context tracing must be true or false (got 'yes')",
      ]),
    );
  });
});

describe('resolveProps', () => {
  it('applies the documented defaults', () => {
    expect(resolveProps({})).toMatchObject(DEFAULTS);
    expect(DEFAULTS).toMatchObject({
      cataloguePrefix: 'catalogue/',
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
      memorySize: 512,
      timeoutSeconds: 10,
      logRetentionDays: 30,
      keyCacheTtlMs: 30_000,
      pointerTtlMs: 5_000,
      dependencyTimeoutMs: 2_000,
    });
  });

  it.each(['', 'catalogue/', 'a/b-c/', "x_y.z!'()/"])('accepts the prefix %j', (cataloguePrefix) => {
    expect(resolveProps({ cataloguePrefix }).cataloguePrefix).toBe(cataloguePrefix);
  });

  it('accepts a custom domain with a us-east-1 certificate', () => {
    const certificateArn = 'arn:aws:acm:us-east-1:123456789012:certificate/abc-123';
    expect(resolveProps({ domainName: 'api.example.com', certificateArn })).toMatchObject({
      domainName: 'api.example.com',
      certificateArn,
    });
  });
});
