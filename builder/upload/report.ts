/**
 * What the upload builder says about an upload: the report object it writes (`<reports prefix><name>.json`,
 * the first 1,000 problems included, all of them counted) and the event it sends (the same report, its
 * problems cut to the first {@link EVENT_PROBLEMS}, since an EventBridge event holds at most 256 KB). The
 * publisher's application reads one or the other; docs/publishing.md describes both.
 *
 * A report is written once per upload (a conditional write: a Lambda retry or a second delivery of the same S3
 * event finds it and sends its event again, rewriting nothing); only a `failed` one is replaced, by the
 * outcome of the retry. Its event carries `event_id`, the same at every sending of the same outcome, so a
 * subscriber drops what it has seen (EventBridge delivers at least once and PutEvents has no idempotency key).
 */
import { createHash } from 'node:crypto';
import type { VersionCounts } from '../publish/history.js';
import { formatProblem, type Problem, printable } from '../snapshot/problems.js';
import { UPLOAD_NAME } from './archive.js';

/**
 * - `published`: the upload's snapshot is the live version now;
 * - `unchanged`: it was the live version already (the same catalogue as published);
 * - `invalid`: it was refused (a damaged archive, or a snapshot that does not validate): nothing was written;
 * - `superseded`: a newer upload came in before it went live: that one is published instead;
 * - `failed`: publishing failed (storage, or another publish held the target too long); the live version
 *   is unchanged and the upload is tried again.
 */
export type UploadOutcome = 'published' | 'unchanged' | 'invalid' | 'superseded' | 'failed';

export interface UploadReport {
  /** The uploaded object's key, e.g. `incoming/2026-06-01T1200Z-a1b2c3.tar.gz`. */
  upload: string;
  /** Its ETag (bare) and when S3 completed it. */
  etag: string | null;
  uploaded_at: string | null;
  /** The uploader's AWS principal, as S3's event names it. */
  uploaded_by: string | null;
  outcome: UploadOutcome;
  /**
   * Stable for the upload's outcome: the same whenever the same outcome of the same upload (key and ETag) is
   * sent again; a `failed` attempt has its own. Drop an event whose `event_id` you have seen.
   */
  event_id: string;
  /** The live version after this upload was handled (for `published`, the upload's own). */
  version: string | null;
  /** The version that was live before (for `published`). */
  previous_version: string | null;
  /** The snapshot digest of the upload's four files (builder/snapshot/source.ts), once read. */
  snapshot: string | null;
  counts: VersionCounts | null;
  /** What the publish changed in the target: objects and bytes added and removed, and how it built. */
  changes: {
    objects_added: number;
    bytes_added: number;
    objects_removed: number;
    bytes_removed: number;
    build: 'incremental' | 'full' | 'repair';
  } | null;
  /** The first 1,000 problems (`invalid`), in file and record order; in the event, the first {@link EVENT_PROBLEMS}. */
  problems: (Problem & { message: string })[];
  /** Every problem found, kept or not. */
  problem_count: number;
  /** For `superseded`: the newer upload. */
  superseded_by: string | null;
  /** For `failed`: what went wrong. */
  error: string | null;
  started_at: string;
  finished_at: string;
  seconds: number;
  /** Where the full report is. */
  report: string;
}

/** Problems an event carries; the report object holds up to 1,000 (problems.ts PROBLEM_CAP). */
export const EVENT_PROBLEMS = 50;

/** The EventBridge `source` of the builder's events. */
export const EVENT_SOURCE = 'catalogue-read-api.builder';

/** The EventBridge `detail-type` of each outcome (a rule can match one, e.g. only refused uploads). */
export const DETAIL_TYPES: Record<UploadOutcome, string> = {
  published: 'Catalogue upload published',
  unchanged: 'Catalogue upload unchanged',
  invalid: 'Catalogue upload refused',
  superseded: 'Catalogue upload superseded',
  failed: 'Catalogue upload failed',
};

/**
 * The report key of an upload: its name under the reports prefix, `.tar.gz` replaced by `.json`. A name that
 * breaks the upload grammar ({@link UPLOAD_NAME}) cannot be trusted to stay under the reports prefix
 * (`../current.tar.gz`): its report goes to `invalid-names/`, named by the name's letters, digits, `.`, `_`
 * and `-` (each other character an `_`, at most 64) and the first 12 hex digits of the key's SHA-256.
 * @example reportKeyFor('incoming/', 'reports/', 'incoming/a.tar.gz') // → 'reports/a.json'
 * @example reportKeyFor('incoming/', 'reports/', 'incoming/../current.tar.gz') // → 'reports/invalid-names/current.tar.gz-0b9f3c1d2e4a.json'
 */
export function reportKeyFor(incomingPrefix: string, reportsPrefix: string, uploadKey: string): string {
  const name = uploadKey.slice(incomingPrefix.length);
  if (UPLOAD_NAME.test(name)) return `${reportsPrefix}${name.replace(/\.tar\.gz$/, '')}.json`;
  const safe = name
    .replace(/[^A-Za-z0-9._-]/g, '_')
    .replace(/^[._-]+/, '')
    .slice(0, 64);
  const digest = createHash('sha256').update(uploadKey).digest('hex').slice(0, 12);
  return `${reportsPrefix}invalid-names/${safe}-${digest}.json`;
}

/**
 * The stable id of an outcome's event: of the upload's key, its ETag and the outcome (and, for `failed`, when
 * that attempt started: each failure is news of its own).
 * @example outcomeEventId({ upload: 'incoming/a.tar.gz', etag: 'e', outcome: 'published', started_at: '…' }) // → '5d41…' (32 hex digits)
 */
export function outcomeEventId(
  report: Pick<UploadReport, 'upload' | 'etag' | 'outcome' | 'started_at'>,
): string {
  const parts = [report.upload, report.etag ?? '', report.outcome];
  if (report.outcome === 'failed') parts.push(report.started_at);
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 32);
}

/** Problems as the report lists them: the fields, and the line the CLI prints. */
export function reportProblems(problems: readonly Problem[]): UploadReport['problems'] {
  return problems.map((problem) => ({ ...problem, message: formatProblem(problem) }));
}

/**
 * The event's detail: the report with its problems cut to the first {@link EVENT_PROBLEMS} (`problem_count`
 * still counts them all; the report object has every one).
 * @example eventDetail(report).problems.length // → at most 50
 */
export function eventDetail(report: UploadReport): UploadReport {
  return { ...report, problems: report.problems.slice(0, EVENT_PROBLEMS) };
}

/**
 * One line for a log: the outcome and what matters about it.
 * @example reportLine(report) // → 'incoming/a.tar.gz: published version Vx… (25,000 modules; 110 objects added, 107.6 MB) in 4.2 s'
 */
export function reportLine(report: UploadReport): string {
  const count = (n: number) => n.toLocaleString('en-US');
  const seconds = `${report.seconds.toFixed(1)} s`;
  const upload = printable(report.upload);
  switch (report.outcome) {
    case 'published':
      return (
        `${upload}: published version ${report.version} (${count(report.counts?.modules ?? 0)} modules; ` +
        `${count(report.changes?.objects_added ?? 0)} objects added) in ${seconds}`
      );
    case 'unchanged':
      return `${upload}: already live as version ${report.version}; nothing written (${seconds})`;
    case 'invalid':
      return `${upload}: refused, ${count(report.problem_count)} problem${report.problem_count === 1 ? '' : 's'}; nothing was written (${report.report})`;
    case 'superseded':
      return `${upload}: superseded by the newer ${printable(report.superseded_by ?? '')}; not published`;
    case 'failed':
      return `${upload}: publishing failed: ${printable(report.error ?? '', Number.POSITIVE_INFINITY)}; the live version is unchanged and the upload is tried again`;
  }
}
