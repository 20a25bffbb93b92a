/**
 * Waiting for the builder's word on one upload: its report (`reports/<name>.json`, builder/upload/report.ts),
 * read until it is there, within a time limit. Only reads of the report are made — what the stack's upload
 * policy allows — so a report not written yet may answer 403 rather than 404 (S3 says "access denied" for a
 * missing object to a caller that may not list the bucket): both mean "not yet".
 *
 * A report is this upload's when it names the upload and its ETag and was not there before the upload (a name
 * used again after its upload expired keeps its old report). A `failed` report is not the last word: the
 * builder tries a failed upload again (Lambda twice, about 1 and 3 minutes later; `npm start` 5 and 20 s
 * later) and rewrites the report, so waiting goes on until the attempts are spent or the time is up.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { UploadReport } from './upload/report.js';
import type { UploadDestination } from './upload-destination.js';

/** The builder's attempts at one upload: the first and two retries (infra/upload-builder.ts, local/uploads.ts). */
export const BUILDER_ATTEMPTS = 3;

/** The pause between reads: short at first (a small edit is published in about a second), doubling to 5 s. */
const PAUSES_MS = { first: 250, longest: 5_000 } as const;

export interface ReportWait {
  destination: UploadDestination;
  /** The upload's key and its ETag as the upload's answer gave it. */
  key: string;
  etag: string;
  reportKey: string;
  /** The S3 ETag of a report that was there before the upload (not this upload's), if any. */
  before: string | undefined;
  /** When to stop waiting (performance.now() time). */
  deadline: number;
  /** Said while waiting: a failed attempt, and how long it has been, now and then. */
  note(line: string): void;
  /** The pause between reads, first and longest (default {@link PAUSES_MS}). */
  pausesMs?: { first: number; longest: number };
  /** Stops the waiting (Ctrl-C): awaitReport then resolves as if the time had run out. */
  signal?: AbortSignal;
}

export type WaitOutcome =
  | { done: true; report: UploadReport }
  /** The time ran out; `failed` is the last failed attempt's report, if there was one. */
  | { done: false; failed: UploadReport | undefined };

/** The S3 ETag of the report at `reportKey` now, or undefined when there is none (or it may not be read yet). */
export async function reportEtag(
  destination: UploadDestination,
  reportKey: string,
): Promise<string | undefined> {
  const read = await readReport(destination, reportKey);
  return read?.etag;
}

/** The report's bytes and ETag, or undefined when it is not there yet (404, or 403 to a caller that may not list). */
export async function readReport(
  destination: UploadDestination,
  reportKey: string,
): Promise<{ body: Buffer; etag: string } | undefined> {
  try {
    const read = await destination.store.get(reportKey);
    return read.ok ? { body: read.body, etag: read.etag } : undefined;
  } catch (error) {
    const cause = (error as { cause?: { name?: string; $metadata?: { httpStatusCode?: number } } }).cause;
    if (cause?.name === 'AccessDenied' || cause?.$metadata?.httpStatusCode === 403) return undefined;
    throw error;
  }
}

const bare = (etag: string | null | undefined) => (etag ?? '').replace(/^"|"$/g, '');

/** The report in `read`, when it is this upload's (see above), else undefined. */
function ownReport(wait: ReportWait, read: { body: Buffer; etag: string }): UploadReport | undefined {
  if (read.etag === wait.before) return undefined;
  let report: UploadReport;
  try {
    report = JSON.parse(read.body.toString('utf8')) as UploadReport;
  } catch {
    return undefined; // not a report the builder wrote; a later read may find one
  }
  if (report.upload !== wait.key) return undefined;
  if (report.etag !== null && bare(report.etag) !== bare(wait.etag)) return undefined;
  return report;
}

/**
 * Read the report until the builder's last word on the upload, or until the deadline.
 * @example const outcome = await awaitReport({ destination, key, etag, reportKey, before, deadline, note });
 */
export async function awaitReport(wait: ReportWait): Promise<WaitOutcome> {
  const started = performance.now();
  const pauses = wait.pausesMs ?? PAUSES_MS;
  let pause = pauses.first;
  let failed: UploadReport | undefined;
  let failures = 0;
  let lastNote = started;
  let seen: string | undefined;
  for (;;) {
    const read = await readReport(wait.destination, wait.reportKey);
    const report = read && read.etag !== seen ? ownReport(wait, read) : undefined;
    if (read) seen = read.etag;
    if (report && report.outcome !== 'failed') return { done: true, report };
    if (report) {
      failed = report;
      failures += 1;
      if (failures >= BUILDER_ATTEMPTS) return { done: true, report };
      wait.note(`the builder's attempt ${failures} failed: ${report.error}; it tries the upload again`);
    }
    const now = performance.now();
    if (now >= wait.deadline || wait.signal?.aborted) return { done: false, failed };
    if (now - lastNote >= 30_000) {
      wait.note(`waiting for ${wait.reportKey}: ${Math.round((now - started) / 1000)} s so far`);
      lastNote = now;
    }
    await sleep(Math.min(pause, wait.deadline - now), undefined, { signal: wait.signal }).catch(() => {});
    if (wait.signal?.aborted) return { done: false, failed };
    pause = Math.min(pause * 2, pauses.longest);
  }
}
