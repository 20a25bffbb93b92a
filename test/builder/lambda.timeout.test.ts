/**
 * An attempt of the upload builder (builder/lambda.ts) that runs into the function's timeout: Lambda stops it
 * there and the bucket would keep no trace of it, so the handler writes a `failed` report with that cause shortly
 * before the timeout — here while the upload waits for a publish lock another publish holds (no time is kept for
 * the build: BUILD_BUDGET_SECONDS 0, so it may wait until the deadline). If the attempt still finishes in the
 * time left, its outcome replaces that report. Against s3rver, with no event bus.
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type LocalS3, startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { s3Client } from '../../aws/sdk.js';
import { acquirePublishLock } from '../../builder/publish/lock.js';
import type { S3EventRecord } from '../../builder/upload/event.js';
import type { UploadReport } from '../../builder/upload/report.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { removeTemporaryDirectories, smallSnapshot, snapshotArchive } from '../helpers/builder.js';

let s3: LocalS3;
let client: S3Client;
const records: S3EventRecord[] = [];
let handler: typeof import('../../builder/lambda.js').handler;

beforeAll(async () => {
  s3 = await startS3('builder-timeout');
  s3.onEvent((notification) => records.push(...notification.Records));
  client = s3Client({ endpoint: s3.endpoint });
  vi.stubEnv('CATALOGUE_BUCKET', s3.bucket);
  vi.stubEnv('CATALOGUE_PREFIX', 'catalogue/');
  vi.stubEnv('S3_ENDPOINT', s3.endpoint);
  vi.stubEnv('EVENT_BUS_NAME', 'none');
  vi.stubEnv('BUILD_BUDGET_SECONDS', '0');
  // The handler reads its settings when its module loads: loaded afresh, under the settings above.
  vi.resetModules();
  ({ handler } = await import('../../builder/lambda.js'));
});
afterAll(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  client?.destroy();
  await s3?.dispose();
  removeTemporaryDirectories();
});

async function report(key: string): Promise<UploadReport | undefined> {
  try {
    const read = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
    return JSON.parse(await read.Body!.transformToString());
  } catch {
    return undefined;
  }
}

describe('an attempt that runs into the function’s timeout', () => {
  it('leaves a failed report saying so before the deadline; finishing in the time left, its outcome replaces it', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const lock = await acquirePublishLock(
      new S3ObjectStore({ client, bucket: s3.bucket }),
      'catalogue/',
      's3://x/',
    );
    await client.send(
      new PutObjectCommand({
        Bucket: s3.bucket,
        Key: 'incoming/slow.tar.gz',
        Body: snapshotArchive(smallSnapshot(20)),
      }),
    );
    const record = records.findLast((candidate) => candidate.s3.object.key === 'incoming/slow.tar.gz')!;
    // 15.3 s left: the report is due 0.3 s in; the lock wait may use all of it.
    const deadline = performance.now() + 15_300;
    const context = { getRemainingTimeInMillis: () => Math.max(0, deadline - performance.now()) };

    const handling = handler({ Records: [record] }, context);
    let early: UploadReport | undefined;
    for (let i = 0; i < 200 && early === undefined; i++) {
      early = await report('reports/slow.json');
      if (early === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(early).toMatchObject({
      upload: 'incoming/slow.tar.gz',
      outcome: 'failed',
      error: expect.stringMatching(
        /^the attempt had not finished 15 s before the function's timeout \(0 s in\): Lambda stops it there/,
      ),
    });
    // Written while the attempt still waited: well before the deadline.
    expect(deadline - performance.now()).toBeGreaterThan(5_000);

    await lock.release();
    await handling;
    expect(await report('reports/slow.json')).toMatchObject({ outcome: 'published' });
  }, 60_000);
});
