/**
 * The proxy's request metrics as infra names them (infra imports no product code) against what the proxy
 * writes into its lines (proxy/log/metrics.ts): the same metrics and dimension sets, and a status class for
 * every status the proxy answers among those the dashboard and the alarms draw.
 */
import { App, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { metricsNamespace, REQUEST_METRICS, requestMetric } from '../../infra/request-metrics.js';
import { statusClass, REQUEST_METRICS as WRITTEN } from '../../proxy/log/metrics.js';
import openapi from '../../proxy/openapi.json' with { type: 'json' };

describe('the request metrics', () => {
  it('are the ones the proxy writes: metrics and dimension sets', () => {
    expect(REQUEST_METRICS.latency).toBe(WRITTEN.latency);
    expect(REQUEST_METRICS.coldStart).toBe(WRITTEN.coldStart);
    expect(REQUEST_METRICS.dimensions).toEqual(WRITTEN.dimensions);
    expect(REQUEST_METRICS.coldStartDimensions).toEqual(WRITTEN.coldStartDimensions);
  });

  it('name a status class for every status the proxy documents, and for every 2xx, 4xx and 5xx', () => {
    const documented = Object.values(openapi.paths).flatMap((path) =>
      Object.values(path).flatMap((operation) =>
        typeof operation === 'object' && operation !== null && 'responses' in operation
          ? Object.keys(operation.responses as object).map(Number)
          : [],
      ),
    );
    const answered = [...documented, ...Array.from({ length: 300 }, (_, i) => 200 + i)].filter(
      (status) => status < 300 || status === 304 || status >= 400,
    );

    expect(documented.length).toBeGreaterThan(5);
    for (const status of answered)
      expect(REQUEST_METRICS.statusClasses, String(status)).toContain(statusClass(status));
  });

  it('live in one namespace per stack, the one the proxy is given', () => {
    const stack = new Stack(new App(), 'Api');

    expect(metricsNamespace(stack)).toBe('CatalogueReadApi/Api');
    expect(requestMetric(stack, { status_class: '5xx' }, 'SampleCount')).toMatchObject({
      namespace: 'CatalogueReadApi/Api',
      metricName: 'latency_ms',
      dimensions: { status_class: '5xx' },
    });
  });
});
