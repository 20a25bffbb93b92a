/**
 * The local S3's event notifications (src/s3rver-events.ts, src/servers.ts onEvent): what S3 sends a
 * subscribed function — a PUT, a completed multipart upload (as `aws s3 cp` sends a file over 8 MB, named as
 * S3 names it), a delete — across a restart, until unsubscribed; keys URL-encoded as S3 encodes them, and the
 * principal who signed the request (the same one every time), not a random one.
 */

import { request } from 'node:http';
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3EventNotification } from '../src/events.js';
import { type LocalS3, startS3 } from '../src/servers.js';
import { s3Client } from './helpers/aws.js';

/** The object key of a record, decoded as S3 encodes it (`+` a space, `%XX` the rest): what a consumer reads. */
const objectKeyOf = (record: S3EventNotification['Records'][number]) =>
  decodeURIComponent(record.s3.object.key.replace(/\+/g, ' '));

let s3: LocalS3;
let client: S3Client;
const received: S3EventNotification[] = [];
let unsubscribe: () => void;
beforeAll(async () => {
  s3 = await startS3('events-test');
  unsubscribe = s3.onEvent((notification) => received.push(notification));
  client = s3Client({ endpoint: s3.endpoint });
});
afterAll(async () => {
  client.destroy();
  await s3.dispose();
});

const last = () => received.at(-1)!.Records[0]!;

describe('event notifications of the local S3', () => {
  it('a PUT: ObjectCreated:Put with the key, size, bare ETag and a sequencer, before the PUT is answered', async () => {
    const put = await client.send(
      new PutObjectCommand({ Bucket: s3.bucket, Key: 'incoming/a.tar.gz', Body: 'hello' }),
    );

    expect(last()).toMatchObject({
      eventName: 'ObjectCreated:Put',
      eventTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      s3: {
        bucket: { name: s3.bucket },
        object: {
          key: 'incoming/a.tar.gz',
          size: 5,
          eTag: put.ETag!.replace(/"/g, ''),
          sequencer: expect.any(String),
        },
      },
    });
  });

  it('a completed multipart upload: one ObjectCreated:CompleteMultipartUpload, none for the parts', async () => {
    const before = received.length;
    const Key = 'incoming/big.tar.gz';
    const { UploadId } = await client.send(new CreateMultipartUploadCommand({ Bucket: s3.bucket, Key }));
    const parts = [];
    for (const [i, body] of [Buffer.alloc(5 * 2 ** 20, 1), Buffer.from('tail')].entries()) {
      const part = await client.send(
        new UploadPartCommand({ Bucket: s3.bucket, Key, UploadId, PartNumber: i + 1, Body: body }),
      );
      parts.push({ PartNumber: i + 1, ETag: part.ETag });
    }
    expect(received.length).toBe(before);

    await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: s3.bucket,
        Key,
        UploadId,
        MultipartUpload: { Parts: parts },
      }),
    );

    expect(received.length).toBe(before + 1);
    expect(last()).toMatchObject({
      eventName: 'ObjectCreated:CompleteMultipartUpload',
      s3: { object: { key: Key, size: 5 * 2 ** 20 + 4 } },
    });
  });

  it('a delete, across a restart, and nothing once unsubscribed', async () => {
    await s3.stop();
    await s3.start();
    await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: 'incoming/a.tar.gz' }));
    expect(last()).toMatchObject({
      eventName: 'ObjectRemoved:Delete',
      s3: { object: { key: 'incoming/a.tar.gz' } },
    });

    unsubscribe();
    const before = received.length;
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'incoming/b.tar.gz', Body: 'x' }));
    expect(received.length).toBe(before);
  });
});

describe('what S3 says of the object and the requester', () => {
  beforeAll(() => {
    unsubscribe = s3.onEvent((notification) => received.push(notification));
  });
  afterAll(() => unsubscribe());

  it('keys URL-encoded as S3 encodes them (a space as +), so + and % decode to the key written', async () => {
    for (const key of [
      'incoming/a+b.tar.gz',
      'incoming/a b.tar.gz',
      'incoming/100%.tar.gz',
      'incoming/ü ✓.tar.gz',
    ]) {
      await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'x' }));
      expect(objectKeyOf(last())).toBe(key);
    }
    expect(received.slice(-4).map((event) => event.Records[0]!.s3.object.key)).toEqual([
      'incoming/a%2Bb.tar.gz',
      'incoming/a+b.tar.gz',
      'incoming/100%25.tar.gz',
      'incoming/%C3%BC+%E2%9C%93.tar.gz',
    ]);
  });

  it('the principal who signed: the same for every request signed with the local credentials; Anonymous unsigned', async () => {
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'incoming/p1.tar.gz', Body: 'x' }));
    const first = last().userIdentity?.principalId;
    await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'incoming/p2.tar.gz', Body: 'x' }));

    expect(first).toBe('AWS:S3RVER');
    expect(last().userIdentity?.principalId).toBe(first);
    await new Promise<void>((resolve, reject) =>
      request(`${s3.endpoint}/${s3.bucket}/incoming/p3.tar.gz`, { method: 'PUT' }, (response) => {
        response.resume().on('end', resolve);
      })
        .on('error', reject)
        .end('x'),
    );
    expect(last().userIdentity?.principalId).toBe('Anonymous');
  });
});
