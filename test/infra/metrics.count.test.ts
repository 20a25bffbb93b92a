/**
 * What the stack really emits and evaluates, counted from the synthesized template and the code that writes
 * the metrics, against what the guide's cost tables say (docs/operating.md): the custom metrics (the request
 * lines' embedded metrics by route, status class and version, each metric filter's by its dimension's values,
 * the scheduled check's) and the metrics the alarms of both stacks evaluate (billed per alarm metric).
 */
import { readFileSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_LEVELS, UPLOAD_OUTCOMES } from '../../infra/log-metrics.js';
import { REQUEST_METRICS } from '../../infra/request-metrics.js';
import { SCHEDULED_CHECK_METRIC } from '../../infra/scheduled-check.js';
import { CatalogueStack } from '../../infra/stack.js';
import { ROUTES } from '../../proxy/request/routes.js';
import { newApp } from './helpers.js';

const GUIDE = readFileSync(new URL('../../docs/operating.md', import.meta.url), 'utf8');
let api: Template;
let edge: Template;
beforeAll(() => {
  const stack = new CatalogueStack(newApp({ bundle: false }), 'Counted');
  api = Template.fromStack(stack);
  edge = Template.fromStack(stack.edgeAlarms);
}, 120_000);

/** The values a metric filter's dimension takes: the admin levels, the upload outcomes (their code's lists). */
const DIMENSION_VALUES: Record<string, readonly string[]> = { level: ADMIN_LEVELS, outcome: UPLOAD_OUTCOMES };

describe('the custom metrics', () => {
  it('are counted in the guide as the template and the code emit them', () => {
    const classes = REQUEST_METRICS.statusClasses.length;
    // Every route of the API, and 'unknown' (a path no route matches).
    const routes = Object.keys(ROUTES).length + 1;
    // latency_ms by [route, status_class], [version, status_class] (the live version), [status_class]; cold_start by [version].
    const requestLines = routes * classes + classes + classes + 1;
    const filters = Object.values(api.findResources('AWS::Logs::MetricFilter')).map((filter) => {
      const dimensions = (filter.Properties.MetricTransformations[0].Dimensions ?? []) as { Key: string }[];
      return dimensions.reduce((product, { Key }) => product * DIMENSION_VALUES[Key]!.length, 1);
    });
    const scheduled = Object.keys(SCHEDULED_CHECK_METRIC.dimensions).length > 0 ? 1 : 0;
    const total = requestLines + filters.reduce((a, b) => a + b, 0) + scheduled;

    expect(filters.sort()).toEqual([1, 3, 5]);
    expect(GUIDE).toContain(`<!-- custom-metrics -->**The stack emits ${total} custom metrics at most**`);
    expect(GUIDE).toContain(`request lines' ${requestLines}`);
    expect(GUIDE).toContain(`$${((total - 10) * 0.3).toFixed(2)} a month`);
  });
});

describe('the alarms', () => {
  it('evaluate as many metrics as the idle cost table counts', () => {
    const alarms = [api, edge].flatMap((t) => Object.values(t.findResources('AWS::CloudWatch::Alarm')));
    const metrics = alarms.reduce(
      (sum, alarm) =>
        sum +
        (alarm.Properties.MetricName
          ? 1
          : (alarm.Properties.Metrics as { MetricStat?: object }[]).filter((m) => m.MetricStat).length),
      0,
    );

    expect(GUIDE).toContain(
      `<!-- alarm-metrics -->${alarms.length} alarms (CloudWatch; 2 of them in us-east-1)`,
    );
    expect(GUIDE).toContain(`${metrics} metrics (counted from the templates`);
    expect(GUIDE).toContain(
      `$${(metrics * 0.1).toFixed(2)}, or $${((metrics - 10) * 0.1).toFixed(2)} with the free 10`,
    );
  });
});
