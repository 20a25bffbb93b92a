/**
 * The conditional-write shim (local/s3rver-conditional.ts) against S3's documented answers for PutObject
 * with `If-None-Match: *` and `If-Match: <etag>`, through the AWS SDK as the builder sends them, and under
 * concurrency (of writers with the same condition, exactly one wins).
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Client } from '../../aws/sdk.js';
import { type LocalServer, startS3 } from '../../local/servers.js';
import { S3ObjectStore } from '../../store/objects/s3.js';

let s3: LocalServer & { bucket: string };
let client: S3Client;
beforeAll(async () => {
  s3 = await startS3('conditional-test');
  client = s3Client({ endpoint: s3.endpoint });
});
afterAll(async () => {
  client?.destroy();
  await s3?.dispose();
});

/** A PutObject's answer: its ETag, or the error's name, HTTP status and (from the XML) Condition. */
async function put(key: string, body: string, condition: { IfNoneMatch?: string; IfMatch?: string } = {}) {
  try {
    const answer = await client.send(
      new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body, ...condition }),
    );
    return { status: 200, etag: answer.ETag };
  } catch (error) {
    const shape = error as { name?: string; $metadata?: { httpStatusCode?: number }; Condition?: string };
    return { status: shape.$metadata?.httpStatusCode, code: shape.name, condition: shape.Condition };
  }
}

async function read(key: string): Promise<string> {
  const answer = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
  return answer.Body!.transformToString();
}

describe('s3rver with S3 conditional writes', () => {
  it('If-None-Match: * creates a missing object, and is 412 PreconditionFailed when it exists', async () => {
    const created = await put('lock-a', 'one', { IfNoneMatch: '*' });
    expect(created).toMatchObject({ status: 200, etag: expect.stringMatching(/^"[0-9a-f]{32}"$/) });
    expect(await put('lock-a', 'two', { IfNoneMatch: '*' })).toEqual({
      status: 412,
      code: 'PreconditionFailed',
      condition: 'If-None-Match',
    });
    expect(await read('lock-a')).toBe('one');
  });

  it('If-Match replaces the object while its ETag matches, else 412; on a missing object 404 NoSuchKey', async () => {
    const first = await put('lock-b', 'one');
    const second = await put('lock-b', 'two', { IfMatch: first.etag! });
    expect(second).toMatchObject({ status: 200, etag: expect.any(String) });
    expect(second.etag).not.toBe(first.etag);
    expect(await put('lock-b', 'three', { IfMatch: first.etag! })).toEqual({
      status: 412,
      code: 'PreconditionFailed',
      condition: 'If-Match',
    });
    expect(await read('lock-b')).toBe('two');
    expect(await put('lock-missing', 'x', { IfMatch: first.etag! })).toMatchObject({
      status: 404,
      code: 'NoSuchKey',
    });
  });

  it('If-None-Match with an entity tag on a PUT is 501 NotImplemented (S3 takes only *)', async () => {
    expect(await put('lock-c', 'x', { IfNoneMatch: '"abc"' })).toMatchObject({
      status: 501,
      code: 'NotImplemented',
    });
  });

  it('unconditional PUTs still overwrite, and GET still honours If-None-Match', async () => {
    await put('plain', 'one');
    const written = await put('plain', 'two');
    expect(await read('plain')).toBe('two');
    const conditional = await client
      .send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'plain', IfNoneMatch: written.etag }))
      .catch((error: { $metadata?: { httpStatusCode?: number } }) => error.$metadata?.httpStatusCode);
    expect(conditional).toBe(304);
  });

  it('of 20 concurrent creators one wins; of 20 concurrent replacers of one version one wins', async () => {
    const creators = await Promise.all(
      Array.from({ length: 20 }, (_, i) => put('race', `creator ${i}`, { IfNoneMatch: '*' })),
    );
    expect(creators.filter((a) => a.status === 200)).toHaveLength(1);
    expect(creators.filter((a) => a.status === 412)).toHaveLength(19);
    const winner = creators.findIndex((a) => a.status === 200);
    expect(await read('race')).toBe(`creator ${winner}`);

    const etag = creators[winner]!.etag!;
    const replacers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => put('race', `replacer ${i}`, { IfMatch: etag })),
    );
    expect(replacers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(replacers.filter((a) => a.status === 412)).toHaveLength(19);
  });

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
