/**
 * The upload builder's Lambda entry point (infra/upload-builder.ts deploys it): S3 event notifications of
 * objects created under the incoming prefix → publishUpload (builder/upload/publish-upload.ts: the CLI's
 * publish code) → a report object and an EventBridge event. An upload whose publish failed is thrown as the
 * invocation's error: Lambda retries it (asynchronous invocation) and the function's error alarm fires.
 *
 * Settings (environment): CATALOGUE_BUCKET, CATALOGUE_PREFIX, INCOMING_PREFIX (`incoming/`), REPORTS_PREFIX
 * (`reports/`), EVENT_BUS_NAME (`default`; `none` sends no event), BUILD_BUDGET_SECONDS (600: the time kept
 * for the build when waiting for another publish to release the target).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  awsRegion,
  endpointSetting,
  environmentCredentials,
  isLoopback,
  LOOPBACK_CREDENTIALS,
} from '../aws/env.js';
import { s3Client } from '../aws/sdk.js';
import { S3ObjectStore } from '../store/objects/s3.js';
import { logProgress } from './report/progress.js';
import type { S3EventNotification } from './upload/event.js';
import { uploadEventBus } from './upload/notify.js';
import { publishUpload, type UploadSettings } from './upload/publish-upload.js';
import { reportLine } from './upload/report.js';

/** What Lambda's context gives the handler that it uses. */
export interface LambdaContext {
  getRemainingTimeInMillis(): number;
}

const DEFAULT_BUILD_BUDGET_SECONDS = 600;

/** The builder's fingerprint (builder/publish/reuse.ts): this bundle's bytes and the Node.js running it. */
function fingerprint(): string {
  const bundle = readFileSync(fileURLToPath(import.meta.url));
  return `${createHash('sha256').update(bundle).digest('base64url').slice(0, 22)}/${process.version}`;
}

/** Settings read once per execution environment. */
function readSettings(env = process.env) {
  const bucket = env.CATALOGUE_BUCKET;
  if (!bucket) throw new Error('CATALOGUE_BUCKET is not set');
  const client = s3Client({ maxAttempts: 5 });
  const eventsEndpoint = endpointSetting('events', env)?.value;
  const busName = env.EVENT_BUS_NAME?.trim() || 'default';
  const budget = Number(env.BUILD_BUDGET_SECONDS ?? DEFAULT_BUILD_BUDGET_SECONDS);
  const settings: Omit<UploadSettings, 'lockWaitMs'> = {
    store: new S3ObjectStore({ client, bucket }),
    prefix: env.CATALOGUE_PREFIX ?? '',
    incomingPrefix: env.INCOMING_PREFIX ?? 'incoming/',
    reportsPrefix: env.REPORTS_PREFIX ?? 'reports/',
    builder: fingerprint(),
    concurrency: 48,
    warn: (message) => console.log(JSON.stringify({ level: 'warn', message })),
  };
  const bus =
    busName === 'none'
      ? undefined
      : uploadEventBus({
          region: awsRegion(),
          busName,
          ...(eventsEndpoint && { endpoint: eventsEndpoint }),
          credentials: () => {
            if (isLoopback(eventsEndpoint)) return LOOPBACK_CREDENTIALS;
            const credentials = environmentCredentials(env);
            if (!credentials) throw new Error('no AWS credentials in the environment');
            return credentials;
          },
        });
  return {
    settings,
    bus,
    budgetMs: (Number.isFinite(budget) ? budget : DEFAULT_BUILD_BUDGET_SECONDS) * 1000,
  };
}

let configured: ReturnType<typeof readSettings> | undefined;

/**
 * Handle the S3 event notifications of one invocation (S3 sends one record per event).
 * @example await handler({ Records: [record] }, { getRemainingTimeInMillis: () => 900_000 });
 */
export async function handler(event: S3EventNotification, context: LambdaContext): Promise<void> {
  configured ??= readSettings();
  const { settings, bus, budgetMs } = configured;
  for (const record of event.Records ?? []) {
    // Progress as log lines every 5 s: a long build never looks hung in CloudWatch Logs.
    const progress = logProgress(process.stdout);
    let report: Awaited<ReturnType<typeof publishUpload>>;
    try {
      report = await publishUpload(record, {
        ...settings,
        progress,
        lockWaitMs: Math.max(0, context.getRemainingTimeInMillis() - budgetMs),
      });
    } finally {
      progress.close();
    }
    if (!report) {
      console.log(
        JSON.stringify({
          level: 'info',
          message: `nothing to do for ${record.s3.object.key}: gone, or overwritten by a newer upload of that name`,
        }),
      );
      continue;
    }
    const { problems, ...summary } = report;
    console.log(
      JSON.stringify({
        level: report.outcome === 'failed' ? 'error' : 'info',
        message: reportLine(report),
        ...summary,
        problems: problems.slice(0, 20),
      }),
    );
    await bus?.send(report);
    if (report.outcome === 'failed') throw new Error(reportLine(report));
  }
}
