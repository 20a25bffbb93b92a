/**
 * The write shim (src/s3rver-conditional.ts) against S3's documented answers for PutObject with
 * `If-None-Match: *` and `If-Match: <etag>`, through the AWS SDK as the builder sends them, and under
 * concurrency (of writers with the same condition, exactly one wins); and bodies stored only whole: a writer
 * whose socket dies mid-PUT stores nothing and holds nothing, a body cut short or not matching its checksum
 * header is refused.
 */
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { connect } from 'node:net';
import { crc32 } from 'node:zlib';
import { Crc32c, Crc64Nvme } from '@aws-sdk/checksums/crc';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalServer, startS3 } from '../src/servers.js';
import { s3Client } from './helpers/aws.js';

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
});

/** Send a PUT's headers and `sent` bytes of a body of `declared` bytes on a raw socket, then kill it or half-close it. */
async function brokenPut(key: string, declared: number, sent: number, end: 'destroy' | 'half-close') {
  const { port } = new URL(s3.endpoint);
  await new Promise<void>((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `PUT /${s3.bucket}/${key} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: ${declared}\r\n\r\n${'x'.repeat(sent)}`,
      );
      // Let the server start storing what it got, then end the writer.
      setTimeout(() => {
        if (end === 'destroy') socket.destroy();
        else socket.end();
      }, 200);
    });
    socket.on('close', () => resolve());
    socket.on('error', () => resolve());
    socket.resume();
  });
}

/** A PUT over plain HTTP (unsigned: s3rver takes anonymous writes) with the given headers: its status and error code. */
function rawPut(key: string, body: Buffer, headers: Record<string, string>) {
  return new Promise<{ status: number; code?: string }>((resolve, reject) => {
    const sent = request(`${s3.endpoint}/${s3.bucket}/${key}`, { method: 'PUT', headers }, (response) => {
      let text = '';
      response.on('data', (chunk) => {
        text += chunk;
      });
      response.on('end', () => {
        const code = /<Code>([^<]+)<\/Code>/.exec(text)?.[1];
        resolve({ status: response.statusCode ?? 0, ...(code && { code }) });
      });
    });
    sent.on('error', reject);
    sent.end(body);
  });
}

async function sdkDigest(checksum: Crc32c | Crc64Nvme, body: Buffer): Promise<string> {
  checksum.update(body);
  return Buffer.from(await checksum.digest()).toString('base64');
}

const missing = (key: string) =>
  client
    .send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }))
    .then(() => 'stored')
    .catch((error: { name?: string }) => error.name);

/** `task`, or 'hung' when it has not finished after `ms` (a wedged key never finishes). */
const within = <T>(task: Promise<T>, ms: number) =>
  Promise.race([task, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), ms))]);

describe('bodies stored only whole', () => {
  it('a writer that dies mid-PUT stores nothing and holds nothing: the next write of the key goes through', async () => {
    await put('publish.lock', 'held before');
    await brokenPut('publish.lock', 1000, 100, 'destroy');
    await brokenPut('new-key', 1000, 100, 'destroy');

    // Generous bound: a wedged key never answers at all.
    expect(await within(put('publish.lock', 'next', {}), 20_000)).toMatchObject({ status: 200 });
    expect(await read('publish.lock')).toBe('next');
    expect(await missing('new-key')).toBe('NoSuchKey');
    expect(await within(put('new-key', 'created', { IfNoneMatch: '*' }), 20_000)).toMatchObject({
      status: 200,
    });
  }, 60_000);

  it('a body cut short (the writer half-closes) is not stored, neither as the key nor over it', async () => {
    await put('cut', 'whole before');
    await brokenPut('cut', 1000, 100, 'half-close');
    await brokenPut('cut-new', 1000, 100, 'half-close');

    expect(await read('cut')).toBe('whole before');
    expect(await missing('cut-new')).toBe('NoSuchKey');
  });

  it('a body that does not match its Content-MD5 or x-amz-checksum-* header is refused (400 BadDigest); one that does is stored', async () => {
    const body = Buffer.from('the catalogue pointer');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    const good = {
      'content-md5': createHash('md5').update(body).digest('base64'),
      'x-amz-checksum-sha256': createHash('sha256').update(body).digest('base64'),
      'x-amz-checksum-crc32': crc.toString('base64'),
      // The SDK's own implementations, as it computes them when it sends these headers.
      'x-amz-checksum-crc32c': await sdkDigest(new Crc32c(), body),
      'x-amz-checksum-crc64nvme': await sdkDigest(new Crc64Nvme(), body),
    };
    for (const [header, value] of Object.entries(good)) {
      expect(await rawPut(`sum-${header}`, body, { [header]: value })).toEqual({ status: 200 });
      expect(await read(`sum-${header}`)).toBe('the catalogue pointer');
      const other = Buffer.from('the catalogue pointeR');
      expect(await rawPut(`bad-${header}`, other, { [header]: value })).toEqual({
        status: 400,
        code: 'BadDigest',
      });
      expect(await missing(`bad-${header}`)).toBe('NoSuchKey');
    }
    expect(await rawPut('sum-invalid', body, { 'content-md5': 'not base64!' })).toEqual({
      status: 400,
      code: 'InvalidDigest',
    });
  });
});
