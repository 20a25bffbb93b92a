/**
 * `npm start` accepts snapshot uploads as the deployed stack does: an object created under the incoming
 * prefix of its local S3 (`aws s3 cp snapshot.tar.gz s3://catalogue/incoming/…` against the printed
 * endpoint) is published by the same code as the stack's builder function (builder/upload/publish-upload.ts),
 * one upload at a time as the function's reserved concurrency of 1 runs them, and tried again after a failed
 * publish as Lambda retries an asynchronous invocation. Uploads that came while it was not running (stopped,
 * or killed in the middle of a build) are handled when it starts, oldest first, so the newest wins. And it
 * says when a new version goes live, whoever made it live (an upload, the CLI, a rollback): it watches the
 * pointer.
 */

import { eventKeyOf } from '@catalogue/local-aws';
import { readHistory, readLiveVersion } from '../builder/publish/versions.js';
import { logProgress } from '../builder/report/progress.js';
import { printable } from '../builder/snapshot/problems.js';
import { objectKeyOf, type S3EventNotification, type S3EventRecord } from '../builder/upload/event.js';
import { newerUpload } from '../builder/upload/order.js';
import { publishUpload, type UploadResult, type UploadSettings } from '../builder/upload/publish-upload.js';
import { reportKeyFor, reportLine, type UploadReport } from '../builder/upload/report.js';
import { isFinalFor, readReport } from '../builder/upload/report-object.js';
import { errorMessage } from '../store/errors.js';
import type { WritableObjectStore } from '../store/objects/interface.js';
import { UPLOAD_PREFIXES } from '../store/upload-prefixes.js';

export interface LocalUploadOptions extends Omit<UploadSettings, 'lockWaitMs' | 'progress'> {
  bucket: string;
  /** Where lines go (npm start: stderr). */
  log: (line: string) => void;
  /** Delays before trying a failed upload again (default: 5 s, then 20 s). */
  retryDelaysMs?: readonly number[];
  /** How long an upload waits for another publish (a CLI's) to release the target (default 10 min). */
  lockWaitMs?: number;
  /** Called with each report (tests). */
  onReport?: (report: UploadReport) => void;
  /** Handle first the uploads whose report is missing or `failed` (default true: they came while npm start was down). */
  catchUp?: boolean;
  /**
   * Who uploaded a key's version (bare ETag), as its event named them (@catalogue/local-aws, s3rver-events.ts
   * recordedUploader): the principal of an upload taken up at start, whose event was lost with the last run.
   */
  uploaderOf?: (key: string, etag: string) => string | undefined;
}

export interface LocalUploads {
  /** Stop taking uploads; resolves once the one in progress (if any) is done. */
  close(): Promise<void>;
}

/** Problem lines printed for a refused upload; the report object holds the first 1,000. */
const PRINTED_PROBLEMS = 10;

/** Uploads are objects under the incoming prefix named `….tar.gz` (the deployed trigger's prefix and suffix). */
function isUploadKey(key: string | undefined, incomingPrefix: string): key is string {
  return key?.startsWith(incomingPrefix) === true && key.endsWith('.tar.gz');
}

/**
 * The uploads in the incoming prefix whose report is not their final word (none yet, or `failed`): uploads that
 * came while npm start was down or busy when it stopped. As the events S3 would have sent, oldest first.
 */
async function pendingUploads(
  settings: Omit<UploadSettings, 'lockWaitMs' | 'progress'>,
  found: { bucket: string; uploaderOf: LocalUploadOptions['uploaderOf'] },
): Promise<S3EventRecord[]> {
  const { bucket, uploaderOf } = found;
  const listed: { key: string; lastModified: Date; etag: string; size: number }[] = [];
  for await (const object of settings.store.list(settings.incomingPrefix)) {
    if (!isUploadKey(object.key, settings.incomingPrefix) || !object.lastModified) continue;
    listed.push({
      key: object.key,
      lastModified: object.lastModified,
      etag: (object.etag ?? '').replace(/"/g, ''),
      size: object.size,
    });
  }
  const pending: S3EventRecord[] = [];
  for (const upload of listed.sort((a, b) => (newerUpload(a, b) ? 1 : newerUpload(b, a) ? -1 : 0))) {
    const reportKey = reportKeyFor(settings.incomingPrefix, settings.reportsPrefix, upload.key);
    const seen = await readReport(settings.store, reportKey);
    if (isFinalFor(seen, upload.etag)) continue;
    // Who uploaded it, as its event said: kept at upload, or in the report of an attempt that failed.
    const failedBy = seen?.report?.etag === upload.etag ? seen.report.uploaded_by : null;
    const principalId = uploaderOf?.(upload.key, upload.etag) ?? failedBy ?? undefined;
    pending.push({
      eventName: 'ObjectCreated:Put',
      eventTime: upload.lastModified.toISOString(),
      ...(principalId !== undefined && { userIdentity: { principalId } }),
      s3: {
        bucket: { name: bucket },
        object: { key: eventKeyOf(upload.key), size: upload.size, eTag: upload.etag },
      },
    });
  }
  return pending;
}

/** Log what one upload came to: its outcome and first problems, or why nothing was done. */
function logResult(result: UploadResult, log: (line: string) => void): UploadReport | undefined {
  if (result.kind !== 'reported') {
    log(`upload ${result.message}`);
    return undefined;
  }
  const { report, repeated } = result;
  if (repeated) {
    log(`upload ${reportLine(report)} (reported before: nothing done again)`);
    return undefined;
  }
  log(`upload ${reportLine(report)}`);
  for (const problem of report.problems.slice(0, PRINTED_PROBLEMS)) log(`  ${problem.message}`);
  if (report.problem_count > PRINTED_PROBLEMS)
    log(
      `  … and ${(report.problem_count - PRINTED_PROBLEMS).toLocaleString('en-US')} more (the first 1,000 in ${report.report})`,
    );
  return report;
}

/**
 * Publish every upload `onEvent` announces, one at a time; first (unless `catchUp` is false) the uploads that
 * came while npm start was not running.
 * @example const uploads = acceptUploads(s3.onEvent, { store, bucket, prefix: '', incomingPrefix: 'incoming/', reportsPrefix: 'reports/', log: console.error });
 */
export function acceptUploads(
  onEvent: (listener: (notification: S3EventNotification) => void) => () => void,
  options: LocalUploadOptions,
): LocalUploads {
  return new UploadQueue(onEvent, options);
}

/** The uploads to publish, one after another: those found at start, then those announced, each retried. */
class UploadQueue implements LocalUploads {
  readonly #options: LocalUploadOptions;
  readonly #settings: Omit<UploadSettings, 'lockWaitMs' | 'progress'>;
  readonly #unsubscribe: () => void;
  #closed = false;
  #queue: Promise<void> = Promise.resolve();

  constructor(
    onEvent: (listener: (notification: S3EventNotification) => void) => () => void,
    options: LocalUploadOptions,
  ) {
    const { bucket, log, retryDelaysMs, onReport, catchUp = true, uploaderOf: _, ...settings } = options;
    this.#options = options;
    this.#settings = settings;
    if (catchUp) this.#queue = this.#queue.then(() => this.#catchUp());
    this.#unsubscribe = onEvent((notification) => {
      for (const record of notification.Records) {
        const relevant =
          record.s3.bucket.name === bucket &&
          record.eventName.startsWith('ObjectCreated:') &&
          isUploadKey(objectKeyOf(record), settings.incomingPrefix);
        if (relevant) this.#queue = this.#queue.then(() => this.#handle(record, 0));
      }
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#unsubscribe();
    await this.#queue;
  }

  /** The uploads that came while npm start was not running, oldest first. */
  async #catchUp(): Promise<void> {
    const { log } = this.#options;
    const { bucket, uploaderOf } = this.#options;
    const pending = await pendingUploads(this.#settings, { bucket, uploaderOf }).catch((error: unknown) => {
      log(`uploads: the incoming prefix could not be read at start: ${errorMessage(error)}`);
      return [];
    });
    if (pending.length > 0) {
      log(
        `uploads: ${pending.length} came while npm start was not running: handling them, oldest first (the newest wins)`,
      );
    }
    for (const record of pending) await this.#handle(record, 0);
  }

  /**
   * Publish one upload and log what it came to; a failed one is tried again after the next delay, as is one
   * whose report could not be written (its S3 failing), as Lambda retries an invocation that failed.
   */
  async #handle(record: S3EventRecord, attempt: number): Promise<void> {
    if (this.#closed) return;
    const { log, retryDelaysMs = [5_000, 20_000] } = this.#options;
    const result = await this.#publish(record);
    if (result !== undefined) {
      const report = logResult(result, log);
      if (report) this.#options.onReport?.(report);
      if (report?.outcome !== 'failed') return;
    }
    const key = printable(objectKeyOf(record) ?? String(record.s3.object.key));
    const delay = retryDelaysMs[attempt];
    if (this.#closed) return;
    if (delay === undefined) {
      const retry = `npm run catalogue -- retry ${key.replace(/^.*\//, '').replace(/\.tar\.gz$/, '')}`;
      log(
        result === undefined
          ? `upload ${key}: no attempt could write its report; npm start takes it up again when it next starts, or run ${retry}`
          : `upload ${key}: no attempt left; npm run catalogue -- failed lists it, ${retry} runs it again`,
      );
      return;
    }
    log(`upload ${key}: trying again in ${Math.round(delay / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, delay).unref());
    await this.#handle(record, attempt + 1);
  }

  /** publishUpload with progress lines in the log; undefined (and said) when its report cannot be written. */
  async #publish(record: S3EventRecord): Promise<UploadResult | undefined> {
    const { log } = this.#options;
    const progress = logProgress({ write: (text: string) => log(text.trimEnd()) });
    try {
      return await publishUpload(record, {
        ...this.#settings,
        progress,
        lockWaitMs: this.#options.lockWaitMs ?? 600_000,
      });
    } catch (error) {
      const key = printable(objectKeyOf(record) ?? String(record.s3.object.key));
      log(`upload ${key}: its report could not be written: ${errorMessage(error)}`);
      return undefined;
    } finally {
      progress.close();
    }
  }
}

/**
 * Say when the pointer names a new version (checked every `intervalMs` with a conditional read), with who
 * made it live: `Catalogue: version X is live (published by alice@laptop, cli, from snapshot 3f9a…)`. The
 * line waits out `servedWithinMs` (the proxy's pointer TTL) first: once it is printed, every answer is from X.
 * Returns the function that stops watching.
 */
export function watchLiveVersion(
  store: WritableObjectStore,
  prefix: string,
  options: {
    log: (line: string) => void;
    known: string | null;
    intervalMs?: number;
    servedWithinMs?: number;
  },
): () => void {
  let known = options.known;
  let busy = false;
  const check = async () => {
    if (busy) return;
    busy = true;
    try {
      const live = await readLiveVersion(store, prefix);
      if (live === null || live === known) return;
      known = live;
      const entry = (await readHistory(store, prefix)).versions.find((e) => e.version === live);
      const how = entry?.restored
        ? `made live again by ${entry.restored.by} (rollback)`
        : entry?.published
          ? `published by ${entry.published.by}, ${entry.published.via}${entry.published.snapshot ? `, from snapshot ${entry.published.snapshot.slice(0, 12)}` : ''}`
          : 'its publisher is not recorded';
      // The proxy may answer from the pointer it read before, for at most its TTL.
      await new Promise((served) => setTimeout(served, options.servedWithinMs ?? 0));
      options.log(`Catalogue: version ${live} is live (${how})`);
    } catch {
      // The local S3 stopping (Ctrl-C) or a passing fault: the next tick tries again.
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void check(), options.intervalMs ?? 1000);
  timer.unref();
  return () => clearInterval(timer);
}

/** Where npm start's uploads are published: its S3 (as a store, and the bucket's name) and the catalogue's prefix. */
interface UploadTarget {
  store: WritableObjectStore;
  bucket: string;
  prefix: string;
}

/**
 * npm start's upload loop: publish uploads into its own S3 (when it runs one: `onEvent`), and say when a new
 * version goes live. Returns the lines for the ready screen.
 */
export function startUploadLoop(
  target: UploadTarget,
  options: {
    onEvent: ((listener: (notification: S3EventNotification) => void) => () => void) | undefined;
    known: string | null;
    /** The proxy's pointer TTL: a new version is said to be live once every answer is from it. */
    servedWithinMs: number;
    log: (line: string) => void;
    /** Who uploaded a key's version, as its event said (its own S3's record: @catalogue/local-aws, s3rver-events.ts). */
    uploaderOf?: LocalUploadOptions['uploaderOf'];
  },
): string[] {
  const { store, bucket, prefix } = target;
  const { log } = options;
  watchLiveVersion(store, prefix, { log, known: options.known, servedWithinMs: options.servedWithinMs });
  if (!options.onEvent) {
    return ['Uploads: not taken (S3_ENDPOINT names another S3, which sends npm start no events)'];
  }
  acceptUploads(options.onEvent, {
    store,
    bucket,
    prefix,
    ...UPLOAD_PREFIXES,
    log,
    warn: (message) => log(`warning: ${message}`),
    ...(options.uploaderOf && { uploaderOf: options.uploaderOf }),
  });
  const incoming = `s3://${bucket}/${UPLOAD_PREFIXES.incomingPrefix}`;
  // How to upload: the ready screen's lines after this one (local/hints.ts uploadHints).
  return [
    `Uploads: a snapshot uploaded to ${incoming}<name>.tar.gz is published; its report in s3://${bucket}/${UPLOAD_PREFIXES.reportsPrefix}<name>.json`,
  ];
}
