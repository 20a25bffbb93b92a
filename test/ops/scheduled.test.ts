/**
 * The scheduled run's pieces (ops/scheduled.ts): its settings from the environment, its target (the public URL,
 * the admin API unsigned), and its one log line in the embedded metric format: 1 when every check passed, 0
 * when one failed or was skipped, the failing checks named.
 */
import { describe, expect, it } from 'vitest';
import { CHECK_NAMES, type CheckResult } from '../../ops/checks.js';
import {
  checkEnvironment,
  SCHEDULED_CHECK_METRIC,
  scheduledCheckLine,
  scheduledTarget,
  unchecked,
} from '../../ops/scheduled.js';

const ENV = {
  CHECK_API_URL: 'https://d111.cloudfront.net/v1',
  CHECK_DOCS_URL: 'https://d111.cloudfront.net/docs',
  CHECK_ADMIN_URL: 'https://abc.lambda-url.eu-west-1.on.aws/v1',
  CHECK_CATALOGUE_URI: 's3://bucket/catalogue/',
  CHECK_KEY_SECRET_ARN: 'arn:aws:secretsmanager:eu-west-1:1:secret:k',
  METRICS_NAMESPACE: 'CatalogueReadApi/Test',
};
const passed = (name: string): CheckResult => ({ name, verdict: 'pass', detail: 'ok', ms: 1 });

describe('checkEnvironment and scheduledTarget', () => {
  it('read every variable, and name every one missing', () => {
    const environment = checkEnvironment(ENV);

    expect(scheduledTarget(environment, 'pk_live_x')).toEqual({
      api: { api: ENV.CHECK_API_URL, docs: ENV.CHECK_DOCS_URL, key: 'pk_live_x' },
      admin: { url: ENV.CHECK_ADMIN_URL, unsigned: true },
      catalogue: { uri: ENV.CHECK_CATALOGUE_URI },
    });
    expect(() => checkEnvironment({ ...ENV, CHECK_API_URL: '', METRICS_NAMESPACE: undefined })).toThrow(
      'the check function is missing CHECK_API_URL, METRICS_NAMESPACE',
    );
  });
});

describe('scheduledCheckLine', () => {
  it('publishes 1 when every check passed, with its namespace, dimension and timestamp', () => {
    const line = scheduledCheckLine(checkEnvironment(ENV), CHECK_NAMES.map(passed), 1_700_000_000_000);

    expect(line).toMatchObject({ type: 'scheduled_check', ok: true, failed: [], check: 'public-url' });
    expect(line[SCHEDULED_CHECK_METRIC.name]).toBe(1);
    expect(line._aws).toEqual({
      Timestamp: 1_700_000_000_000,
      CloudWatchMetrics: [
        {
          Namespace: 'CatalogueReadApi/Test',
          Dimensions: [['check']],
          Metrics: [{ Name: 'ScheduledCheckPassed', Unit: 'Count' }],
        },
      ],
    });
  });

  it('publishes 0 naming what failed, and a skipped check is a failure too', () => {
    const checks = CHECK_NAMES.map(passed);
    checks[2] = { name: '200 with ETag', verdict: 'fail', detail: '401 invalid_key', ms: 3 };
    checks[7] = { name: 'live version', verdict: 'skip', detail: 'no catalogue', ms: 0 };

    const line = scheduledCheckLine(checkEnvironment(ENV), checks, Date.now());

    expect(line).toMatchObject({
      ok: false,
      failed: ['200 with ETag', 'live version'],
      ScheduledCheckPassed: 0,
    });
    expect(JSON.stringify(line)).not.toContain('pk_live_');
  });

  it('a run that could not start fails every check with the one reason', () => {
    const line = scheduledCheckLine(checkEnvironment(ENV), unchecked('the key: AccessDenied'), Date.now());

    expect(line.failed).toEqual([...CHECK_NAMES]);
    expect(line.checks.every((check) => check.detail === 'the key: AccessDenied')).toBe(true);
  });
});
