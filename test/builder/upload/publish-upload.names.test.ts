/**
 * Upload names are input (builder/upload/publish-upload.ts, report.ts reportKeyFor): checked before anything is
 * derived from them. On a local S3 laid out as `npm start` lays it out (the catalogue at the bucket's root, so
 * `reports/../current.json` is the live pointer), with the events that S3 sends (keys URL-encoded): a name with
 * `..` is refused with its report under `reports/` and the pointer untouched; names with `%` and `+` each get
 * their own report; no write ever leaves the builder's own keys (store/layout.ts confineWrites).
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Client } from '../../../aws/sdk.js';
import type { S3EventRecord } from '../../../builder/upload/event.js';
import { publishUpload, type UploadSettings } from '../../../builder/upload/publish-upload.js';
import type { UploadReport } from '../../../builder/upload/report.js';
import { type LocalS3, startS3 } from '../../../local/servers.js';
import { catalogueWrites, confineWrites, UnownedWriteError } from '../../../store/layout.js';
import { S3ObjectStore } from '../../../store/objects/s3.js';
import { removeTemporaryDirectories, smallSnapshot, snapshotArchive } from '../../helpers/builder.js';

let s3: LocalS3;
let client: S3Client;
let settings: UploadSettings;
const events: S3EventRecord[] = [];
beforeAll(async () => {
  s3 = await startS3('names-test');
  s3.onEvent((notification) => events.push(...notification.Records));
  client = s3Client({ endpoint: s3.endpoint });
  settings = {
    store: new S3ObjectStore({ client, bucket: s3.bucket }),
    prefix: '',
    incomingPrefix: 'incoming/',
    reportsPrefix: 'reports/',
  };
});
afterAll(async () => {
  client.destroy();
  await s3.dispose();
  removeTemporaryDirectories();
});

/** Upload `body` under `key` and the event s3rver sent for it (its key URL-encoded as S3's). */
async function upload(key: string, body: Buffer): Promise<S3EventRecord> {
  const before = events.length;
  await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body }));
  const record = events.slice(before).find((event) => event.eventName.startsWith('ObjectCreated:'));
  if (!record) throw new Error(`no event for ${key}`);
  return record;
}

async function handle(record: S3EventRecord): Promise<UploadReport> {
  const result = await publishUpload(record, settings);
  if (result.kind !== 'reported') throw new Error(`${result.kind}: ${result.message}`);
  return result.report;
}

async function stored(key: string): Promise<Buffer | undefined> {
  const read = await settings.store.get(key);
  return read.ok ? read.body : undefined;
}

describe('upload names', () => {
  it('incoming/../current.tar.gz is refused, its report under reports/, and the live pointer untouched', async () => {
    const published = await handle(await upload('incoming/0001.tar.gz', snapshotArchive(smallSnapshot(20))));
    expect(published.outcome).toBe('published');
    const pointer = await stored('current.json');

    const report = await handle(
      await upload('incoming/../current.tar.gz', snapshotArchive(smallSnapshot(21))),
    );

    expect(report).toMatchObject({
      upload: 'incoming/../current.tar.gz',
      outcome: 'invalid',
      version: published.version,
    });
    expect(report.report).toMatch(/^reports\/invalid-names\/current\.tar\.gz-[0-9a-f]{12}\.json$/);
    expect(report.problems[0]?.reason).toMatch(/^an upload's name is letters, digits, "\.", "_" and "-"/);
    expect(JSON.parse((await stored(report.report))!.toString())).toEqual(report);
    expect(await stored('current.json')).toEqual(pointer);
  });

  it('names with % and + each get a report of their own, never another upload’s', async () => {
    const keys = [
      'incoming/a+b.tar.gz',
      'incoming/a b.tar.gz',
      'incoming/100%.tar.gz',
      'incoming/%41.tar.gz',
    ];
    const reports: UploadReport[] = [];
    for (const key of keys) reports.push(await handle(await upload(key, snapshotArchive(smallSnapshot(20)))));

    expect(reports.map((report) => report.upload)).toEqual(keys);
    expect(reports.map((report) => report.outcome)).toEqual(['invalid', 'invalid', 'invalid', 'invalid']);
    expect(new Set(reports.map((report) => report.report)).size).toBe(keys.length);
    for (const report of reports) {
      expect(report.report).toMatch(/^reports\/invalid-names\/[A-Za-z0-9._-]*-[0-9a-f]{12}\.json$/);
      expect(JSON.parse((await stored(report.report))!.toString()).upload).toBe(report.upload);
    }
    // A valid name that a wrong decoding would have confused with `a+b`: its own report, its own key.
    const valid = await handle(await upload('incoming/a-b.tar.gz', snapshotArchive(smallSnapshot(22))));
    expect(valid).toMatchObject({
      upload: 'incoming/a-b.tar.gz',
      outcome: 'published',
      report: 'reports/a-b.json',
    });
  });

  it('an event key that does not decode is misdirected: logged and alarmed by the callers, nothing written', async () => {
    const record = await upload('incoming/0002.tar.gz', snapshotArchive(smallSnapshot(20)));
    const forged = {
      ...record,
      s3: { ...record.s3, object: { ...record.s3.object, key: 'incoming/%E0%A4%A.tar.gz' } },
    };

    expect(await publishUpload(forged, settings)).toEqual({
      kind: 'misdirected',
      message:
        'an event for incoming/%E0%A4%A.tar.gz, which does not decode as an S3 event key: not handled (no report can be named for it)',
    });
  });

  it('every write of the builder is checked against what it owns, in one place', async () => {
    const store = confineWrites(settings.store, catalogueWrites('catalogue/'));
    for (const key of [
      'catalogue/../current.json',
      'current.json',
      'catalogue/o/../x',
      'catalogue/o/',
      'reports/x',
    ]) {
      await expect(store.put(key, Buffer.from('x'))).rejects.toThrow(UnownedWriteError);
    }
    await expect(store.delete(['catalogue/o/ok', 'catalogue/current.json/..'])).rejects.toThrow(
      UnownedWriteError,
    );
    await store.put('catalogue/o/AAAAAAAAAAAAAAAAAAAAAA', Buffer.from('x'));
    await store.put('catalogue/current.json', Buffer.from('{}'));
    expect(await stored('catalogue/o/AAAAAAAAAAAAAAAAAAAAAA')).toEqual(Buffer.from('x'));
  });
});
