/**
 * Publishing by upload: one S3 event for an object under the incoming prefix → checked, read, validated and
 * published through the same entry point as the CLI (publishSnapshot: lock, digests, incremental build,
 * pointer last, collection) → a report (report.ts), written once (report-object.ts). The AWS Lambda function
 * (builder/lambda.ts) and `npm start` (local/uploads.ts) both call this with the events their S3 delivers.
 *
 * The steps, each a value or a fault:
 * 0. the record: not an object creation → nothing; a key that does not decode, or outside the incoming
 *    prefix → misdirected (no report can be named: logged and acknowledged); a name that breaks the grammar →
 *    `invalid`, its report under `reports/invalid-names/` (report.ts reportKeyFor), nothing read;
 * 1. its report already the final word on this upload (a retry, a second delivery) → that report, again;
 * 2. the event's object, as the listing of the incoming prefix shows it now: gone (handled already, or
 *    expired) or overwritten since (its ETag differs: the newer write's own event publishes it) → nothing;
 * 3. a newer upload in the incoming prefix (order.ts) → `superseded`;
 * 4. the object read (the ETag still the event's), the archive read (archive.ts), the snapshot validated →
 *    or `invalid`, with its problems (the first 1,000, all counted);
 * 5. the publish: waiting up to `lockWaitMs` for another publish (a CLI's) to finish, then, holding the
 *    lock, checking again that no newer upload came in (else `superseded`, nothing written) → `published`
 *    (or `unchanged`), recording in the version who uploaded what (history.ts);
 * 6. the report object written, unless the final word on this upload is there already.
 * A store fault is `failed` (reported, then thrown again by the callers so the upload is retried). Every
 * write goes through store/layout.ts confineWrites: the catalogue's keys and the reports prefix, nothing else.
 */

import { errorWithCause } from '../../store/errors.js';
import { catalogueWrites, confineWrites, POINTER_KEY } from '../../store/layout.js';
import type { WritableObjectStore } from '../../store/objects/interface.js';
import { parsePointer } from '../../store/pointer.js';
import type { PublishProgress } from '../publish/types.js';
import { publishSnapshot } from '../publish-snapshot.js';
import { type Problem, printable } from '../snapshot/problems.js';
import { readSnapshotArchive, UPLOAD_LIMITS, UPLOAD_NAME } from './archive.js';
import { bareEtag, objectKeyOf, type S3EventRecord } from './event.js';
import { type ListedUpload, newestAfter } from './order.js';
import { outcomeEventId, reportKeyFor, reportProblems, type UploadReport } from './report.js';
import { isFinalFor, readReport, writeReportOnce } from './report-object.js';

export interface UploadSettings {
  /** The whole bucket: uploads, reports and the catalogue are keys in it. */
  store: WritableObjectStore;
  /** Key prefix of the published catalogue: '' or ending in '/'. */
  prefix: string;
  /** Where uploads arrive, e.g. `incoming/`. */
  incomingPrefix: string;
  /** Where reports go, e.g. `reports/`. */
  reportsPrefix: string;
  /** The builder's fingerprint (builder/publish/reuse.ts). */
  builder?: string;
  /** How long to wait for another publish of the target to finish (default 0: fail at once). */
  lockWaitMs?: number;
  retentionMs?: number;
  concurrency?: number;
  progress?: PublishProgress;
  warn?: (message: string) => void;
}

/** A newer upload came in: this one is not published. */
class SupersededError extends Error {
  override name = 'SupersededError';
  constructor(readonly by: string) {
    super(`a newer upload, ${by}, came in`);
  }
}

/** What one S3 event record came to. */
export type UploadResult =
  /**
   * Its report: written now, or (`repeated`) found already the final word on this upload — a Lambda retry
   * or a second delivery of the event — and to be sent again as it is.
   */
  | { kind: 'reported'; report: UploadReport; repeated: boolean }
  /** Nothing to do, and why (not an object creation; the object gone or overwritten since). */
  | { kind: 'skipped'; message: string }
  /** Not an upload anyone can be told about (a key outside the incoming prefix, or one that does not decode): logged. */
  | { kind: 'misdirected'; message: string };

/** The uploads in the incoming prefix now that may be published (their names follow the grammar), by key. */
async function listUploads(settings: UploadSettings): Promise<Map<string, Upload>> {
  const uploads = new Map<string, Upload>();
  for await (const object of settings.store.list(settings.incomingPrefix)) {
    if (!UPLOAD_NAME.test(object.key.slice(settings.incomingPrefix.length)) || !object.lastModified) continue;
    uploads.set(object.key, {
      key: object.key,
      lastModified: object.lastModified,
      etag: bareEtag(object.etag ?? ''),
      size: object.size,
    });
  }
  return uploads;
}

/** The version the pointer names now, or null (none, unreadable, or the store failing). */
async function liveVersion(settings: UploadSettings): Promise<string | null> {
  try {
    const read = await settings.store.get(`${settings.prefix}${POINTER_KEY}`);
    return (read.ok && parsePointer(read.body)?.version) || null;
  } catch {
    return null;
  }
}

/** A listed upload with what this handler checks of it. */
type Upload = ListedUpload & { etag: string; size: number };

/** The report of an upload before anything is known of it: failed, until a step says otherwise. */
function newReport(record: S3EventRecord, key: string, reportKey: string, startedAt: Date): UploadReport {
  return {
    upload: key,
    etag: record.s3.object.eTag ? bareEtag(record.s3.object.eTag) : null,
    uploaded_at: null,
    uploaded_by: record.userIdentity?.principalId ?? null,
    outcome: 'failed',
    event_id: '',
    version: null,
    previous_version: null,
    snapshot: null,
    counts: null,
    changes: null,
    problems: [],
    problem_count: 0,
    superseded_by: null,
    error: null,
    started_at: startedAt.toISOString(),
    finished_at: startedAt.toISOString(),
    seconds: 0,
    report: reportKey,
  };
}

/** The report's fields for an upload refused for `problems` (of `count` in all, when not every one was kept). */
function invalid(problems: readonly Problem[], count = problems.length): Partial<UploadReport> {
  return { outcome: 'invalid', problems: reportProblems(problems), problem_count: count };
}

/** Where the upload builder writes: the catalogue's keys, and reports. */
function uploadWrites(settings: UploadSettings): WritableObjectStore {
  const catalogue = catalogueWrites(settings.prefix);
  return confineWrites(settings.store, {
    keys: catalogue.keys,
    prefixes: [...catalogue.prefixes, settings.reportsPrefix],
  });
}

/** The upload a record announces, with its report's key; or why the record is not one. */
function routeRecord(
  record: S3EventRecord,
  settings: UploadSettings,
): { key: string; reportKey: string; nameProblem?: string } | Exclude<UploadResult, { kind: 'reported' }> {
  const raw = String(record.s3?.object?.key);
  const key = objectKeyOf(record);
  const eventName = String(record.eventName);
  if (!eventName.startsWith('ObjectCreated:')) {
    return {
      kind: 'skipped',
      message: `${printable(key ?? raw)}: ${printable(eventName)} is not an upload: nothing to do`,
    };
  }
  if (key === undefined) {
    return {
      kind: 'misdirected',
      message: `an event for ${printable(raw)}, which does not decode as an S3 event key: not handled (no report can be named for it)`,
    };
  }
  if (!key.startsWith(settings.incomingPrefix)) {
    return {
      kind: 'misdirected',
      message: `${printable(key)} is outside the incoming prefix ${settings.incomingPrefix}: not an upload, not handled (the function's trigger sends only keys under it)`,
    };
  }
  const reportKey = reportKeyFor(settings.incomingPrefix, settings.reportsPrefix, key);
  if (UPLOAD_NAME.test(key.slice(settings.incomingPrefix.length))) return { key, reportKey };
  return {
    key,
    reportKey,
    nameProblem: `an upload's name is letters, digits, ".", "_" and "-", then .tar.gz (${UPLOAD_NAME})`,
  };
}

/**
 * Handle one S3 event record: publish its upload, or say why not ({@link UploadResult}). The report is also
 * written to the reports prefix, once. Throws only when the report itself cannot be written.
 * @example
 * const result = await publishUpload(event.Records[0], { store, prefix: 'catalogue/', incomingPrefix: 'incoming/', reportsPrefix: 'reports/' });
 * if (result.kind === 'reported') console.log(result.report.outcome);
 */
export async function publishUpload(record: S3EventRecord, given: UploadSettings): Promise<UploadResult> {
  const settings = { ...given, store: uploadWrites(given) };
  const route = routeRecord(record, settings);
  if ('kind' in route) return route;
  const { key, reportKey } = route;
  const started = performance.now();
  const report = newReport(record, key, reportKey, new Date());
  const seen = await readReport(settings.store, reportKey);
  if (isFinalFor(seen, report.etag)) return { kind: 'reported', report: seen.report, repeated: true };
  const fields =
    route.nameProblem === undefined
      ? await examineUpload({ record, key, settings })
      : invalid([{ file: key, reason: route.nameProblem }]);
  if (!fields) {
    return {
      kind: 'skipped',
      message: `${printable(key)}: nothing to do: the object is gone, or was overwritten (the newer write's own event publishes it)`,
    };
  }
  Object.assign(report, fields);
  // What is live when this upload did not make it: named, whoever published it.
  if (report.version === null) report.version = await liveVersion(settings);
  report.event_id = outcomeEventId(report);
  report.finished_at = new Date().toISOString();
  report.seconds = (performance.now() - started) / 1000;
  return { kind: 'reported', ...(await writeReportOnce(settings.store, reportKey, report, seen)) };
}

/** One upload being handled: its event record, its key and the settings. */
interface Handling {
  record: S3EventRecord;
  key: string;
  settings: UploadSettings;
}

/**
 * What the report says of an upload, once handled: the object as it is now (its ETag and time), then what its
 * steps found; a step's failure is `failed`, with what was found before it. Undefined when the object is gone or
 * was overwritten.
 */
async function examineUpload(handling: Handling): Promise<Partial<UploadReport> | undefined> {
  let found: Partial<UploadReport> = {};
  try {
    // 1. The object as it is now.
    const uploads = await listUploads(handling.settings);
    const own = currentUpload(handling, uploads);
    if (!own) return undefined;
    found = { etag: own.etag, uploaded_at: own.lastModified.toISOString() };
    // 2. A newer upload is published instead.
    const newer = newestAfter(own, uploads.values());
    const fields = newer
      ? { outcome: 'superseded' as const, superseded_by: newer.key }
      : await handleUpload(handling, own);
    return fields && { ...found, ...fields };
  } catch (error) {
    return { ...found, outcome: 'failed', error: errorWithCause(error) };
  }
}

/** The upload as listed now, if it is still the one the event announced (the same ETag, when it named one). */
function currentUpload({ record, key }: Handling, uploads: Map<string, Upload>): Upload | undefined {
  const announced = record.s3.object.eTag ? bareEtag(record.s3.object.eTag) : null;
  const own = uploads.get(key);
  return own && (announced === null || own.etag === announced) ? own : undefined;
}

/**
 * The last steps of the newest upload, found as it is now (`own`): read and validate, publish. Resolves to the
 * report's fields, or undefined when the object was overwritten meanwhile.
 */
async function handleUpload(handling: Handling, own: Upload): Promise<Partial<UploadReport> | undefined> {
  const { key, settings } = handling;
  // 3. Read and validate.
  if (own.size > UPLOAD_LIMITS.compressedBytes) {
    return invalid([
      {
        file: key,
        reason: `is ${own.size} bytes; an upload may have at most ${UPLOAD_LIMITS.compressedBytes}`,
      },
    ]);
  }
  const read = await settings.store.get(key);
  if (!read.ok || bareEtag(read.etag) !== own.etag) return undefined;
  const archive = await readSnapshotArchive(read.body, key);
  if (!archive.ok) return invalid(archive.problems);
  // 4. Publish, through the CLI's entry point.
  return publishArchive(handling, own, archive.files);
}

/** Publish an upload's files, as the CLI does, recording who uploaded what; the report's fields. */
async function publishArchive(
  { record, key, settings }: Handling,
  own: Upload,
  files: Map<string, Buffer>,
): Promise<Partial<UploadReport>> {
  const outcome = await publishSnapshot(
    { name: key, files },
    { store: settings.store, prefix: settings.prefix },
    {
      ...(settings.builder !== undefined && { builder: settings.builder }),
      ...(settings.retentionMs !== undefined && { retentionMs: settings.retentionMs }),
      ...(settings.concurrency !== undefined && { concurrency: settings.concurrency }),
      ...(settings.progress && { progress: settings.progress }),
      ...(settings.warn && { warn: settings.warn }),
      lockWaitMs: settings.lockWaitMs ?? 0,
      limits: UPLOAD_LIMITS.snapshot,
      underLock: async () => {
        const again = newestAfter(own, (await listUploads(settings)).values());
        if (again) throw new SupersededError(again.key);
      },
      record: {
        by: record.userIdentity?.principalId ?? 'an unknown uploader',
        via: 'upload',
        upload: {
          key,
          etag: own.etag,
          last_modified: own.lastModified.toISOString(),
          ...(record.s3.object.sequencer !== undefined && { sequencer: record.s3.object.sequencer }),
        },
      },
    },
  );
  if (!outcome.ok && outcome.reason === 'invalid') return invalid(outcome.problems, outcome.problemCount);
  if (!outcome.ok) {
    if (outcome.error instanceof SupersededError)
      return { outcome: 'superseded', superseded_by: outcome.error.by };
    throw outcome.error;
  }
  const { summary } = outcome;
  // Live already, published from this very upload: an earlier attempt wrote the pointer and stopped before its
  // report (a timeout, a crash). Its outcome is `published`, not `unchanged`.
  const stamp = summary.record.upload;
  const mine = stamp?.key === key && stamp.etag === own.etag;
  return {
    outcome: summary.pointerChanged || mine ? 'published' : 'unchanged',
    version: summary.version,
    previous_version: summary.previousVersion,
    snapshot: outcome.digest,
    counts: summary.record.counts,
    changes: {
      objects_added: summary.objects.added,
      bytes_added: summary.bytes.added,
      objects_removed: summary.objects.removed,
      bytes_removed: summary.bytes.removed,
      build: summary.mode,
    },
  };
}

/**
 * Write a `failed` report saying `cause` for the upload `record` announces, unless the final word on those bytes
 * is there already: what an attempt that cannot finish leaves behind, such as one whose time is running out
 * (builder/lambda.ts), so that an upload killed for good still has a report with its cause. An attempt that does
 * finish afterwards replaces it with its outcome (a `failed` report is the one kind that is replaced). Resolves to
 * the report stored (written now, or found), or undefined when the record names no upload.
 * @example await reportFailure(record, settings, new Date(started), 'the function ran out of time');
 */
export async function reportFailure(
  record: S3EventRecord,
  given: UploadSettings,
  startedAt: Date,
  cause: string,
): Promise<{ report: UploadReport; repeated: boolean } | undefined> {
  const settings = { ...given, store: uploadWrites(given) };
  const route = routeRecord(record, settings);
  if ('kind' in route) return undefined;
  const report = newReport(record, route.key, route.reportKey, startedAt);
  const seen = await readReport(settings.store, route.reportKey);
  if (isFinalFor(seen, report.etag)) return { report: seen.report, repeated: true };
  report.error = cause;
  report.version = await liveVersion(settings);
  report.event_id = outcomeEventId(report);
  report.finished_at = new Date().toISOString();
  report.seconds = (Date.now() - startedAt.getTime()) / 1000;
  return writeReportOnce(settings.store, route.reportKey, report, seen);
}
