/**
 * The smoke checks as the stack runs them by itself (ops/lambda.ts): against the public URL (the distribution,
 * or the custom domain), with the stack's own check key read from its secret, the admin API only as refusing an
 * unsigned request (the functions hold no admin permission), and the live version read from the bucket. One
 * run is one JSON log line naming every check and what failed, in CloudWatch's embedded metric format: the
 * metric `ScheduledCheckPassed` (1 or 0) that the scheduled check's alarm watches, missing data breaching.
 */
import { CHECK_NAMES, type CheckResult } from './checks.js';
import { outcome } from './smoke.js';
import type { SmokeTarget } from './target.js';

/**
 * The metric a scheduled run publishes and its one dimension; infra/scheduled-check.ts declares the same
 * (infra imports no product code: test/infra/scheduled-check.test.ts checks that both agree).
 */
export const SCHEDULED_CHECK_METRIC = {
  name: 'ScheduledCheckPassed',
  dimensions: { check: 'public-url' },
} as const;

/** What the stack sets in the check functions' environment (infra/scheduled-check.ts). */
export interface CheckEnvironment {
  /** The API's public base URL, `https://<domain>/v1`. */
  apiUrl: string;
  /** The reference page, `https://<domain>/docs`. */
  docsUrl: string;
  /** The admin API's base URL (checked unsigned). */
  adminUrl: string;
  /** `s3://bucket/prefix/` of the published catalogue. */
  catalogueUri: string;
  /** The secret holding the check key. */
  keySecretArn: string;
  /** The stack's metrics namespace. */
  namespace: string;
}

/** The variables of {@link CheckEnvironment}, by field. */
const VARIABLES: Record<keyof CheckEnvironment, string> = {
  apiUrl: 'CHECK_API_URL',
  docsUrl: 'CHECK_DOCS_URL',
  adminUrl: 'CHECK_ADMIN_URL',
  catalogueUri: 'CHECK_CATALOGUE_URI',
  keySecretArn: 'CHECK_KEY_SECRET_ARN',
  namespace: 'METRICS_NAMESPACE',
};

/**
 * The check functions' settings from their environment; an error naming every variable that is missing.
 * @example checkEnvironment(process.env).apiUrl
 */
export function checkEnvironment(env: Record<string, string | undefined>): CheckEnvironment {
  const missing = Object.values(VARIABLES).filter((name) => !env[name]);
  if (missing.length > 0) throw new Error(`the check function is missing ${missing.join(', ')}`);
  return Object.fromEntries(
    Object.entries(VARIABLES).map(([field, name]) => [field, env[name]!]),
  ) as unknown as CheckEnvironment;
}

/** What the check runs against: the public URL, the key, the admin API unsigned, the bucket's catalogue. */
export function scheduledTarget(environment: CheckEnvironment, key: string): SmokeTarget {
  return {
    api: { api: environment.apiUrl, docs: environment.docsUrl, key },
    admin: { url: environment.adminUrl, unsigned: true },
    catalogue: { uri: environment.catalogueUri },
  };
}

/** One run's log line: the verdict, the failing checks by name, each check, and the metric. */
export interface ScheduledCheckLine {
  type: 'scheduled_check';
  ok: boolean;
  failed: string[];
  api: string;
  checks: CheckResult[];
  [metric: string]: unknown;
}

/**
 * The log line of a run that ended with `checks` at `now` (epoch ms): a skipped check fails it as a failed one
 * does (the check function is given everything; a skip means something is wrong with it).
 * @example process.stdout.write(`${JSON.stringify(scheduledCheckLine(env, checks, Date.now()))}\n`);
 */
export function scheduledCheckLine(
  environment: Pick<CheckEnvironment, 'apiUrl' | 'namespace'>,
  checks: readonly CheckResult[],
  now: number,
): ScheduledCheckLine {
  const { ok, failed, skipped } = outcome(checks, { allowSkipped: false });
  const { name, dimensions } = SCHEDULED_CHECK_METRIC;
  return {
    type: 'scheduled_check',
    ok,
    failed: [...failed, ...skipped],
    api: environment.apiUrl,
    checks: [...checks],
    ...dimensions,
    [name]: ok ? 1 : 0,
    _aws: {
      Timestamp: now,
      CloudWatchMetrics: [
        {
          Namespace: environment.namespace,
          Dimensions: [Object.keys(dimensions)],
          Metrics: [{ Name: name, Unit: 'Count' }],
        },
      ],
    },
  };
}

/**
 * A run that could not check at all (the key could not be read, the environment is wrong): every check
 * failed with that one reason, so the line and the metric say so as any failure does.
 */
export function unchecked(reason: string): CheckResult[] {
  return CHECK_NAMES.map((name) => ({ name, verdict: 'fail', detail: reason, ms: 0 }));
}
