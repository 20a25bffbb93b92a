/**
 * S3ObjectStore's conditional writes (store/objects/s3.ts `putIf`) against the local S3, which answers them as S3
 * does (@catalogue/local-aws, s3rver-conditional.ts): each answer mapped to its outcome.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { type LocalS3, startS3 } from '@catalogue/local-aws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Client } from '../../../aws/sdk.js';
import { S3ObjectStore } from '../../../store/objects/s3.js';

let s3: LocalS3;
let client: S3Client;
beforeAll(async () => {
  s3 = await startS3('put-if-test');
  client = s3Client({ endpoint: s3.endpoint });
});
afterAll(async () => {
  client?.destroy();
  await s3?.dispose();
});

describe('conditional writes', () => {
  it('S3ObjectStore.putIf maps the answers to its outcome', async () => {
    const store = new S3ObjectStore({ client, bucket: s3.bucket });
    const created = await store.putIf('store-lock', Buffer.from('a'), { ifNoneMatch: '*' });
    expect(created).toMatchObject({ ok: true });
    expect(await store.putIf('store-lock', Buffer.from('b'), { ifNoneMatch: '*' })).toEqual({
      ok: false,
      reason: 'precondition-failed',
    });
    const etag = created.ok ? created.etag : '';
    expect(await store.putIf('store-lock', Buffer.from('c'), { ifMatch: '"0"' })).toEqual({
      ok: false,
      reason: 'precondition-failed',
    });
    expect(await store.putIf('store-gone', Buffer.from('c'), { ifMatch: etag })).toEqual({
      ok: false,
      reason: 'precondition-failed',
    });
    expect(await store.putIf('store-lock', Buffer.from('d'), { ifMatch: etag })).toMatchObject({ ok: true });
  });
});
