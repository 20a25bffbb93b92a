/**
 * One CloudWatch dashboard for the stack (docs/operating.md, "The dashboard"): the alarms, the API's requests
 * by status class and route, latency, cold starts, concurrency and throttles, the tables, CloudFront (whose
 * metrics exist only in us-east-1: those widgets read that region, whatever the stack's), the admin API,
 * uploads, and which proxy version serves and since when. The proxy's request metrics come from its log lines
 * (embedded metric format: no call on the request path); the admin API's and the uploads' from metric filters
 * (infra/log-metrics.ts).
 */
import { Aws, Duration, Fn, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ADMIN_LEVELS, type LogMetrics, UPLOAD_OUTCOMES } from './log-metrics.js';
import { metricsNamespace, REQUEST_METRICS, requestMetric } from './request-metrics.js';

/** CloudFront publishes its metrics in this region only (dimension Region: Global). */
export const CLOUDFRONT_METRICS_REGION = 'us-east-1';

const MINUTE = Duration.minutes(1);
const FULL = 24;
const HALF = 12;
const THIRD = 8;

/** A SEARCH's lines named by their dimensions' values (CloudWatch's dynamic labels). */
function dimensionsLabel(keys: string[]): string {
  return keys.map((key) => `${key} \${PROP('Dim.${key}')}`).join(' ');
}

export interface DashboardProps {
  readonly proxy: lambda.IFunction;
  readonly admin: lambda.IFunction;
  readonly keysTable: dynamodb.ITable;
  readonly countersTable: dynamodb.ITable;
  readonly distributionId: string;
  readonly logMetrics: LogMetrics;
  /** The upload builder's log group: the live version as the last uploads left it. */
  readonly uploadLogGroup: logs.ILogGroup;
  /** Every alarm of the stack, shown first. */
  readonly alarms: cloudwatch.IAlarm[];
  /** The proxy's reserved concurrency, drawn as a line on the concurrency graph. */
  readonly reservedConcurrency?: number;
}

export class Dashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const stackName = Stack.of(this).stackName;
    this.dashboard = new cloudwatch.Dashboard(this, 'Resource', {
      // Dashboards are listed per account: the region in the name lets one stack name live in two regions.
      dashboardName: Fn.join('-', [stackName, Aws.REGION]),
      defaultInterval: Duration.hours(6),
    });
    this.dashboard.addWidgets(...this.#heading(stackName, props.alarms));
    this.dashboard.addWidgets(...this.#requests());
    this.dashboard.addWidgets(...this.#latency(props.proxy));
    this.dashboard.addWidgets(...this.#capacity(props.proxy, props.reservedConcurrency));
    this.dashboard.addWidgets(...this.#tables(props.keysTable, props.countersTable));
    this.dashboard.addWidgets(...this.#cloudFront(props.distributionId));
    this.dashboard.addWidgets(...this.#adminAndUploads(props));
  }

  /** What the dashboard is and where CloudFront's metrics come from; every alarm's state. */
  #heading(stackName: string, alarms: cloudwatch.IAlarm[]): cloudwatch.IWidget[] {
    return [
      new cloudwatch.TextWidget({
        width: HALF,
        height: 4,
        markdown: [
          `# Catalogue Read API: ${stackName}`,
          "Requests are the proxy's own count (one log line per request, with its metrics embedded): the",
          "edge's 401s and 405s never reach it, CloudFront's widgets count them. CloudFront publishes its",
          `metrics in ${CLOUDFRONT_METRICS_REGION} only: those widgets read that region whatever the stack's.`,
          'The operator\'s guide (docs/operating.md, "The dashboard") explains each widget.',
        ].join('\n'),
      }),
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', alarms, width: HALF, height: 4 }),
    ];
  }

  /** The proxy's answers by status class, and by route and status class. */
  #requests(): cloudwatch.IWidget[] {
    const byClass = REQUEST_METRICS.statusClasses.map((statusClass) =>
      requestMetric(this, { status_class: statusClass }, cloudwatch.Stats.SAMPLE_COUNT, {
        period: MINUTE,
        label: statusClass,
      }),
    );
    return [
      new cloudwatch.GraphWidget({
        title: 'Requests by status class (per minute)',
        left: byClass,
        stacked: true,
        width: HALF,
      }),
      new cloudwatch.GraphWidget({
        title: 'Requests by route and status class (per minute)',
        left: [this.#search(['route', 'status_class'])],
        width: HALF,
      }),
    ];
  }

  /** Duration p50/p99 (the invocation, streaming included) and the proxy's own latency; cold starts. */
  #latency(proxy: lambda.IFunction): cloudwatch.IWidget[] {
    const duration = (statistic: string) =>
      proxy.metricDuration({ statistic, period: MINUTE, label: `invocation ${statistic}` });
    const answered = (statistic: string) =>
      requestMetric(this, { status_class: '2xx' }, statistic, {
        period: MINUTE,
        label: `2xx answer ${statistic}`,
      });
    return [
      new cloudwatch.GraphWidget({
        title: 'Latency (ms): invocation and 2xx answers, p50 and p99',
        left: [duration('p50'), duration('p99'), answered('p50'), answered('p99')],
        width: HALF,
      }),
      new cloudwatch.GraphWidget({
        title: 'Cold starts by proxy version (per 5 minutes)',
        left: [
          new cloudwatch.MathExpression({
            expression: this.#searchText(['version'], REQUEST_METRICS.coldStart, 'Sum', 300),
            usingMetrics: {},
            label: dimensionsLabel(['version']),
            period: Duration.minutes(5),
          }),
        ],
        width: HALF,
      }),
    ];
  }

  /** Concurrency and throttles; which proxy version answers, by status class (a deploy's canary shows here). */
  #capacity(proxy: lambda.IFunction, reservedConcurrency?: number): cloudwatch.IWidget[] {
    return [
      new cloudwatch.GraphWidget({
        title: 'Concurrency (max) and throttles',
        left: [proxy.metric('ConcurrentExecutions', { statistic: cloudwatch.Stats.MAXIMUM, period: MINUTE })],
        right: [proxy.metricThrottles({ statistic: cloudwatch.Stats.SUM, period: MINUTE })],
        ...(reservedConcurrency !== undefined && {
          leftAnnotations: [{ value: reservedConcurrency, label: 'reserved concurrency' }],
        }),
        width: HALF,
      }),
      new cloudwatch.GraphWidget({
        title:
          'Requests by proxy version and status class: the live version, and a deploy moving to the next',
        left: [this.#search(['version', 'status_class'])],
        width: HALF,
      }),
    ];
  }

  /** Both tables' consumed capacity and throttle events. */
  #tables(keys: dynamodb.ITable, counters: dynamodb.ITable): cloudwatch.IWidget[] {
    const metric = (table: dynamodb.ITable, name: string, metricName: string) =>
      table.metric(metricName, {
        statistic: cloudwatch.Stats.SUM,
        period: MINUTE,
        label: `${name} ${metricName}`,
      });
    const both = (metricName: string) => [
      metric(keys, 'keys', metricName),
      metric(counters, 'counters', metricName),
    ];
    return [
      new cloudwatch.GraphWidget({
        title: 'DynamoDB consumed capacity units (per minute)',
        left: [...both('ConsumedReadCapacityUnits'), ...both('ConsumedWriteCapacityUnits')],
        width: HALF,
      }),
      new cloudwatch.GraphWidget({
        title: 'DynamoDB throttle events',
        left: [...both('ReadThrottleEvents'), ...both('WriteThrottleEvents')],
        width: HALF,
      }),
    ];
  }

  /** CloudFront's requests and error rates, read in us-east-1. */
  #cloudFront(distributionId: string): cloudwatch.IWidget[] {
    const metric = (metricName: string, statistic: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/CloudFront',
        metricName,
        dimensionsMap: { DistributionId: distributionId, Region: 'Global' },
        statistic,
        period: MINUTE,
        region: CLOUDFRONT_METRICS_REGION,
      });
    return [
      new cloudwatch.GraphWidget({
        title: `CloudFront requests (per minute; metrics of ${CLOUDFRONT_METRICS_REGION})`,
        region: CLOUDFRONT_METRICS_REGION,
        left: [metric('Requests', cloudwatch.Stats.SUM)],
        width: HALF,
      }),
      new cloudwatch.GraphWidget({
        title: `CloudFront error rate (%; metrics of ${CLOUDFRONT_METRICS_REGION})`,
        region: CLOUDFRONT_METRICS_REGION,
        left: [
          metric('4xxErrorRate', cloudwatch.Stats.AVERAGE),
          metric('5xxErrorRate', cloudwatch.Stats.AVERAGE),
          metric('TotalErrorRate', cloudwatch.Stats.AVERAGE),
        ],
        width: HALF,
      }),
    ];
  }

  /** Admin calls by level and the function's errors; uploads by outcome, their build time, the last reports. */
  #adminAndUploads(props: DashboardProps): cloudwatch.IWidget[] {
    const { logMetrics } = props;
    return [
      new cloudwatch.GraphWidget({
        title: 'Admin API calls (info answered, warn refused, error failed) and function errors',
        left: ADMIN_LEVELS.map((level) => logMetrics.adminCalls(level)),
        right: [props.admin.metricErrors({ statistic: cloudwatch.Stats.SUM, label: 'function errors' })],
        width: THIRD,
      }),
      new cloudwatch.GraphWidget({
        title: 'Uploads by outcome (per hour)',
        left: UPLOAD_OUTCOMES.map((outcome) => logMetrics.uploads(outcome, cloudwatch.Stats.SAMPLE_COUNT)),
        stacked: true,
        width: THIRD,
      }),
      new cloudwatch.GraphWidget({
        title: 'Upload build time (s, max per hour)',
        left: (['published', 'unchanged', 'failed'] as const).map((outcome) =>
          logMetrics.uploads(outcome, cloudwatch.Stats.MAXIMUM),
        ),
        width: THIRD,
      }),
      new cloudwatch.LogQueryWidget({
        title:
          'Live catalogue version: the last uploads (a CLI publish is not here: catalogue versions lists all)',
        logGroupNames: [props.uploadLogGroup.logGroupName],
        queryLines: [
          'fields @timestamp as at, outcome, version, previous_version, seconds, upload',
          'filter ispresent(outcome) and ispresent(upload)',
          'sort @timestamp desc',
          'limit 10',
        ],
        view: cloudwatch.LogQueryVisualizationType.TABLE,
        width: FULL,
      }),
    ];
  }

  /** The proxy's requests per minute under every combination of the dimensions `keys` (one line each). */
  #search(keys: string[]): cloudwatch.IMetric {
    return new cloudwatch.MathExpression({
      expression: this.#searchText(keys, REQUEST_METRICS.latency, cloudwatch.Stats.SAMPLE_COUNT, 60),
      label: dimensionsLabel(keys),
      usingMetrics: {},
      period: MINUTE,
    });
  }

  /** A SEARCH of the proxy's metric `metricName` with exactly the dimensions `keys`. */
  #searchText(keys: string[], metricName: string, statistic: string, seconds: number): string {
    const schema = [metricsNamespace(this), ...keys].join(',');
    return `SEARCH('{${schema}} MetricName="${metricName}"', '${statistic}', ${seconds})`;
  }
}
