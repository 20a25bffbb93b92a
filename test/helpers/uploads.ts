/**
 * A bed for upload tests (builder/upload/publish-upload.ts): an s3rver with its event notifications, the
 * settings the builder runs with over its bucket (the catalogue under `prefix`), and uploads as a publisher
 * makes them — the object put, and the event S3 sent for it.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { type LocalS3, startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll } from 'vitest';
import { s3Client } from '../../aws/sdk.js';
import { objectKeyOf, type S3EventRecord } from '../../builder/upload/event.js';
import { publishUpload, type UploadSettings } from '../../builder/upload/publish-upload.js';
import type { UploadReport } from '../../builder/upload/report.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { removeTemporaryDirectories } from './builder.js';

export interface UploadBed {
  s3: LocalS3;
  client: S3Client;
  settings: UploadSettings;
  /** Put `body` at `key` (e.g. `incoming/a.tar.gz`); the event S3 sent for it. */
  upload(key: string, body: Buffer): Promise<S3EventRecord>;
  /** Handle `record` with `settings` (or `given`); its report, or a thrown error when it came to none. */
  handle(record: S3EventRecord, given?: UploadSettings): Promise<UploadReport>;
}

/** Start the bed before the suite's tests, and remove it after them. */
export function uploadBed(bucket: string, prefix: string): UploadBed {
  const events: S3EventRecord[] = [];
  const bed = {} as UploadBed;
  beforeAll(async () => {
    bed.s3 = await startS3(bucket);
    bed.s3.onEvent((notification) => events.push(...notification.Records));
    bed.client = s3Client({ endpoint: bed.s3.endpoint });
    bed.settings = {
      store: new S3ObjectStore({ client: bed.client, bucket }),
      prefix,
      incomingPrefix: 'incoming/',
      reportsPrefix: 'reports/',
    };
  });
  afterAll(async () => {
    bed.client?.destroy();
    await bed.s3?.dispose();
    removeTemporaryDirectories();
  });
  bed.upload = async (key, body) => {
    const before = events.length;
    await bed.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    const record = events.slice(before).find((event) => objectKeyOf(event) === key);
    if (!record) throw new Error(`no event for ${key}`);
    return record;
  };
  bed.handle = async (record, given = bed.settings) => {
    const result = await publishUpload(record, given);
    if (result.kind !== 'reported') throw new Error(`not reported: ${result.kind}: ${result.message}`);
    return result.report;
  };
  return bed;
}
