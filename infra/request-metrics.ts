/**
 * The stack's own metrics, in one namespace per stack (`CatalogueReadApi/<stack>`): the proxy's request
 * metrics, which it writes into its log lines in the embedded metric format (proxy/log/metrics.ts; infra
 * imports no product code, so test/infra/request-metrics.test.ts checks that both name the same), and the
 * metrics the stack's metric filters derive from log lines (infra/log-metrics.ts, the 401 alarm's).
 */
import { Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type { Construct } from 'constructs';

/** What the proxy's request lines carry: `latency_ms` (its sample count is the request count), cold starts. */
export const REQUEST_METRICS = {
  latency: 'latency_ms',
  /** The dimension sets of `latency_ms`. */
  dimensions: [['route', 'status_class'], ['version', 'status_class'], ['status_class']],
  coldStart: 'cold_start',
  /** The dimension sets of `cold_start`. */
  coldStartDimensions: [['version']],
  /** The values of `status_class`: 304 and 429 on their own, every other status by its hundred. */
  statusClasses: ['2xx', '304', '4xx', '429', '5xx'],
} as const;

/**
 * The namespace of the stack's own metrics; the proxy gets it as `METRICS_NAMESPACE`.
 * @example metricsNamespace(stack) // → 'CatalogueReadApi/CatalogueReadApi'
 */
export function metricsNamespace(scope: Construct): string {
  return `CatalogueReadApi/${Stack.of(scope).stackName}`;
}

/**
 * A request metric of the proxy under one of its dimension sets.
 * @example requestMetric(this, { status_class: '5xx' }, 'SampleCount') // 5xx answers per 5 minutes
 */
export function requestMetric(
  scope: Construct,
  dimensionsMap: Record<string, string>,
  statistic: string,
  options: { period?: Duration; label?: string; metricName?: string } = {},
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: metricsNamespace(scope),
    metricName: options.metricName ?? REQUEST_METRICS.latency,
    dimensionsMap,
    statistic,
    period: options.period ?? Duration.minutes(5),
    ...(options.label !== undefined && { label: options.label }),
  });
}
