/**
 * `npm run catalogue -- upload <folder or .tar.gz>`: publish by upload in one command, as a publisher's CI
 * does it. The steps, each a value or the end of the command:
 * 1. check: pack the folder (or take the .tar.gz) and check it as the builder will (upload-pack.ts): an invalid
 *    snapshot ends here with every problem, exit 1, nothing uploaded;
 * 2. upload it to the destination's `incoming/<name>.tar.gz` (upload-destination.ts), a name in the builder's
 *    grammar that sorts by time (`20260601T120000.123Z-<snapshot>`, or `--name`), never over another upload;
 * 3. wait for the builder's report (upload-wait.ts), at most `--wait`;
 * 4. say the outcome — the version, what changed, how long it took — in words, or with `--json` as one JSON
 *    object for a CI, and exit with the outcome's code (exit.ts): 0 published or unchanged, 1 refused,
 *    3 failed, 6 superseded, 7 timed out; Ctrl-C while waiting says the build goes on (130; SIGTERM 143).
 */
import { basename } from 'node:path';
import { UsageError } from '../cli/kit.js';
import { errorWithCause } from '../store/errors.js';
import { UPLOAD_PREFIXES } from '../store/upload-prefixes.js';
import { EXIT } from './exit.js';
import { explainPublishFailure } from './report/failure.js';
import { formatBytes } from './report/progress.js';
import { formatProblem, type Problem } from './snapshot/problems.js';
import { UPLOAD_NAME } from './upload/archive.js';
import { reportKeyFor, type UploadReport } from './upload/report.js';
import { DestinationError, openDestination, type UploadDestination } from './upload-destination.js';
import { type CheckedUpload, checkUpload, sourceProblem } from './upload-pack.js';
import { awaitReport, reportEtag } from './upload-wait.js';

/** How long to wait for the report unless --wait says: the stack's builder has up to 15 minutes per attempt. */
export const DEFAULT_WAIT_MS = 15 * 60_000;

/** What the command was given. */
export interface UploadRequest {
  /** The folder or `.tar.gz`. */
  source: string;
  out: string | undefined;
  endpoint: string | undefined;
  /** `--name`, without `.tar.gz`. */
  name: string | undefined;
  waitMs: number;
  json: boolean;
  env: Record<string, string | undefined>;
  root: string;
}

/** What the command says, in words (stdout: the outcome; stderr: the steps) or as JSON. */
export interface Say {
  step(line: string): void;
  outcome(line: string): void;
}

/** The outcome of the whole command, as `--json` prints it (docs/publishing.md, "Uploading from a CI job"). */
export interface UploadResult {
  /**
   * One of the report's, or the command's own: no report in time (`timed_out`), the waiting interrupted
   * (`interrupted`: Ctrl-C), a retry refused before anything was written (`refused`).
   */
  outcome: UploadReport['outcome'] | 'timed_out' | 'interrupted' | 'refused';
  exit_code: number;
  /** The uploaded object's key; null when nothing was uploaded (refused by the check, or the upload failed). */
  upload: string | null;
  /** Where the builder's report is (`s3://bucket/reports/<name>.json`), once uploaded. */
  report_uri: string | null;
  /** The snapshot digest, once checked. */
  snapshot: string | null;
  /** The live version after the upload (for `published`, the upload's). */
  version: string | null;
  /** Every problem (`invalid`), found by the check or by the builder. */
  problems: (Problem & { message: string })[];
  problem_count: number;
  /** For `failed` and `timed_out`, or an upload that could not be made: what went wrong. */
  error: string | null;
  /** Seconds: checking, uploading, waiting, in all; and the builder's own, from its report. */
  seconds: { check: number; upload: number; wait: number; total: number; builder: number | null };
  /** The builder's report, as it wrote it; null when there is none. */
  report: UploadReport | null;
}

const seconds = (ms: number) => Math.round(ms) / 1000;

/**
 * The name of an upload made at `at` of the snapshot `digest`: a UTC time to the millisecond first, so that
 * a later upload sorts after (the builder orders uploads by completion time, then by name), then the digest.
 * @example uploadName(new Date('2026-06-01T12:00:00.123Z'), '73bcfbfa62129bce…') // → '20260601T120000.123Z-73bcfbfa6212'
 */
export function uploadName(at: Date, digest: string): string {
  const time = at.toISOString().replace(/[-:]/g, '');
  return `${time}-${digest.slice(0, 12)}`;
}

/** The name to upload under: `--name` checked against the builder's grammar, else made from the time. */
function nameFor(request: UploadRequest, digest: string): string {
  const name = request.name ?? uploadName(new Date(), digest);
  if (!UPLOAD_NAME.test(`${name}.tar.gz`)) {
    throw new UsageError(
      `--name ${request.name}: an upload's name is letters, digits, ".", "_" and "-" (at most 128), starting with a letter or digit`,
    );
  }
  return name;
}

/**
 * Run `upload`; resolves to its exit code.
 * @example await uploadCommand({ source: 'my-catalogue', out: undefined, … }) // → 0
 */
export async function uploadCommand(request: UploadRequest): Promise<number> {
  const problem = await sourceProblem(request.source);
  if (problem !== undefined) throw new UsageError(`${request.source}: ${problem}`);
  const started = performance.now();
  const { result, say, finish } = commandOutcome(request.json, started);
  const checked = await checkUpload(request.source, request.source);
  result.seconds.check = seconds(performance.now() - started);
  if (!checked.ok) return refusedByCheck(checked.problems, say, finish);
  result.snapshot = checked.digest;
  const name = nameFor(request, checked.digest);
  say.step(checkedLine(request.source, checked));
  let destination: UploadDestination;
  try {
    destination = await openDestination(request);
  } catch (error) {
    if (error instanceof RangeError) throw new UsageError(error.message);
    if (!(error instanceof DestinationError)) throw error;
    return finish(
      { outcome: 'failed', exit_code: EXIT.publishFailed, error: error.message },
      `upload failed: ${error.message}`,
    );
  }
  try {
    return await uploadAndWait({ request, destination, archive: checked.archive, name, result, say, finish });
  } finally {
    destination.close();
  }
}

/**
 * The outcome of a command that ends as upload does (upload, retry): its result, what it says, and how it ends.
 * @example const { result, say, finish } = commandOutcome(false, performance.now());
 */
export function commandOutcome(
  json: boolean,
  started: number,
): { result: UploadResult; say: Say; finish: Finish } {
  const result = emptyResult();
  const say = sayer(json);
  const finish: Finish = (fields, line) => {
    Object.assign(result, fields);
    result.seconds.total = seconds(performance.now() - started);
    if (json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    else say.outcome(typeof line === 'string' ? line : line(result.seconds.total));
    return result.exit_code;
  };
  return { result, say, finish };
}

function emptyResult(): UploadResult {
  return {
    outcome: 'failed',
    exit_code: EXIT.publishFailed,
    upload: null,
    report_uri: null,
    snapshot: null,
    version: null,
    problems: [],
    problem_count: 0,
    error: null,
    seconds: { check: 0, upload: 0, wait: 0, total: 0, builder: null },
    report: null,
  };
}

/** Steps on stderr, the outcome on stdout; with --json, only the steps (the JSON is the outcome). */
function sayer(json: boolean): Say {
  return {
    step: (line) => process.stderr.write(`${line}\n`),
    outcome: (line) => (json ? undefined : process.stdout.write(`${line}\n`)),
  };
}

/** End the command: the result's last fields, the outcome line (or how to make it from the whole time). */
export type Finish = (
  fields: Partial<UploadResult>,
  line: string | ((totalSeconds: number) => string),
) => number;

function refusedByCheck(problems: readonly Problem[], say: Say, finish: Finish): number {
  for (const problem of problems) say.step(formatProblem(problem));
  const count = `${problems.length} problem${problems.length === 1 ? '' : 's'}`;
  return finish(
    {
      outcome: 'invalid',
      exit_code: EXIT.invalid,
      problems: problems.map((problem) => ({ ...problem, message: formatProblem(problem) })),
      problem_count: problems.length,
    },
    `snapshot refused: ${count}; nothing was uploaded`,
  );
}

function checkedLine(source: string, checked: CheckedUpload & { ok: true }): string {
  const { modules, manufacturers, standards, tags } = checked.counts;
  const packed = source.endsWith('.tar.gz') ? basename(source) : 'packed';
  return (
    `checked ${source}: valid (${modules} modules, ${manufacturers} manufacturers, ${standards} standards, ` +
    `${tags} tags; snapshot ${checked.digest.slice(0, 12)}), ${packed} ${formatBytes(checked.archive.byteLength)}`
  );
}

/** One upload under way: what it needs from the steps before. */
interface Upload {
  request: UploadRequest;
  destination: UploadDestination;
  archive: Buffer;
  name: string;
  result: UploadResult;
  say: Say;
  finish: Finish;
}

/** Upload the archive, never over another upload; then wait for the report and say the outcome. */
async function uploadAndWait(upload: Upload): Promise<number> {
  const { destination, archive, name, result, finish } = upload;
  const { incomingPrefix, reportsPrefix } = UPLOAD_PREFIXES;
  const key = `${incomingPrefix}${name}.tar.gz`;
  const reportKey = reportKeyFor(incomingPrefix, reportsPrefix, key);
  const sent = performance.now();
  let etag: string;
  let before: string | undefined;
  try {
    before = await reportEtag(destination, reportKey);
    const put = await destination.store.putIf(
      key,
      archive,
      { ifNoneMatch: '*' },
      { contentType: 'application/gzip' },
    );
    if (!put.ok)
      throw new UsageError(
        `${key} exists already in s3://${destination.bucket}: upload under another --name`,
      );
    etag = put.etag;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    return finish(
      { error: faultText(error, destination) },
      `upload failed: ${faultText(error, destination)}`,
    );
  }
  result.seconds.upload = seconds(performance.now() - sent);
  return followReport({
    ...upload,
    key,
    etag,
    reportKey,
    before,
    waitMs: upload.request.waitMs,
    sent: `uploaded ${key} to ${destination.description} in ${result.seconds.upload.toFixed(1)} s`,
  });
}

/** An upload made (or made again, by retry): what following its report needs, and the step line that says so. */
export interface Following {
  destination: UploadDestination;
  key: string;
  /** The upload's ETag as the upload's answer gave it. */
  etag: string;
  reportKey: string;
  /** The S3 ETag of a report there before this upload (not its word), if any. */
  before: string | undefined;
  waitMs: number;
  /** The step line's start: `uploaded incoming/….tar.gz to … in 0.2 s`. */
  sent: string;
  result: UploadResult;
  say: Say;
  finish: Finish;
}

/**
 * Wait for the builder's report on an upload just made, then say the outcome and end with its exit code.
 * @example return followReport({ destination, key, etag, reportKey, before, waitMs, sent, result, say, finish });
 */
export async function followReport(following: Following): Promise<number> {
  const { destination, key, etag, reportKey, before, result, say, finish } = following;
  Object.assign(result, { upload: key, report_uri: `s3://${destination.bucket}/${reportKey}` });
  const limit = formatWait(following.waitMs);
  say.step(`${following.sent}; waiting for the builder's report (at most ${limit})`);
  const waited = performance.now();
  // Ctrl-C (or a CI's cancel, SIGTERM) stops the waiting, not the build: said so, with where its report will be.
  const interrupt = interruption();
  const outcome = await awaitReport({
    destination,
    key,
    etag,
    reportKey,
    before,
    deadline: waited + following.waitMs,
    note: say.step,
    signal: interrupt.signal,
  })
    .catch((error: unknown) => ({ error }))
    .finally(interrupt.dispose);
  result.seconds.wait = seconds(performance.now() - waited);
  if (interrupt.signal.aborted) return interrupted(following, key, interrupt.signal.reason as NodeJS.Signals);
  if ('error' in outcome) {
    const text = `reading ${reportKey} failed: ${faultText(outcome.error, destination)}`;
    return finish(
      { error: text },
      `${text}; the upload was made: its report will be at ${result.report_uri}`,
    );
  }
  if (!outcome.done && !outcome.failed) return timedOut(following, limit);
  return reported(following, outcome.done ? outcome.report : outcome.failed!);
}

/** A fault of the destination in one line: what failed and what to do (the upload policy is what it needs). */
function faultText(error: unknown, destination: UploadDestination): string {
  const { kind, advice } = explainPublishFailure(error, {
    description: `s3://${destination.bucket}/`,
    endpoint: destination.endpoint,
    again: 'run the same upload again',
  });
  const what = errorWithCause(error);
  if (destination.local && kind === 'unreachable') {
    return `${what}; npm start is not running on this data directory (its local S3 does not answer): start it (npm start), then upload again`;
  }
  if (kind === 'permission') {
    return (
      `${what}; access denied on s3://${destination.bucket}: the identity needs s3:PutObject on ` +
      `${UPLOAD_PREFIXES.incomingPrefix}*.tar.gz and s3:GetObject on ${UPLOAD_PREFIXES.reportsPrefix}* (the stack's UploadPolicyArn policy, exactly these)`
    );
  }
  if (kind === 'transient')
    return `${what}; a temporary fault (network, timeout or throttling): run the same upload again`;
  return `${what}; ${advice}`;
}

/** The signals that stop the waiting while they are listened to (the command's default for them is to die). */
function interruption(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((signal) => {
    const stop = () => controller.abort(signal);
    process.on(signal, stop);
    return () => process.off(signal, stop);
  });
  return {
    signal: controller.signal,
    dispose: () => {
      for (const off of handlers) off();
    },
  };
}

/** The waiting was interrupted: the upload was made, and the builder goes on with it. */
function interrupted(
  { result, finish, destination }: Following,
  key: string,
  signal: NodeJS.Signals,
): number {
  const read = destination.local
    ? ", from npm start's local S3 (its ready screen shows the AWS CLI's settings for it)"
    : ` (aws s3 cp ${result.report_uri} -)`;
  const error =
    `${signal === 'SIGINT' ? 'Ctrl-C' : signal}: stopped waiting, not the build: ${key} is uploaded and ` +
    'the builder goes on with it (an upload cannot be called back)';
  return finish(
    { outcome: 'interrupted', exit_code: signal === 'SIGINT' ? EXIT.interrupted : EXIT.terminated, error },
    `${error}; follow it in its report, ${result.report_uri}, which says how it ended${read}`,
  );
}

const formatWait = (ms: number) =>
  ms % 60_000 === 0 ? `${ms / 60_000} min` : `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;

function timedOut({ result, finish, destination }: Following, limit: string): number {
  // To a caller that may not read it, a report that is there looks like one that is not (403 both).
  const unreadable = destination.local
    ? ''
    : `, or this identity may not read ${UPLOAD_PREFIXES.reportsPrefix} (the upload policy allows it)`;
  const error = `no report within ${limit}: the builder may still be at it (or waiting for another publish to finish${unreadable})`;
  return finish(
    { outcome: 'timed_out', exit_code: EXIT.timedOut, error },
    `timed out: ${error}; its report will be at ${result.report_uri} (or wait longer: --wait)`,
  );
}

/** The builder's last word: the result's fields from its report, the line that says it, the exit code. */
function reported({ result, say, finish }: Following, report: UploadReport): number {
  const fields: Partial<UploadResult> = {
    outcome: report.outcome,
    version: report.version,
    problems: report.problems,
    problem_count: report.problem_count,
    error: report.error,
    report,
  };
  result.seconds.builder = seconds(report.seconds * 1000);
  const took = (total: number) =>
    `the builder took ${report.seconds.toFixed(1)} s, ${total.toFixed(1)} s in all`;
  switch (report.outcome) {
    case 'published':
    case 'unchanged':
      return finish({ ...fields, exit_code: EXIT.ok }, (total) => `${liveLine(report)}; ${took(total)}`);
    case 'invalid': {
      for (const problem of report.problems) say.step(problem.message);
      const more = report.problem_count - report.problems.length;
      if (more > 0) say.step(`… and ${more} more (the report keeps the first ${report.problems.length})`);
      const count = `${report.problem_count} problem${report.problem_count === 1 ? '' : 's'}`;
      return finish(
        { ...fields, exit_code: EXIT.invalid },
        `refused by the builder: ${count}; nothing was published (${result.report_uri})`,
      );
    }
    case 'superseded':
      return finish(
        { ...fields, exit_code: EXIT.superseded },
        (total) =>
          `superseded: a newer upload, ${report.superseded_by}, came in before this one went live; that one is published instead (version ${report.version ?? 'none'} is live); ${took(total)}`,
      );
    case 'failed':
      return finish(
        { ...fields, exit_code: EXIT.publishFailed },
        `failed: ${report.error}; the live version (${report.version ?? 'none'}) is unchanged (${result.report_uri})`,
      );
  }
}

/** What `published` and `unchanged` say: the version, what changed and the build. */
function liveLine(report: UploadReport): string {
  const modules = `${(report.counts?.modules ?? 0).toLocaleString('en-US')} modules`;
  if (report.outcome === 'unchanged')
    return `unchanged: version ${report.version} is live already with this snapshot (${modules}); nothing was written`;
  const changes = report.changes;
  const changed = changes
    ? `${changes.objects_added} objects added (${formatBytes(changes.bytes_added)}), ${changes.objects_removed} removed (${formatBytes(changes.bytes_removed)}), ${changes.build} build`
    : 'changes not reported';
  return `published version ${report.version} (was ${report.previous_version ?? 'none'}): ${modules}; ${changed}`;
}
