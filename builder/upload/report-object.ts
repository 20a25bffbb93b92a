/**
 * The report object of an upload, written once: a conditional write (`If-None-Match: *`, or `If-Match` on the
 * report it replaces), so a Lambda retry or a second delivery of the same S3 event never rewrites what an
 * upload came to. What may be replaced: a `failed` report (the retry's outcome follows it), a report of an
 * earlier upload under the same name (another ETag), and bytes that are no report at all.
 */
import type { WritableObjectStore } from '../../store/objects/interface.js';
import type { UploadReport } from './report.js';

/** A report object as read: its ETag, and the report when it is one. */
export interface StoredReport {
  etag: string;
  report?: UploadReport;
}

/**
 * The report at `key`, or undefined when there is none.
 * @example const stored = await readReport(store, 'reports/a.json'); stored?.report?.outcome // → 'published'
 */
export async function readReport(store: WritableObjectStore, key: string): Promise<StoredReport | undefined> {
  const read = await store.get(key);
  if (!read.ok) return undefined;
  const report = parseReport(read.body);
  return report ? { etag: read.etag, report } : { etag: read.etag };
}

/**
 * The report in a report object's bytes, or undefined when they are not one (not JSON, no outcome).
 * @example parseReport(Buffer.from('{"outcome":"published",…}'))?.outcome // → 'published'
 */
export function parseReport(body: Buffer): UploadReport | undefined {
  try {
    const report = JSON.parse(body.toString('utf8')) as UploadReport;
    return typeof report === 'object' && report !== null && typeof report.outcome === 'string'
      ? report
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether `stored` is the final word on the upload with ETag `etag`: its outcome, which nothing rewrites.
 * @example isFinalFor({ etag: 'x', report }, report.etag) // → true unless report.outcome is 'failed'
 */
export function isFinalFor(
  stored: StoredReport | undefined,
  etag: string | null,
): stored is Required<StoredReport> {
  return (
    stored?.report !== undefined &&
    etag !== null &&
    stored.report.etag === etag &&
    stored.report.outcome !== 'failed'
  );
}

/** Tries of the conditional write when the report changes under it (another attempt of the same upload). */
const WRITE_TRIES = 3;

/**
 * Write `report` at `key` unless the final word on the same upload is there already: resolves to the report
 * now stored — this one (`repeated: false`), or the one found (`repeated: true`, to be sent again as it is).
 * `seen` is what was read before (the write is conditional on it).
 * @example const { report: stored, repeated } = await writeReportOnce(store, 'reports/a.json', report, await readReport(store, 'reports/a.json'));
 */
export async function writeReportOnce(
  store: WritableObjectStore,
  key: string,
  report: UploadReport,
  seen: StoredReport | undefined,
): Promise<{ report: UploadReport; repeated: boolean }> {
  const body = Buffer.from(`${JSON.stringify(report, null, 1)}\n`);
  let current = seen;
  for (let attempt = 0; attempt < WRITE_TRIES; attempt++) {
    if (isFinalFor(current, report.etag)) return { report: current.report, repeated: true };
    const written = await store.putIf(key, body, current ? { ifMatch: current.etag } : { ifNoneMatch: '*' }, {
      contentType: 'application/json',
    });
    if (written.ok) return { report, repeated: false };
    current = await readReport(store, key);
  }
  throw new Error(`the report ${key} changed under every one of ${WRITE_TRIES} conditional writes`);
}
