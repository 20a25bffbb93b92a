/**
 * The settings that cut the price at volume (docs/operating.md, "Cost at volume"): the counters table
 * provisioned with auto scaling (`countersCapacity`, `countersMinWriteCapacity`, `countersMaxWriteCapacity`),
 * the proxy without Lambda's platform log lines (`proxySystemLogLevel`); their defaults, their checks.
 */
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { settingsFromContext } from '../../infra/context.js';
import { type CatalogueStackProps, resolveProps, SettingsError } from '../../infra/props.js';
import { CatalogueStack } from '../../infra/stack.js';
import { cdkJsonContext, logicalId } from './helpers.js';

/** The template for `props`, without bundling the functions (these settings change no asset): seconds. */
function template(props: CatalogueStackProps = {}): Template {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new CatalogueStack(app, 'Catalogue', props));
}

/** The problems `resolveProps` names for `props`. */
function problems(props: Parameters<typeof resolveProps>[0]): readonly string[] {
  try {
    resolveProps(props);
    return [];
  } catch (error) {
    if (error instanceof SettingsError) return error.problems;
    throw error;
  }
}

describe('by default', () => {
  let synthesized: Template;
  beforeAll(() => {
    synthesized = template();
  });

  it('meters on demand, with nothing to scale', () => {
    const counters = logicalId(synthesized, 'AWS::DynamoDB::Table', 'StorageCounters');
    expect(synthesized.toJSON().Resources[counters].Properties.BillingMode).toBe('PAY_PER_REQUEST');
    synthesized.resourceCountIs('AWS::ApplicationAutoScaling::ScalableTarget', 0);
  });

  it("keeps Lambda's log format and levels (plain text, START/END/REPORT lines)", () => {
    const fn = logicalId(synthesized, 'AWS::Lambda::Function', 'ProxyFunction');
    const config = synthesized.toJSON().Resources[fn].Properties.LoggingConfig;
    expect(Object.keys(config)).toEqual(['LogGroup']);
  });
});

describe('countersCapacity=provisioned and proxySystemLogLevel=WARN', () => {
  let synthesized: Template;
  let ids: { counters: string; keys: string; proxy: string };
  beforeAll(() => {
    synthesized = template({
      countersCapacity: 'provisioned',
      countersMinWriteCapacity: 40,
      countersMaxWriteCapacity: 900,
      proxySystemLogLevel: 'WARN',
    });
    ids = {
      counters: logicalId(synthesized, 'AWS::DynamoDB::Table', 'StorageCounters'),
      keys: logicalId(synthesized, 'AWS::DynamoDB::Table', 'StorageKeys'),
      proxy: logicalId(synthesized, 'AWS::Lambda::Function', 'ProxyFunction'),
    };
  });

  it('provisions the counters table (the keys table stays on demand)', () => {
    const resources = synthesized.toJSON().Resources;
    expect(resources[ids.counters].Properties.BillingMode).toBe(undefined);
    expect(resources[ids.counters].Properties.ProvisionedThroughput).toEqual({
      ReadCapacityUnits: 5,
      WriteCapacityUnits: 40,
    });
    expect(resources[ids.counters].Properties.TimeToLiveSpecification).toEqual({
      AttributeName: 'expires_at',
      Enabled: true,
    });
    expect(resources[ids.keys].Properties.BillingMode).toBe('PAY_PER_REQUEST');
  });

  it('scales its writes between the minimum and the maximum, and its reads between 5 and 500, at 70 %', () => {
    const table = { 'Fn::Join': ['', ['table/', { Ref: ids.counters }]] };
    synthesized.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      ServiceNamespace: 'dynamodb',
      ScalableDimension: 'dynamodb:table:WriteCapacityUnits',
      ResourceId: table,
      MinCapacity: 40,
      MaxCapacity: 900,
    });
    synthesized.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', {
      ScalableDimension: 'dynamodb:table:ReadCapacityUnits',
      ResourceId: table,
      MinCapacity: 5,
      MaxCapacity: 500,
    });
    for (const metric of ['DynamoDBWriteCapacityUtilization', 'DynamoDBReadCapacityUtilization']) {
      synthesized.hasResourceProperties('AWS::ApplicationAutoScaling::ScalingPolicy', {
        PolicyType: 'TargetTrackingScaling',
        TargetTrackingScalingPolicyConfiguration: {
          PredefinedMetricSpecification: { PredefinedMetricType: metric },
          TargetValue: 70,
        },
      });
    }
    synthesized.resourceCountIs('AWS::ApplicationAutoScaling::ScalableTarget', 2);
  });

  it("logs the proxy's lines as JSON without Lambda's platform lines, and only the proxy's", () => {
    synthesized.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('^Catalogue Read API proxy'),
      LoggingConfig: {
        LogFormat: 'JSON',
        SystemLogLevel: 'WARN',
        ApplicationLogLevel: 'INFO',
        LogGroup: Match.anyValue(),
      },
    });
    const functions = Object.values(synthesized.findResources('AWS::Lambda::Function'));
    const json = functions.filter((fn) => fn.Properties.LoggingConfig?.LogFormat === 'JSON');
    expect(json.map((fn) => fn.Properties.Description)).toEqual([
      expect.stringMatching(/^Catalogue Read API proxy/),
    ]);
  });
});

describe('their checks', () => {
  it('name a mistyped choice with the one meant', () => {
    expect(problems({ countersCapacity: 'provisoned' as 'provisioned' })).toEqual([
      "countersCapacity must be on-demand or provisioned (got 'provisoned'): did you mean provisioned?",
    ]);
    expect(problems({ proxySystemLogLevel: 'warn' as 'WARN' })).toEqual([
      "proxySystemLogLevel must be DEBUG, INFO or WARN (got 'warn'): did you mean WARN?",
    ]);
    expect(problems({ countersCapacity: 'reserved' as 'provisioned' })).toEqual([
      "countersCapacity must be on-demand or provisioned (got 'reserved')",
    ]);
  });

  it('refuse write capacities out of bounds, crossed, or given without provisioned capacity', () => {
    expect(problems({ countersCapacity: 'provisioned', countersMinWriteCapacity: 0 })).toEqual([
      'countersMinWriteCapacity must be an integer between 1 and 40000 (got 0)',
    ]);
    expect(
      problems({
        countersCapacity: 'provisioned',
        countersMinWriteCapacity: 500,
        countersMaxWriteCapacity: 100,
      }),
    ).toEqual(['countersMinWriteCapacity (500) must not exceed countersMaxWriteCapacity (100)']);
    expect(problems({ countersMaxWriteCapacity: 100 })).toEqual([
      'countersMaxWriteCapacity applies only with countersCapacity=provisioned',
    ]);
    expect(problems({ countersCapacity: 'provisioned', countersMaxWriteCapacity: 40_001 })).toEqual([
      'countersMaxWriteCapacity must be an integer between 1 and 40000 (got 40001)',
    ]);
  });

  it('take them from CDK context, and a mistyped name with the one meant', () => {
    const context: Record<string, string> = {
      countersCapacity: 'provisioned',
      countersMaxWriteCapacity: '800',
      proxySystemLogLevel: 'WARN',
    };
    const { props } = settingsFromContext((key) => context[key], Object.keys(context));

    expect(props).toEqual({
      countersCapacity: 'provisioned',
      countersMaxWriteCapacity: 800,
      proxySystemLogLevel: 'WARN',
    });
    expect(() => settingsFromContext(() => undefined, ['countersCapacty'])).toThrow(
      "unknown setting 'countersCapacty' (-c countersCapacty=…): did you mean countersCapacity?",
    );
  });
});
