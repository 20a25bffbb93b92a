/**
 * The stack's one dashboard, read from the synthesized body: every alarm's state, the proxy's requests by
 * status class and by route (its embedded metrics), latency p50/p99, cold starts, concurrency and throttles,
 * the requests by proxy version (a deploy's shift), both tables, CloudFront read in us-east-1 (where its
 * metrics are, whatever the stack's region), the admin API, uploads by outcome with their build time, and the
 * last uploads' live version.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { logicalId, synth } from './helpers.js';

type Metric = (string | Record<string, unknown>)[];
interface Widget {
  type: string;
  width: number;
  height: number;
  properties: {
    title?: string;
    region?: string;
    markdown?: string;
    alarms?: string[];
    metrics?: Metric[];
    query?: string;
    stacked?: boolean;
  };
}

/**
 * The dashboard's widgets: its body with each deploy-time value written `<Ref X>` or `<X.Attr>` (the body is
 * JSON joined with those values; none holds a quote).
 */
function widgets(template: Template): Widget[] {
  const [dashboard] = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
  const parts = dashboard!.Properties.DashboardBody['Fn::Join'][1] as unknown[];
  const text = parts
    .map((part) => {
      if (typeof part === 'string') return part;
      const token = part as { Ref?: string; 'Fn::GetAtt'?: string[] };
      return token.Ref ? `<Ref ${token.Ref}>` : `<${token['Fn::GetAtt']!.join('.')}>`;
    })
    .join('');
  return JSON.parse(text).widgets;
}

let template: Template;
let all: Widget[];
let byTitle: (start: string) => Widget;
let ids: Record<'proxy' | 'admin' | 'keys' | 'counters' | 'distribution' | 'uploadLogs', string>;

beforeAll(() => {
  template = synth({}, 'Catalogue', { bundle: false }).template;
  all = widgets(template);
  byTitle = (start) => {
    const found = all.filter((widget) => widget.properties.title?.startsWith(start));
    if (found.length !== 1) throw new Error(`expected one widget titled ${start}…, found ${found.length}`);
    return found[0]!;
  };
  ids = {
    proxy: logicalId(template, 'AWS::Lambda::Function', 'ProxyFunction'),
    admin: logicalId(template, 'AWS::Lambda::Function', 'AdminFunction'),
    keys: logicalId(template, 'AWS::DynamoDB::Table', 'StorageKeys'),
    counters: logicalId(template, 'AWS::DynamoDB::Table', 'StorageCounters'),
    distribution: logicalId(template, 'AWS::CloudFront::Distribution', 'EdgeDistribution'),
    uploadLogs: logicalId(template, 'AWS::Logs::LogGroup', 'UploadsLogs'),
  };
});

/** A widget's metrics as `namespace name dimension=value… statistic`, expressions as they are. */
const described = (widget: Widget) =>
  widget.properties.metrics!.map((metric) => {
    const options = metric.at(-1) as { stat?: string; expression?: string };
    if (options.expression) return options.expression;
    const [namespace, name, ...dimensions] = metric.slice(0, -1) as string[];
    const pairs = dimensions.flatMap((d, i) => (i % 2 === 0 ? [`${d}=${dimensions[i + 1]}`] : []));
    return [namespace, name, ...pairs, options.stat ?? 'Average'].join(' ');
  });

describe('the dashboard', () => {
  it('is one per stack and region, with every widget the operator needs, in this order', () => {
    template.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
      DashboardName: { 'Fn::Join': ['-', ['Catalogue', { Ref: 'AWS::Region' }]] },
    });
    expect(all.map((widget) => widget.properties.title ?? widget.type)).toEqual([
      'text',
      'Alarms',
      'Requests by status class (per minute)',
      'Requests by route and status class (per minute)',
      'Latency (ms): invocation and 2xx answers, p50 and p99',
      'Cold starts by proxy version (per 5 minutes)',
      'Concurrency (max) and throttles',
      'Requests by proxy version and status class: the live version, and a deploy moving to the next',
      'DynamoDB consumed capacity units (per minute)',
      'DynamoDB throttle events',
      'CloudFront requests (per minute; metrics of us-east-1)',
      'CloudFront error rate (%; metrics of us-east-1)',
      'Admin API calls (info answered, warn refused, error failed) and function errors',
      'Uploads by outcome (per hour)',
      'Upload build time (s, max per hour)',
      'Live catalogue version: the last uploads (a CLI publish is not here: catalogue versions lists all)',
    ]);
    template.hasOutput('DashboardUrl', {});
  });

  it('shows the state of every alarm of the stack', () => {
    const alarms = Object.keys(template.findResources('AWS::CloudWatch::Alarm'));

    expect(alarms).toHaveLength(15);
    expect(byTitle('Alarms').properties.alarms!.sort()).toEqual(alarms.map((id) => `<${id}.Arn>`).sort());
  });

  it('counts the proxy’s answers by status class (2xx, 304, 4xx, 429, 5xx) and by route, from its request lines', () => {
    expect(described(byTitle('Requests by status class'))).toEqual(
      ['2xx', '304', '4xx', '429', '5xx'].map(
        (statusClass) => `CatalogueReadApi/Catalogue latency_ms status_class=${statusClass} SampleCount`,
      ),
    );
    expect(byTitle('Requests by status class').properties.stacked).toBe(true);
    expect(described(byTitle('Requests by route'))).toEqual([
      `SEARCH('{CatalogueReadApi/Catalogue,route,status_class} MetricName="latency_ms"', 'SampleCount', 60)`,
    ]);
  });

  it('draws latency p50 and p99 (the invocation, and the 2xx answers) and the cold starts', () => {
    expect(described(byTitle('Latency'))).toEqual([
      `AWS/Lambda Duration FunctionName=<Ref ${ids.proxy}> p50`,
      `AWS/Lambda Duration FunctionName=<Ref ${ids.proxy}> p99`,
      'CatalogueReadApi/Catalogue latency_ms status_class=2xx p50',
      'CatalogueReadApi/Catalogue latency_ms status_class=2xx p99',
    ]);
    expect(described(byTitle('Cold starts'))).toEqual([
      `SEARCH('{CatalogueReadApi/Catalogue,version} MetricName="cold_start"', 'Sum', 300)`,
    ]);
  });

  it('draws concurrency and throttles, and the requests of each proxy version (a deploy’s canary)', () => {
    expect(described(byTitle('Concurrency'))).toEqual([
      `AWS/Lambda ConcurrentExecutions FunctionName=<Ref ${ids.proxy}> Maximum`,
      `AWS/Lambda Throttles FunctionName=<Ref ${ids.proxy}> Sum`,
    ]);
    expect(described(byTitle('Requests by proxy version'))).toEqual([
      `SEARCH('{CatalogueReadApi/Catalogue,version,status_class} MetricName="latency_ms"', 'SampleCount', 60)`,
    ]);
  });

  it('draws both tables’ consumed capacity and throttle events', () => {
    const both = (metric: string) => [
      `AWS/DynamoDB ${metric} TableName=<Ref ${ids.keys}> Sum`,
      `AWS/DynamoDB ${metric} TableName=<Ref ${ids.counters}> Sum`,
    ];
    expect(described(byTitle('DynamoDB consumed'))).toEqual([
      ...both('ConsumedReadCapacityUnits'),
      ...both('ConsumedWriteCapacityUnits'),
    ]);
    expect(described(byTitle('DynamoDB throttle'))).toEqual([
      ...both('ReadThrottleEvents'),
      ...both('WriteThrottleEvents'),
    ]);
  });

  it('reads CloudFront’s metrics in us-east-1, where CloudFront publishes them, whatever the stack’s region', () => {
    const distribution = `DistributionId=<Ref ${ids.distribution}> Region=Global`;
    for (const title of ['CloudFront requests', 'CloudFront error rate']) {
      const widget = byTitle(title);
      expect(widget.properties.region).toBe('us-east-1');
      for (const metric of widget.properties.metrics!)
        expect((metric.at(-1) as { region: string }).region).toBe('us-east-1');
    }
    expect(described(byTitle('CloudFront requests'))).toEqual([
      `AWS/CloudFront Requests ${distribution} Sum`,
    ]);
    expect(described(byTitle('CloudFront error rate'))).toEqual(
      ['4xxErrorRate', '5xxErrorRate', 'TotalErrorRate'].map(
        (m) => `AWS/CloudFront ${m} ${distribution} Average`,
      ),
    );
    // Every other widget reads the stack's own region.
    const others = all.filter((w) => w.type === 'metric' && !w.properties.title!.startsWith('CloudFront'));
    for (const widget of others) expect(widget.properties.region).toBe('<Ref AWS::Region>');
  });

  it('counts admin calls by how they ended, and the admin function’s errors', () => {
    expect(described(byTitle('Admin API calls'))).toEqual([
      'CatalogueReadApi/Catalogue AdminCalls level=info Sum',
      'CatalogueReadApi/Catalogue AdminCalls level=warn Sum',
      'CatalogueReadApi/Catalogue AdminCalls level=error Sum',
      `AWS/Lambda Errors FunctionName=<Ref ${ids.admin}> Sum`,
    ]);
  });

  it('counts uploads by outcome with their build time, and lists the last uploads with the version they left live', () => {
    expect(described(byTitle('Uploads by outcome'))).toEqual(
      ['published', 'unchanged', 'invalid', 'superseded', 'failed'].map(
        (outcome) => `CatalogueReadApi/Catalogue UploadSeconds outcome=${outcome} SampleCount`,
      ),
    );
    expect(described(byTitle('Upload build time'))).toEqual(
      ['published', 'unchanged', 'failed'].map(
        (outcome) => `CatalogueReadApi/Catalogue UploadSeconds outcome=${outcome} Maximum`,
      ),
    );
    const query = byTitle('Live catalogue version').properties.query!;
    expect(
      query.startsWith(`SOURCE '<Ref ${ids.uploadLogs}>' | fields @timestamp as at, outcome, version`),
    ).toBe(true);
  });

  it('says where CloudFront’s metrics come from', () => {
    expect(all[0]!.properties.markdown).toContain('us-east-1 only: those widgets read that region');
  });
});
