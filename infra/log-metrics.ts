/**
 * Metrics derived from the admin function's and the upload builder's log lines by metric filters: nothing is
 * added to those lines and no product code changes (both lines are low-volume: one per admin call, one per
 * upload). Their fields are contracts (admin/http/handler.ts AuditLine, builder/upload/report.ts
 * UploadReport), checked by test/infra/log-metrics.test.ts.
 */
import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { metricsNamespace } from './request-metrics.js';

/** The upload outcomes (builder/upload/report.ts UploadOutcome), each a dimension value of the upload metric. */
export const UPLOAD_OUTCOMES = ['published', 'unchanged', 'invalid', 'superseded', 'failed'] as const;
/** The audit line's levels: `info` answered, `warn` refused (4xx), `error` failed (5xx). */
export const ADMIN_LEVELS = ['info', 'warn', 'error'] as const;

export interface LogMetricsProps {
  /** The admin function's log group: one audit line per call. */
  readonly adminLogGroup: logs.ILogGroup;
  /** The upload builder's log group: one report line per upload. */
  readonly uploadLogGroup: logs.ILogGroup;
}

export class LogMetrics extends Construct {
  readonly #adminCalls: logs.MetricFilter;
  readonly #uploads: logs.MetricFilter;

  constructor(scope: Construct, id: string, props: LogMetricsProps) {
    super(scope, id);
    const namespace = metricsNamespace(this);
    // Every audit line, by level. A configuration the function cannot use is answered 503 with a line of
    // level error too (admin/lambda.ts).
    this.#adminCalls = new logs.MetricFilter(this, 'AdminCalls', {
      logGroup: props.adminLogGroup,
      filterPattern: logs.FilterPattern.stringValue('$.type', '=', 'admin_audit'),
      metricNamespace: namespace,
      metricName: 'AdminCalls',
      metricValue: '1',
      dimensions: { level: '$.level' },
      unit: cloudwatch.Unit.COUNT,
    });
    // One report line per upload handled (progress and warning lines have no outcome): its build time by
    // outcome; the sample count is the number of uploads.
    this.#uploads = new logs.MetricFilter(this, 'Uploads', {
      logGroup: props.uploadLogGroup,
      filterPattern: logs.FilterPattern.all(
        logs.FilterPattern.exists('$.outcome'),
        logs.FilterPattern.exists('$.upload'),
        logs.FilterPattern.exists('$.seconds'),
      ),
      metricNamespace: namespace,
      metricName: 'UploadSeconds',
      metricValue: '$.seconds',
      dimensions: { outcome: '$.outcome' },
      unit: cloudwatch.Unit.SECONDS,
    });
  }

  /** Admin calls of `level` per period (Sum). */
  adminCalls(level: (typeof ADMIN_LEVELS)[number], period = Duration.minutes(5)): cloudwatch.Metric {
    return this.#adminCalls.metric({
      dimensionsMap: { level },
      statistic: cloudwatch.Stats.SUM,
      period,
      label: `admin ${level}`,
    });
  }

  /** Uploads of `outcome`: their number (SampleCount) or build time (Maximum, Average…) per period. */
  uploads(
    outcome: (typeof UPLOAD_OUTCOMES)[number],
    statistic: string,
    period = Duration.hours(1),
  ): cloudwatch.Metric {
    return this.#uploads.metric({ dimensionsMap: { outcome }, statistic, period, label: outcome });
  }
}
