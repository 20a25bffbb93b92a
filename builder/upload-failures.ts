/**
 * No upload lost in silence: `npm run catalogue -- failed` lists the uploads in the incoming prefix that failed
 * or never got a report, with their cause, and `retry NAME` runs one again. Both read only the bucket — the
 * incoming prefix and the reports the builder writes (builder/upload/report.ts) — so the same commands work on
 * the stack (`--out s3://BUCKET`) and on this checkout's `npm start` (no `--out`), as `upload` does
 * (upload-destination.ts).
 *
 * What counts as lost, per upload still in the incoming prefix (the stack keeps uploads 7 days):
 * - `failed`: its report, for these bytes, says `failed` — every attempt of the builder failed (a store fault,
 *   the publish lock held past the wait), the last one's cause in the report; recent, the builder may still try
 *   it again (Lambda retries a failed attempt about 1 and 3 minutes later);
 * - `no_report`: no report for these bytes `afterMs` after the upload — the builder never finished an attempt
 *   (its event lost or throttled past its maximum age, every attempt out of time or crashed, or the report itself
 *   could not be written): its log and the stack's on-failure queue hold the cause; the bucket has none.
 *
 * Retry uploads the same bytes again under the same name (a conditional write on the ETag read), as a publisher
 * would: S3 announces it, the builder handles it as any upload, and its report replaces the `failed` one (a
 * report that is an upload's final word is never rewritten: such an upload is not retried). The newest upload
 * wins (builder/upload/order.ts) and the bytes written again count as uploaded now, so retry refuses while a
 * newer upload that was not refused as invalid is there — publishing the retried one would put an older
 * catalogue over it — unless `force`.
 */
import { UsageError } from '../cli/kit.js';
import { errorWithCause } from '../store/errors.js';
import { UPLOAD_PREFIXES } from '../store/upload-prefixes.js';
import { EXIT } from './exit.js';
import { TaskPool } from './publish/pool.js';
import { explainPublishFailure } from './report/failure.js';
import { formatBytes } from './report/progress.js';
import { UPLOAD_NAME } from './upload/archive.js';
import { bareEtag } from './upload/event.js';
import { newerUpload } from './upload/order.js';
import { reportKeyFor, reportLine, type UploadOutcome, type UploadReport } from './upload/report.js';
import { parseReport } from './upload/report-object.js';
import { commandOutcome, followReport } from './upload-command.js';
import {
  DestinationError,
  type DestinationRequest,
  openDestination,
  type UploadDestination,
} from './upload-destination.js';
import { readReport, reportEtag } from './upload-wait.js';

/**
 * How the builder's attempts are timed, by destination: how long an upload may go without a report before
 * `failed` lists it (unless `--after` says), and how soon after a failed attempt the builder's own next one
 * comes. On the stack: three attempts of at most 15 minutes each, Lambda's next one about 1, then 2 minutes after
 * a failure (an hour covers them all). Against `npm start`: attempts of seconds, retried 5 and 20 s later.
 */
export const BUILDER_TIMING = {
  stack: { noReportAfterMs: 60 * 60_000, retriesWithinMs: 5 * 60_000 },
  local: { noReportAfterMs: 5 * 60_000, retriesWithinMs: 30_000 },
} as const;

/** Reports read at once while listing. */
const READS_IN_FLIGHT = 8;

/** An upload in the incoming prefix as listed, with the report the builder wrote for these bytes, if any. */
export interface UploadState {
  key: string;
  lastModified: Date;
  /** Its ETag, bare. */
  etag: string;
  size: number;
  /** Its report, when the report at its report key is about these bytes. */
  report: UploadReport | undefined;
}

/** An upload that failed or got no report: one entry of `failed`, what `retry` takes. */
export interface UploadFailure {
  /** `incoming/NAME.tar.gz`. */
  upload: string;
  /** `NAME`: what `retry` takes. */
  name: string;
  status: 'failed' | 'no_report';
  uploaded_at: string;
  size: number;
  /** The report's `error` (`failed`), or `no report after N minutes`. */
  cause: string;
  /** When the last attempt ended (`failed`); null when no attempt reported. */
  last_attempt_at: string | null;
  /** A `failed` report this recent may still be followed by the builder's own retry. */
  builder_may_retry: boolean;
  report_uri: string;
  /** The newest upload that came after it and was not refused: `retry` refuses to publish over it unless forced. */
  newer: { upload: string; outcome: UploadOutcome | 'no report' } | null;
  /** Its report (`failed`), as the builder wrote it. */
  report: UploadReport | null;
}

/** What `failed` found: how many uploads, those that failed or got no report, those too recent to tell. */
export interface UploadFailures {
  uploads: number;
  failed: UploadFailure[];
  /** Uploads without a report yet, made less than `afterMs` ago: the builder may still be at them. */
  waiting: { upload: string; uploaded_at: string }[];
}

const minutes = (ms: number) =>
  `${Math.round(ms / 60_000)} minute${Math.round(ms / 60_000) === 1 ? '' : 's'}`;
/** An ISO time to the second, as `2026-06-01 12:00:03Z`. */
const when = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)}Z`;
const nameOf = (key: string) => key.slice(UPLOAD_PREFIXES.incomingPrefix.length).replace(/\.tar\.gz$/, '');

/**
 * The newest upload after `own` that a retry of `own` would publish over: any but those refused as invalid
 * (they never published and never will).
 */
function newerThan(own: UploadState, states: readonly UploadState[]): UploadFailure['newer'] {
  let newest: UploadState | undefined;
  for (const other of states) {
    if (other.key === own.key || !newerUpload(other, own) || other.report?.outcome === 'invalid') continue;
    if (!newest || newerUpload(other, newest)) newest = other;
  }
  return newest ? { upload: newest.key, outcome: newest.report?.outcome ?? 'no report' } : null;
}

/**
 * Which uploads failed or got no report within `afterMs`, at `now`, newest first.
 * @example findFailures(states, { now: Date.now(), afterMs: 3_600_000, retriesWithinMs: 300_000, bucket: 'catalogue' }).failed[0]?.cause
 */
export function findFailures(
  states: readonly UploadState[],
  at: { now: number; afterMs: number; retriesWithinMs: number; bucket: string },
): UploadFailures {
  const found: UploadFailures = { uploads: states.length, failed: [], waiting: [] };
  const newestFirst = [...states].sort((a, b) => (newerUpload(a, b) ? -1 : newerUpload(b, a) ? 1 : 0));
  for (const state of newestFirst) {
    const { report } = state;
    const age = at.now - state.lastModified.getTime();
    if (report && report.outcome !== 'failed') continue;
    if (!report && age < at.afterMs) {
      found.waiting.push({ upload: state.key, uploaded_at: state.lastModified.toISOString() });
      continue;
    }
    const reportKey = reportKeyFor(UPLOAD_PREFIXES.incomingPrefix, UPLOAD_PREFIXES.reportsPrefix, state.key);
    found.failed.push({
      upload: state.key,
      name: nameOf(state.key),
      status: report ? 'failed' : 'no_report',
      uploaded_at: state.lastModified.toISOString(),
      size: state.size,
      cause: report ? (report.error ?? 'failed') : `no report after ${minutes(at.afterMs)}`,
      last_attempt_at: report?.finished_at ?? null,
      builder_may_retry: report !== undefined && at.now - Date.parse(report.finished_at) < at.retriesWithinMs,
      report_uri: `s3://${at.bucket}/${reportKey}`,
      newer: newerThan(state, states),
      report: report ?? null,
    });
  }
  return found;
}

/**
 * Why `retry` must not run `own` again now, or undefined when it may. `force` overrides what only may be
 * wrong (a build still under way, a newer upload), never what cannot be retried.
 * @example retryRefusal(undefined, [], { key: 'incoming/a.tar.gz', now, afterMs, force: false }) // → 'incoming/a.tar.gz is not in the incoming prefix: …'
 */
export function retryRefusal(
  own: UploadState | undefined,
  states: readonly UploadState[],
  at: { key: string; now: number; afterMs: number; force: boolean },
): string | undefined {
  if (!own) {
    return `${at.key} is not in the incoming prefix: never uploaded, or expired (the stack keeps uploads 7 days); upload the snapshot again`;
  }
  const { report } = own;
  if (report && report.outcome !== 'failed') {
    const again =
      report.outcome === 'invalid'
        ? 'fix the snapshot and upload it again'
        : 'to publish it anyway, upload it again';
    return `the builder has its final word on ${own.key}: ${reportLine(report)}; nothing to retry (${again})`;
  }
  if (at.force) return undefined;
  const age = at.now - own.lastModified.getTime();
  if (!report && age < at.afterMs) {
    return (
      `${own.key} has no report yet, but was uploaded only ${minutes(age)} ago: the builder may still be at it ` +
      `(an attempt takes up to 15 minutes on the stack); wait, or retry with --force`
    );
  }
  const newer = newerThan(own, states);
  if (newer) {
    return (
      `a newer upload, ${newer.upload} (${newer.outcome}), came after ${own.key}: retried, ${own.key} would be the ` +
      `newest upload and its older catalogue would be published over that one (the newest upload wins); retry ` +
      `${nameOf(newer.upload)} instead if that one failed, or add --force to publish ${nameOf(own.key)}'s catalogue anyway`
    );
  }
  return undefined;
}

/** The report of an upload, when the report at its key is about these bytes (a name used again keeps an older one). */
function reportFor(key: string, etag: string, report: UploadReport | undefined): UploadReport | undefined {
  if (!report || report.upload !== key) return undefined;
  return report.etag === null || bareEtag(report.etag) === etag ? report : undefined;
}

/**
 * Every upload in the destination's incoming prefix whose name follows the grammar (the builder publishes no
 * other), with its report for those bytes.
 * @example const states = await readUploadStates(destination);
 */
export async function readUploadStates(destination: UploadDestination): Promise<UploadState[]> {
  const { incomingPrefix, reportsPrefix } = UPLOAD_PREFIXES;
  const states: UploadState[] = [];
  for await (const object of destination.store.list(incomingPrefix)) {
    if (!UPLOAD_NAME.test(object.key.slice(incomingPrefix.length)) || !object.lastModified) continue;
    states.push({
      key: object.key,
      lastModified: object.lastModified,
      etag: bareEtag(object.etag ?? ''),
      size: object.size,
      report: undefined,
    });
  }
  const pool = new TaskPool(READS_IN_FLIGHT);
  for (const state of states) {
    await pool.run(async () => {
      const read = await readReport(destination, reportKeyFor(incomingPrefix, reportsPrefix, state.key));
      state.report = reportFor(state.key, state.etag, read && parseReport(read.body));
    });
  }
  await pool.drain();
  return states;
}

/** What `failed` and `retry` were given. */
export interface FailuresRequest extends DestinationRequest {
  /** `--after`: how long an upload may go without a report (default by destination: {@link BUILDER_TIMING}). */
  afterMs: number | undefined;
  json: boolean;
}

/** The destination, or the exit code of a destination that could not be opened (said already). */
async function destinationFor(
  request: FailuresRequest,
  command: string,
): Promise<UploadDestination | number> {
  try {
    return await openDestination(request);
  } catch (error) {
    if (error instanceof RangeError)
      throw new UsageError(error.message.replace(/\bupload takes\b/, `${command} takes`));
    if (!(error instanceof DestinationError)) throw error;
    process.stderr.write(`${command} failed: ${error.message}\n`);
    return EXIT.publishFailed;
  }
}

/** A fault reading or writing the bucket, in one line, with the permissions these commands need. */
function faultLine(command: string, error: unknown, destination: UploadDestination): string {
  const { kind, advice } = explainPublishFailure(error, {
    description: `s3://${destination.bucket}/`,
    endpoint: destination.endpoint,
    again: `run ${command} again`,
  });
  const { incomingPrefix, reportsPrefix } = UPLOAD_PREFIXES;
  const why =
    destination.local && kind === 'unreachable'
      ? 'npm start is not running on this data directory (its local S3 does not answer): start it (npm start)'
      : kind === 'permission'
        ? `access denied on s3://${destination.bucket}: failed needs s3:ListBucket on ${incomingPrefix} and s3:GetObject on ${reportsPrefix}*; retry also s3:GetObject and s3:PutObject on ${incomingPrefix}*.tar.gz`
        : advice;
  return `${command} failed: ${errorWithCause(error)}; ${why}`;
}

/** How to run retry on the same destination, for the listing's hints. */
function retryLine(name: string, request: FailuresRequest, force: boolean): string {
  const out = request.out === undefined ? '' : ` --out ${request.out}`;
  const endpoint = request.endpoint === undefined ? '' : ` --endpoint ${request.endpoint}`;
  return `npm run catalogue -- retry ${name}${out}${endpoint}${force ? ' --force' : ''}`;
}

/** One failure as `failed` prints it: the upload, what became of it, and what to do. */
function failureLines(failure: UploadFailure, request: FailuresRequest): string[] {
  const uploaded = `uploaded ${when(failure.uploaded_at)}`;
  const head =
    failure.status === 'failed'
      ? `${failure.upload}  failed (${uploaded}, last attempt ${when(failure.last_attempt_at!)}): ${failure.cause}`
      : `${failure.upload}  ${failure.cause} (${uploaded}): the builder never finished an attempt; its log and the stack's on-failure queue say why`;
  const lines = [head];
  if (failure.builder_may_retry)
    lines.push('  the builder may still try it again by itself (its last attempt is recent)');
  if (failure.newer) {
    lines.push(
      `  a newer upload, ${failure.newer.upload} (${failure.newer.outcome}), came after it: retry refuses to publish this one over it; to do so anyway: ${retryLine(failure.name, request, true)}`,
    );
  } else {
    lines.push(`  to run it again: ${retryLine(failure.name, request, false)}`);
  }
  return lines;
}

/**
 * `failed`: list the uploads that failed or got no report, with their cause; exit 0 when there are none, 8 when
 * there are (a check a schedule can alarm on), 3 when the bucket could not be read.
 * @example await failedCommand({ out: 's3://my-bucket', endpoint: undefined, afterMs: undefined, json: false, env: process.env, root: '.' }) // → 0
 */
export async function failedCommand(request: FailuresRequest): Promise<number> {
  const opened = await destinationFor(request, 'failed');
  if (typeof opened === 'number') return opened;
  const destination = opened;
  try {
    const timing = BUILDER_TIMING[destination.local ? 'local' : 'stack'];
    const afterMs = request.afterMs ?? timing.noReportAfterMs;
    const states = await readUploadStates(destination);
    const found = findFailures(states, {
      now: Date.now(),
      afterMs,
      retriesWithinMs: timing.retriesWithinMs,
      bucket: destination.bucket,
    });
    const exitCode = found.failed.length > 0 ? EXIT.failedUploads : EXIT.ok;
    if (request.json) {
      const listing = {
        destination: destination.description,
        no_report_after_minutes: afterMs / 60_000,
        ...found,
      };
      process.stdout.write(`${JSON.stringify({ ...listing, exit_code: exitCode }, null, 2)}\n`);
      return exitCode;
    }
    const where = `${destination.description}, ${UPLOAD_PREFIXES.incomingPrefix}`;
    const lines =
      found.failed.length === 0
        ? [`${where}: none of ${found.uploads} uploads failed or went ${minutes(afterMs)} without a report`]
        : [
            `${where}: ${found.failed.length} of ${found.uploads} uploads failed or went ${minutes(afterMs)} without a report, newest first`,
            ...found.failed.flatMap((failure) => failureLines(failure, request)),
          ];
    if (found.waiting.length > 0) {
      lines.push(
        `${found.waiting.length} more without a report yet, uploaded under ${minutes(afterMs)} ago (the builder may still be at them): ${found.waiting.map((w) => w.upload).join(', ')}`,
      );
    }
    process.stdout.write(`${lines.join('\n')}\n`);
    return exitCode;
  } catch (error) {
    process.stderr.write(`${faultLine('failed', error, destination)}\n`);
    return EXIT.publishFailed;
  } finally {
    destination.close();
  }
}

/** What `retry` was given. */
export interface RetryRequest extends FailuresRequest {
  /** The upload: `NAME`, `NAME.tar.gz` or `incoming/NAME.tar.gz`. */
  name: string;
  force: boolean;
  waitMs: number;
}

/**
 * The upload's key from what `retry` was given: `NAME`, `NAME.tar.gz` or `incoming/NAME.tar.gz`.
 * @example retryKey('20260601T120000Z-abc') // → 'incoming/20260601T120000Z-abc.tar.gz'
 */
export function retryKey(given: string): string {
  const { incomingPrefix } = UPLOAD_PREFIXES;
  const bare = given.startsWith(incomingPrefix) ? given.slice(incomingPrefix.length) : given;
  const file = bare.endsWith('.tar.gz') ? bare : `${bare}.tar.gz`;
  if (!UPLOAD_NAME.test(file)) {
    throw new UsageError(
      `retry ${given}: an upload's name is letters, digits, ".", "_" and "-" (at most 128), starting with a letter or digit, as failed lists it`,
    );
  }
  return `${incomingPrefix}${file}`;
}

/**
 * `retry NAME`: upload NAME's bytes again under its name (unless {@link retryRefusal} says why not: exit 5,
 * nothing written), then follow the builder's report as upload does and exit with its outcome.
 * @example await retryCommand({ name: '20260601T120000Z-abc', force: false, waitMs: 900_000, … }) // → 0
 */
export async function retryCommand(request: RetryRequest): Promise<number> {
  const key = retryKey(request.name);
  const { result, say, finish } = commandOutcome(request.json, performance.now());
  const opened = await destinationFor(request, 'retry');
  if (typeof opened === 'number') return opened;
  const destination = opened;
  try {
    const afterMs = request.afterMs ?? BUILDER_TIMING[destination.local ? 'local' : 'stack'].noReportAfterMs;
    const states = await readUploadStates(destination);
    const own = states.find((state) => state.key === key);
    const refusal = retryRefusal(own, states, { key, now: Date.now(), afterMs, force: request.force });
    const refuse = (why: string) =>
      finish(
        { outcome: 'refused', exit_code: EXIT.refused, error: why },
        `retry refused: ${why}; nothing was written`,
      );
    if (refusal !== undefined) return refuse(refusal);
    // The bytes as they are, written again only over themselves: a re-upload meanwhile is left alone.
    const read = await destination.store.get(key);
    if (!read.ok || bareEtag(read.etag) !== own!.etag)
      return refuse(`${key} changed or went while retry read it`);
    const reportKey = reportKeyFor(UPLOAD_PREFIXES.incomingPrefix, UPLOAD_PREFIXES.reportsPrefix, key);
    const before = await reportEtag(destination, reportKey);
    const sent = performance.now();
    const put = await destination.store.putIf(
      key,
      read.body,
      { ifMatch: read.etag },
      { contentType: 'application/gzip' },
    );
    if (!put.ok)
      return refuse(`${key} was uploaded again while retry wrote it: that upload's own event publishes it`);
    result.seconds.upload = Math.round(performance.now() - sent) / 1000;
    return await followReport({
      destination,
      key,
      etag: put.etag,
      reportKey,
      before,
      waitMs: request.waitMs,
      sent: `uploaded ${key} again (the same ${formatBytes(read.body.byteLength)}) to ${destination.description} in ${result.seconds.upload.toFixed(1)} s`,
      result,
      say,
      finish,
    });
  } catch (error) {
    const line = faultLine('retry', error, destination);
    return finish({ error: line }, line);
  } finally {
    destination.close();
  }
}
