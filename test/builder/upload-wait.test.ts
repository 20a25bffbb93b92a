/**
 * Waiting for an upload's report (builder/upload-wait.ts) over a store the test writes reports into as the
 * builder would: the report once it is there; a failed attempt followed by the retry's word; three failed
 * attempts as the last word; a deadline; a stop (Ctrl-C); reports of other uploads and reports there before, ignored; an S3 that
 * answers 403 for a report not written yet (a caller with the upload policy may not list the bucket), waited on.
 */
import { describe, expect, it } from 'vitest';
import type { UploadReport } from '../../builder/upload/report.js';
import type { UploadDestination } from '../../builder/upload-destination.js';
import { awaitReport, BUILDER_ATTEMPTS, type ReportWait, reportEtag } from '../../builder/upload-wait.js';
import { DependencyError } from '../../store/errors.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';

const KEY = 'incoming/20260601T120000.000Z-abc.tar.gz';
const REPORT = 'reports/20260601T120000.000Z-abc.json';
const ETAG = '"0123456789abcdef"';

function report(fields: Partial<UploadReport>): Buffer {
  return Buffer.from(
    JSON.stringify({ upload: KEY, etag: ETAG.slice(1, -1), outcome: 'published', ...fields }),
  );
}

function waitOn(store: MemoryObjectStore, fields: Partial<ReportWait> = {}) {
  const notes: string[] = [];
  const destination = {
    store,
    bucket: 'b',
    description: 's3://b',
    endpoint: undefined,
    local: true,
    close() {},
  };
  const wait: ReportWait = {
    destination: destination as UploadDestination,
    key: KEY,
    etag: ETAG,
    reportKey: REPORT,
    before: undefined,
    deadline: performance.now() + 10_000,
    note: (line) => notes.push(line),
    pausesMs: { first: 10, longest: 40 },
    ...fields,
  };
  return { wait, notes };
}

/**
 * Write `bodies` to the report key one after another, each once the waiting side has read the one before (as
 * the builder's retries come seconds or minutes apart, each is read).
 */
async function writeLater(store: MemoryObjectStore, bodies: Buffer[]): Promise<void> {
  let reads = 0;
  const get = store.get.bind(store);
  store.get = (key, options) => {
    reads++;
    return get(key, options);
  };
  for (const body of bodies) {
    const before = reads;
    while (reads === before) await new Promise((resolve) => setTimeout(resolve, 20));
    await store.put(REPORT, body);
    const written = reads;
    while (reads === written) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('waiting for the report', () => {
  it('is the report once the builder writes it', async () => {
    const store = new MemoryObjectStore();
    const { wait } = waitOn(store);
    const [outcome] = await Promise.all([awaitReport(wait), writeLater(store, [report({ version: 'V1' })])]);
    expect(outcome).toMatchObject({ done: true, report: { outcome: 'published', version: 'V1' } });
  });

  it('a failed attempt is not the last word: the retry’s report is', async () => {
    const store = new MemoryObjectStore();
    const { wait, notes } = waitOn(store);
    const [outcome] = await Promise.all([
      awaitReport(wait),
      writeLater(store, [report({ outcome: 'failed', error: 'SlowDown' }), report({ outcome: 'published' })]),
    ]);
    expect(outcome).toMatchObject({ done: true, report: { outcome: 'published' } });
    expect(notes).toEqual(["the builder's attempt 1 failed: SlowDown; it tries the upload again"]);
  });

  it(`${BUILDER_ATTEMPTS} failed attempts are the last word`, async () => {
    const store = new MemoryObjectStore();
    const { wait } = waitOn(store);
    const failures = [1, 2, 3].map((n) => report({ outcome: 'failed', error: `fault ${n}` }));
    const [outcome] = await Promise.all([awaitReport(wait), writeLater(store, failures)]);
    expect(outcome).toMatchObject({ done: true, report: { outcome: 'failed', error: 'fault 3' } });
  });

  it('runs out at the deadline, with the last failed attempt if there was one', async () => {
    const store = new MemoryObjectStore();
    expect(await awaitReport(waitOn(store, { deadline: performance.now() + 300 }).wait)).toEqual({
      done: false,
      failed: undefined,
    });
    await store.put(REPORT, report({ outcome: 'failed', error: 'timeout' }));
    const outcome = await awaitReport(waitOn(store, { deadline: performance.now() + 300 }).wait);
    expect(outcome).toMatchObject({ done: false, failed: { error: 'timeout' } });
  });

  it('stops at once when told (Ctrl-C), in the middle of a pause, as if the time had run out', async () => {
    const store = new MemoryObjectStore();
    const controller = new AbortController();
    const { wait } = waitOn(store, {
      signal: controller.signal,
      pausesMs: { first: 60_000, longest: 60_000 },
    });
    const waiting = awaitReport(wait);
    setTimeout(() => controller.abort('SIGINT'), 50);
    const started = performance.now();
    expect(await waiting).toEqual({ done: false, failed: undefined });
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('ignores a report of another upload, of other bytes under the name, or there before the upload', async () => {
    const store = new MemoryObjectStore();
    await store.put(REPORT, report({ outcome: 'invalid' }));
    const before = await reportEtag({ store } as unknown as UploadDestination, REPORT);
    const briefly = () => waitOn(store, { before, deadline: performance.now() + 300 }).wait;
    expect(await awaitReport(briefly())).toEqual({ done: false, failed: undefined });
    for (const other of [
      report({ upload: 'incoming/other.tar.gz' }),
      report({ etag: 'other-bytes' }),
      Buffer.from('{'),
    ]) {
      await store.put(REPORT, other);
      expect(await awaitReport(briefly())).toEqual({ done: false, failed: undefined });
    }
    await store.put(REPORT, report({ outcome: 'unchanged' }));
    expect(await awaitReport(briefly())).toMatchObject({ done: true, report: { outcome: 'unchanged' } });
  });

  it('a 403 for a report not written yet is waited on; another fault is thrown', async () => {
    const store = new MemoryObjectStore();
    const denied = new DependencyError('objects', `s3 get ${REPORT} failed`, {
      cause: { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } },
    });
    let reads = 0;
    const get = store.get.bind(store);
    store.get = async (key, options) => {
      if (++reads < 3) throw denied;
      return get(key, options);
    };
    await store.put(REPORT, report({ outcome: 'published' }));
    expect(await awaitReport(waitOn(store).wait)).toMatchObject({ done: true });

    store.get = async () => {
      throw new DependencyError('objects', 'down', { cause: { name: 'InternalError' } });
    };
    await expect(awaitReport(waitOn(store).wait)).rejects.toThrow('down');
  });
});
