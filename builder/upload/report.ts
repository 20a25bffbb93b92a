/**
 * What the upload builder says about an upload: the report object it writes (`<reports prefix><name>.json`,
 * every problem included) and the event it sends (the same report, its problems cut to the first
 * {@link EVENT_PROBLEMS}, since an EventBridge event holds at most 256 KB). The publisher's application reads
 * one or the other; docs/publishing.md describes both.
 */
import type { VersionCounts } from '../publish/history.js';
import { formatProblem, type Problem } from '../snapshot/problems.js';

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
  /** Every problem (`invalid`); in the event, the first {@link EVENT_PROBLEMS}. */
  problems: (Problem & { message: string })[];
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

/** Problems an event carries; the report object holds them all. */
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
 * The report key of an upload: its name under the reports prefix, `.tar.gz` replaced by `.json`.
 * @example reportKeyFor('incoming/', 'reports/', 'incoming/a.tar.gz') // → 'reports/a.json'
 */
export function reportKeyFor(incomingPrefix: string, reportsPrefix: string, uploadKey: string): string {
  const name = uploadKey.slice(incomingPrefix.length).replace(/\.tar\.gz$/, '');
  return `${reportsPrefix}${name}.json`;
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
  switch (report.outcome) {
    case 'published':
      return (
        `${report.upload}: published version ${report.version} (${count(report.counts?.modules ?? 0)} modules; ` +
        `${count(report.changes?.objects_added ?? 0)} objects added) in ${seconds}`
      );
    case 'unchanged':
      return `${report.upload}: already live as version ${report.version}; nothing written (${seconds})`;
    case 'invalid':
      return `${report.upload}: refused, ${report.problem_count} problem${report.problem_count === 1 ? '' : 's'}; nothing was written (${report.report})`;
    case 'superseded':
      return `${report.upload}: superseded by the newer ${report.superseded_by}; not published`;
    case 'failed':
      return `${report.upload}: publishing failed: ${report.error}; the live version is unchanged and the upload is tried again`;
  }
}
