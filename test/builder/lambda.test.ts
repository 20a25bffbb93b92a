/**
 * The upload builder's Lambda handler (builder/lambda.ts) as the function runs it, against s3rver and a
 * loopback EventBridge: each outcome reported as an event on the bus (its problems cut for the event, all of
 * them in the report object), and a failed publish thrown so that Lambda retries it and the alarm counts it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { s3Client } from '../../aws/sdk.js';
import { takePublishLock } from '../../builder/publish/publish.js';
import type { S3EventRecord } from '../../builder/upload/event.js';
import { EVENT_PROBLEMS, EVENT_SOURCE } from '../../builder/upload/report.js';
import { type LocalS3, startS3 } from '../../local/servers.js';
import { S3ObjectStore } from '../../store/objects/s3.js';
import { removeTemporaryDirectories, smallSnapshot, snapshotArchive } from '../helpers/builder.js';

let s3: LocalS3;
let client: S3Client;
let bus: Server;
const entries: { Source: string; DetailType: string; Detail: string; EventBusName: string }[] = [];
const records: S3EventRecord[] = [];
let handler: typeof import('../../builder/lambda.js').handler;
const context = { getRemainingTimeInMillis: () => 900_000 };

beforeAll(async () => {
  s3 = await startS3('builder-fn');
  s3.onEvent((notification) => records.push(...notification.Records));
  client = s3Client({ endpoint: s3.endpoint });
  bus = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      expect(request.headers['x-amz-target']).toBe('AWSEvents.PutEvents');
      expect(request.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=\S+\/events\/aws4_request/);
      entries.push(...JSON.parse(body).Entries);
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
      response.end('{"FailedEntryCount":0,"Entries":[{"EventId":"1"}]}');
    });
  });
  await new Promise<void>((resolve) => bus.listen(0, '127.0.0.1', resolve));
  vi.stubEnv('CATALOGUE_BUCKET', s3.bucket);
  vi.stubEnv('CATALOGUE_PREFIX', 'catalogue/');
  vi.stubEnv('S3_ENDPOINT', s3.endpoint);
  vi.stubEnv('AWS_ENDPOINT_URL_EVENTBRIDGE', `http://127.0.0.1:${(bus.address() as AddressInfo).port}`);
  vi.stubEnv('BUILD_BUDGET_SECONDS', '900'); // no waiting for the lock in these tests
  ({ handler } = await import('../../builder/lambda.js'));
});
afterAll(async () => {
  vi.unstubAllEnvs();
  client.destroy();
  await s3.dispose();
  await new Promise((resolve) => bus.close(resolve));
  removeTemporaryDirectories();
});

async function upload(name: string, body: Buffer): Promise<S3EventRecord> {
  await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `incoming/${name}`, Body: body }));
  return records.findLast((record) => record.s3.object.key === `incoming/${name}`)!;
}
const lastDetail = () => JSON.parse(entries.at(-1)!.Detail);

describe('the upload builder function', () => {
  it('publishes an upload and puts one event on the default bus', async () => {
    const record = await upload('01.tar.gz', snapshotArchive(smallSnapshot(20)));
    vi.spyOn(console, 'log').mockImplementation(() => {});

    await handler({ Records: [record] }, context);

    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      Source: EVENT_SOURCE,
      DetailType: 'Catalogue upload published',
      EventBusName: 'default',
    });
    expect(lastDetail()).toMatchObject({
      upload: 'incoming/01.tar.gz',
      outcome: 'published',
      counts: { modules: 20 },
      report: 'reports/01.json',
    });
    vi.restoreAllMocks();
  });

  it('refuses an invalid upload with an event that carries the first problems, the report all of them', async () => {
    const broken = smallSnapshot(30);
    for (const module of broken.modules) module.hp = 0;
    const record = await upload('02.tar.gz', snapshotArchive(broken));
    vi.spyOn(console, 'log').mockImplementation(() => {});

    await handler({ Records: [record] }, context);

    expect(entries.at(-1)?.DetailType).toBe('Catalogue upload refused');
    const detail = lastDetail();
    expect(detail.problem_count).toBe(30);
    expect(detail.problems).toHaveLength(Math.min(30, EVENT_PROBLEMS));
    const report = await new S3ObjectStore({ client, bucket: s3.bucket }).get('reports/02.json');
    expect(report.ok && JSON.parse(report.body.toString()).problems).toHaveLength(30);
    vi.restoreAllMocks();
  });

  it('throws when the publish failed (Lambda retries; the failure alarm counts it), after its event', async () => {
    const lock = await takePublishLock(new S3ObjectStore({ client, bucket: s3.bucket }), 'catalogue/');
    const record = await upload('03.tar.gz', snapshotArchive(smallSnapshot(21)));
    vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      await expect(handler({ Records: [record] }, context)).rejects.toThrow(
        /^incoming\/03\.tar\.gz: publishing failed: another publish holds the target/,
      );
      expect(entries.at(-1)?.DetailType).toBe('Catalogue upload failed');
    } finally {
      await lock.release();
      vi.restoreAllMocks();
    }
    // Retried once the target is free, the same event publishes.
    vi.spyOn(console, 'log').mockImplementation(() => {});
    await handler({ Records: [record] }, context);
    expect(lastDetail()).toMatchObject({ upload: 'incoming/03.tar.gz', outcome: 'published' });
    vi.restoreAllMocks();
  });
});
