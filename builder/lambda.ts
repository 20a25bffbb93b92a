/**
 * The upload builder's Lambda entry point (infra/upload-builder.ts deploys it): S3 event notifications of
 * objects created under the incoming prefix → publishUpload (builder/upload/publish-upload.ts: the CLI's
 * publish code) → a report object and an EventBridge event. The invocation fails (Lambda retries it, as an
 * asynchronous invocation, and the function's error alarm fires) when an upload's publish failed and when an
 * outcome's event could not be sent (the retry finds the report and sends that same event again): what a retry
 * can mend. What is not an upload — an empty event, S3's test event, an event that is not an S3 notification, a
 * record of another bucket or outside the incoming prefix — is logged and acknowledged: retrying it would do
 * nothing twice more and raise the alarm for nothing. Every record gets one log line, whatever it is; every
 * record is handled before the invocation fails.
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
  integerSetting,
  isLoopback,
  LOOPBACK_CREDENTIALS,
} from '../aws/env.js';
import { s3Client } from '../aws/sdk.js';
import { errorMessage } from '../store/errors.js';
import { S3ObjectStore } from '../store/objects/s3.js';
import { UPLOAD_PREFIXES } from '../store/upload-prefixes.js';
import { logProgress } from './report/progress.js';
import { printable } from './snapshot/problems.js';
import type { S3EventNotification, S3EventRecord } from './upload/event.js';
import { uploadEventBus } from './upload/notify.js';
import {
  publishUpload,
  reportFailure,
  type UploadResult,
  type UploadSettings,
} from './upload/publish-upload.js';
import { reportLine } from './upload/report.js';

/** What Lambda's context gives the handler that it uses. */
export interface LambdaContext {
  getRemainingTimeInMillis(): number;
}

const DEFAULT_BUILD_BUDGET_SECONDS = 600;
/** At most the longest a Lambda function runs. */
const BUDGET = { min: 0, max: 900 };

/** The builder's fingerprint (builder/publish/reuse.ts): this bundle's bytes and the Node.js running it. */
function fingerprint(): string {
  const bundle = readFileSync(fileURLToPath(import.meta.url));
  return `${createHash('sha256').update(bundle).digest('base64url').slice(0, 22)}/${process.version}`;
}

/** Settings read once per execution environment. */
function readSettings(env = process.env) {
  const bucket = env.CATALOGUE_BUCKET;
  if (!bucket) throw new Error('CATALOGUE_BUCKET is not set');
  // A local S3 (s3rver) takes only its own credentials: never the role's, even when the environment has them.
  const s3Endpoint = endpointSetting('s3', env)?.value;
  const client = s3Client({
    maxAttempts: 5,
    ...(isLoopback(s3Endpoint) && { credentials: LOOPBACK_CREDENTIALS }),
  });
  const eventsEndpoint = endpointSetting('events', env)?.value;
  const busName = env.EVENT_BUS_NAME?.trim() || 'default';
  const budget = integerSetting(env, 'BUILD_BUDGET_SECONDS', {
    fallback: DEFAULT_BUILD_BUDGET_SECONDS,
    ...BUDGET,
  });
  if (!budget.ok) throw new Error(budget.problem);
  const settings: Omit<UploadSettings, 'lockWaitMs'> & { bucket: string } = {
    bucket,
    store: new S3ObjectStore({ client, bucket }),
    prefix: env.CATALOGUE_PREFIX ?? '',
    incomingPrefix: env.INCOMING_PREFIX ?? UPLOAD_PREFIXES.incomingPrefix,
    reportsPrefix: env.REPORTS_PREFIX ?? UPLOAD_PREFIXES.reportsPrefix,
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
    budgetMs: budget.value * 1000,
  };
}

let configured: ReturnType<typeof readSettings> | undefined;

/** One log line, as CloudWatch Logs keeps it (JSON: a name in it can never start a line of its own). */
function log(level: 'info' | 'warn' | 'error', message: string, fields: Record<string, unknown> = {}): void {
  console.log(JSON.stringify({ level, message, ...fields }));
}

/**
 * The S3 records of an invocation's event, or what to say of an event that has none: S3's test event and an
 * empty one are logged; anything else is not the S3 notification the function is for (logged as a warning,
 * and acknowledged: see {@link acknowledge}).
 */
function recordsOf(
  event: unknown,
): { records: S3EventRecord[] } | { level: 'info' | 'warn'; message: string } {
  const fields = typeof event === 'object' && event !== null ? (event as Record<string, unknown>) : undefined;
  if (fields?.Event === 's3:TestEvent') {
    return {
      level: 'info',
      message: "S3's test event (sent when the bucket's notification is set up): nothing to do",
    };
  }
  if (Array.isArray(fields?.Records)) {
    if (fields.Records.length === 0)
      return { level: 'info', message: 'an event with no records: nothing to do' };
    return { records: fields.Records as S3EventRecord[] };
  }
  const shape = fields
    ? `an object with ${
        Object.keys(fields)
          .slice(0, 8)
          .map((k) => printable(k, 40))
          .join(', ') || 'no fields'
      }`
    : event === null
      ? 'null'
      : typeof event;
  return {
    level: 'warn',
    message: `not an S3 event notification (${shape}): acknowledged, nothing done; the function handles the S3 events of its bucket's incoming prefix`,
  };
}

/**
 * Log what is not an upload and acknowledge it (the invocation does not fail for it): a record of another
 * bucket, a key outside the incoming prefix or one that does not decode, an event that is not an S3
 * notification. A retry could not make it an upload, so failing would only run it twice more and raise the
 * failure alarm for nothing; the warning line says what came, for whoever pointed it at the function.
 */
function acknowledge(message: string): undefined {
  log('warn', message);
  return undefined;
}

/** Whether a record is an S3 notification of the function's bucket; else what it is. */
function foreignRecord(record: S3EventRecord, bucket: string): string | undefined {
  const source = (record as { eventSource?: unknown } | null)?.eventSource;
  if (typeof record?.s3?.object?.key !== 'string' || (source !== undefined && source !== 'aws:s3')) {
    return `a record that is not an S3 event notification (eventSource ${printable(String(source))}): acknowledged, not handled`;
  }
  if (record.s3.bucket?.name !== bucket) {
    return `an event of bucket ${printable(String(record.s3.bucket?.name))}, not ${bucket}: acknowledged, not handled`;
  }
  return undefined;
}

/**
 * How long before the function's timeout an attempt still under way writes its `failed` report: time enough for
 * one report and one event, however loaded the store (its client tries each call 5 times).
 */
const TIMEOUT_REPORT_MS = 15_000;

/**
 * `publishing`, with a `failed` report written (and its event sent) {@link TIMEOUT_REPORT_MS} before the
 * function's timeout if it has not finished by then: Lambda then stops the attempt and leaves no trace in the
 * bucket, so without this an upload whose every attempt runs out of time would have no report at all. The attempt
 * is not cut short: if it finishes in the time left, its outcome replaces that report.
 */
async function reportingTimeout(
  publishing: Promise<UploadResult>,
  record: S3EventRecord,
  context: LambdaContext,
  { settings, bus }: NonNullable<typeof configured>,
): Promise<UploadResult> {
  const startedAt = new Date();
  const leftMs = context.getRemainingTimeInMillis() - TIMEOUT_REPORT_MS;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), Math.max(0, leftMs));
  });
  try {
    const first = await Promise.race([publishing, late]);
    if (first !== 'late') return first;
    const cause = `the attempt had not finished ${Math.round(TIMEOUT_REPORT_MS / 1000)} s before the function's timeout (${Math.round((Date.now() - startedAt.getTime()) / 1000)} s in): Lambda stops it there; a larger memory size (more CPU) or a longer timeout gives the build more time`;
    try {
      const written = await reportFailure(record, settings, startedAt, cause);
      if (written && !written.repeated) {
        log('error', reportLine(written.report));
        await bus?.send(written.report);
      }
    } catch (error) {
      log(
        'error',
        `${printable(String(record.s3.object.key))}: its report of running out of time could not be written: ${errorMessage(error)}`,
      );
    }
    return await publishing;
  } finally {
    clearTimeout(timer);
  }
}

/** Handle one record and log what it came to; what the invocation must fail for (to be retried and alarmed), if anything. */
async function handleRecord(
  record: S3EventRecord,
  context: LambdaContext,
  { settings, bus, budgetMs }: NonNullable<typeof configured>,
): Promise<string | undefined> {
  const foreign = foreignRecord(record, settings.bucket);
  if (foreign) return acknowledge(foreign);
  // Progress as log lines every 5 s: a long build never looks hung in CloudWatch Logs.
  const progress = logProgress(process.stdout);
  let result: UploadResult;
  try {
    const publishing = publishUpload(record, {
      ...settings,
      progress,
      lockWaitMs: Math.max(0, context.getRemainingTimeInMillis() - budgetMs),
    });
    result = await reportingTimeout(publishing, record, context, { settings, bus, budgetMs });
  } catch (error) {
    // Its report could not be read or written (the store failing): the retry tries the upload again.
    const message = `${printable(String(record.s3.object.key))}: its report could not be read or written: ${errorMessage(error)}`;
    log('error', message);
    return message;
  } finally {
    progress.close();
  }
  if (result.kind === 'misdirected') return acknowledge(result.message);
  if (result.kind === 'skipped') {
    log('info', result.message);
    return undefined;
  }
  const { report, repeated } = result;
  const { problems, ...summary } = report;
  const line = reportLine(report);
  log(
    report.outcome === 'failed' ? 'error' : 'info',
    repeated ? `${line} (reported before: its event is sent again)` : line,
    {
      ...summary,
      problems: problems.slice(0, 20),
    },
  );
  try {
    await bus?.send(report);
  } catch (error) {
    const message = `${printable(report.upload)}: the event of its outcome (${report.outcome}) could not be sent: ${errorMessage(error)}; the invocation fails so that Lambda tries again, and the retry sends the same event`;
    log('error', message);
    return message;
  }
  return report.outcome === 'failed' ? line : undefined;
}

/**
 * Handle the S3 event notifications of one invocation (S3 sends one record per event).
 * @example await handler({ Records: [record] }, { getRemainingTimeInMillis: () => 900_000 });
 */
export async function handler(event: S3EventNotification | unknown, context: LambdaContext): Promise<void> {
  configured ??= readSettings();
  const found = recordsOf(event);
  if (!('records' in found)) {
    log(found.level, found.message);
    return;
  }
  const failures: string[] = [];
  for (const record of found.records) {
    const failure = await handleRecord(record, context, configured);
    if (failure !== undefined) failures.push(failure);
  }
  if (failures.length > 0) throw new Error(failures.join('\n'));
}
