/**
 * The proxy's, the tables' and the admin API's alarms an operator acts on (docs/operating.md has a runbook
 * section for each one, which its description links to); infra/alarm-topic.ts sends each to the alarm topic.
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { LogMetrics } from './log-metrics.js';
import { runbookDescription } from './runbook.js';

export interface AlarmsProps {
  readonly proxy: lambda.IFunction;
  readonly keysTable: dynamodb.ITable;
  readonly countersTable: dynamodb.ITable;
  /**
   * Percentage of 5xx answers per 5 minutes that raises the error-rate alarm.
   * @default 5
   */
  readonly errorRateThresholdPercent?: number;
  /**
   * p99 duration in milliseconds per 5 minutes that raises the latency alarm.
   * @default 2000
   */
  readonly p99DurationThresholdMs?: number;
  /** The proxy's log group (one JSON line per request): the 401 alarm counts its lines. */
  readonly proxyLogGroup: logs.ILogGroup;
  /**
   * 401 answers of the proxy per minute, averaged over 5 minutes, that raise the unauthorized-rate alarm.
   * @default 600
   */
  readonly unauthorizedPerMinuteThreshold?: number;
  /** The key-administration function: its errors raise the admin alarm. */
  readonly admin: lambda.IFunction;
  /** The metrics of the admin function's audit lines (answered 5xx). */
  readonly logMetrics: LogMetrics;
}

const PERIOD = Duration.minutes(5);

export class Alarms extends Construct {
  readonly errorRate: cloudwatch.Alarm;
  readonly throttles: cloudwatch.Alarm;
  readonly p99Duration: cloudwatch.Alarm;
  readonly keysTableThrottles: cloudwatch.Alarm;
  readonly countersTableThrottles: cloudwatch.Alarm;
  readonly unauthorizedRate: cloudwatch.Alarm;
  readonly adminErrors: cloudwatch.Alarm;

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a CDK constructor: each alarm declared in order, one resource after another (test/layout/functions.test.ts names it)
  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);
    const prefix = Stack.of(this).stackName;
    const functionName = props.proxy.functionName;

    // The function URL's own status counts, not Lambda's Errors/Invocations: the proxy answers dependency
    // faults with a handled 503 (fail closed), which Errors never counts, while Url5xxCount counts those
    // and crashes and timeouts alike. Not CloudFront's 5xxErrorRate either: CloudFront publishes its
    // metrics in us-east-1 only, and an alarm cannot watch another region's metric.
    const urlMetric = (metricName: string) =>
      new cloudwatch.Metric({
        namespace: 'AWS/Lambda',
        metricName,
        dimensionsMap: { FunctionName: functionName },
        statistic: cloudwatch.Stats.SUM,
        period: PERIOD,
      });
    this.errorRate = new cloudwatch.MathExpression({
      expression: '100 * FILL(errors, 0) / requests',
      usingMetrics: { errors: urlMetric('Url5xxCount'), requests: urlMetric('UrlRequestCount') },
      label: 'Proxy 5xx rate (%)',
      period: PERIOD,
    }).createAlarm(this, 'ErrorRate', {
      alarmName: `${prefix}-proxy-5xx-rate`,
      alarmDescription: runbookDescription(
        this,
        'proxy-5xx-rate',
        'More than the threshold percentage of API requests were answered with a 5xx in two consecutive 5-minute periods. Read the proxy log lines with status >= 500: their error code names the failing dependency (configuration_error, authentication_unavailable, quota_unavailable, origin_unavailable).',
      ),
      threshold: props.errorRateThresholdPercent ?? 5,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    this.throttles = props.proxy
      .metricThrottles({ period: PERIOD, statistic: cloudwatch.Stats.SUM })
      .createAlarm(this, 'Throttles', {
        alarmName: `${prefix}-proxy-throttles`,
        alarmDescription: runbookDescription(
          this,
          'proxy-throttles',
          'Lambda refused proxy invocations for lack of concurrency: consumers got errors their quota did not cause. Raise reservedConcurrency (if set) or the account concurrency quota.',
        ),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });

    this.p99Duration = props.proxy
      .metricDuration({ period: PERIOD, statistic: cloudwatch.Stats.p(99) })
      .createAlarm(this, 'P99Duration', {
        alarmName: `${prefix}-proxy-p99-duration`,
        alarmDescription: runbookDescription(
          this,
          'proxy-p99-duration',
          'The slowest 1% of proxy invocations took longer than the threshold for 15 minutes. Look for slow S3 or DynamoDB calls (dependency timeouts in the log), cold starts, or too little memory.',
        ),
        threshold: props.p99DurationThresholdMs ?? 2_000,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 3,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });

    // Read and write throttle events cover every operation on the table in one expression.
    const tableThrottles = (table: dynamodb.ITable, alarmId: string, name: string, consequence: string) =>
      new cloudwatch.MathExpression({
        expression: 'FILL(reads, 0) + FILL(writes, 0)',
        usingMetrics: {
          reads: table.metric('ReadThrottleEvents', { period: PERIOD, statistic: cloudwatch.Stats.SUM }),
          writes: table.metric('WriteThrottleEvents', { period: PERIOD, statistic: cloudwatch.Stats.SUM }),
        },
        label: `${name} table throttle events`,
        period: PERIOD,
      }).createAlarm(this, alarmId, {
        alarmName: `${prefix}-${name}-table-throttles`,
        alarmDescription: runbookDescription(
          this,
          `${name}-table-throttles`,
          `DynamoDB throttled requests to the ${name} table (${consequence}). On-demand tables throttle when traffic more than doubles its previous peak within 30 minutes or one partition is hot; check the table's metrics and the account's on-demand throughput limits.`,
        ),
        threshold: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    this.keysTableThrottles = tableThrottles(
      props.keysTable,
      'KeysTableThrottles',
      'keys',
      'consumers get 503 authentication_unavailable',
    );
    this.countersTableThrottles = tableThrottles(
      props.countersTable,
      'CountersTableThrottles',
      'counters',
      'consumers get 503 quota_unavailable',
    );

    // A flood of bad keys. What reaches the proxy and costs money is a well-formed key that is unknown or
    // revoked (invalid_key): a Lambda invocation each and, past the key cache, a DynamoDB read. Missing and
    // malformed keys are answered by the viewer-request function, which cannot emit metrics (CloudFront
    // Functions have no custom metrics, and FunctionExecutionErrors counts only the function's own failures);
    // they cost a CloudFront request and a function invocation each, and show in CloudFront's 4xxErrorRate,
    // which lives in us-east-1 where an alarm of a stack in another region cannot watch it. So the alarm
    // counts the proxy's own 401 log lines, in this region, with a metric filter (no code change, no
    // per-request cost).
    const unauthorized = new logs.MetricFilter(this, 'UnauthorizedFilter', {
      logGroup: props.proxyLogGroup,
      filterPattern: logs.FilterPattern.numberValue('$.status', '=', 401),
      metricNamespace: `CatalogueReadApi/${prefix}`,
      metricName: 'ProxyUnauthorized',
      metricValue: '1',
      unit: cloudwatch.Unit.COUNT,
    });
    this.unauthorizedRate = new cloudwatch.MathExpression({
      expression: 'FILL(unauthorized, 0) / 5',
      usingMetrics: {
        unauthorized: unauthorized.metric({ statistic: cloudwatch.Stats.SUM, period: PERIOD }),
      },
      label: 'Proxy 401 answers per minute',
      period: PERIOD,
    }).createAlarm(this, 'UnauthorizedRate', {
      alarmName: `${prefix}-proxy-401-rate`,
      alarmDescription: runbookDescription(
        this,
        'proxy-401-rate',
        'The proxy answered more than the threshold of 401s (unknown or revoked keys) per minute for 10 minutes: a client retrying a revoked key, or a flood of guessed keys. Each costs a Lambda invocation and a DynamoDB read past the key cache. Find the source in the CloudFront access logs (client IP), then revoke, block (wafRateLimitPer5Min or your web ACL) or cap the damage (reservedConcurrency).',
      ),
      threshold: props.unauthorizedPerMinuteThreshold ?? 600,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });

    // Any failed admin call: a crash or a timeout (Lambda's Errors) or a 5xx answer (DynamoDB failing, a
    // configuration the function cannot use: audit lines of level error). Calls are few and each one is a
    // publisher's application waiting, so one is enough.
    this.adminErrors = new cloudwatch.MathExpression({
      expression: 'FILL(failed, 0) + FILL(answered, 0)',
      usingMetrics: {
        failed: props.admin.metricErrors({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
        answered: props.logMetrics.adminCalls('error', PERIOD),
      },
      label: 'Admin API errors',
      period: PERIOD,
    }).createAlarm(this, 'AdminErrors', {
      alarmName: `${prefix}-admin-errors`,
      alarmDescription: runbookDescription(
        this,
        'admin-errors',
        'A call to the key-administration API failed: the function crashed or timed out, or answered a 5xx (DynamoDB failing, or a configuration it cannot use). Read the audit lines of level error in the admin log group: their outcome and error name the cause.',
      ),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  all(): cloudwatch.Alarm[] {
    return [
      this.errorRate,
      this.throttles,
      this.p99Duration,
      this.keysTableThrottles,
      this.countersTableThrottles,
      this.unauthorizedRate,
      this.adminErrors,
    ];
  }
}
