/**
 * The in-process protocol servers (src/servers.ts): the local S3's event notifications (the shape AWS
 * delivers to a subscribed Lambda function), a port in use refused as a failed start (not an uncaught error),
 * and idle keep-alive connections held as the proxy's server holds them.
 */

import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3EventNotification } from '../src/events.js';
import { IDLE_CONNECTION, type LocalS3, type LocalServer, startDynamo, startS3 } from '../src/servers.js';
import { dynamoClient, s3Client } from './helpers/aws.js';

let s3: LocalS3;
let dynamo: LocalServer;
beforeAll(async () => {
  [s3, dynamo] = await Promise.all([startS3('events-test'), startDynamo()]);
});
afterAll(async () => {
  await s3?.dispose();
  await dynamo?.dispose();
});

describe('the local S3', () => {
  it('notifies every object created or removed, as AWS notifies a subscribed function, until unsubscribed', async () => {
    const seen: S3EventNotification[] = [];
    const unsubscribe = s3.onEvent((notification) => seen.push(notification));
    const client = s3Client({ endpoint: s3.endpoint });
    try {
      await client.send(
        new PutObjectCommand({ Bucket: 'events-test', Key: 'incoming/a.zip', Body: 'snapshot' }),
      );
      await client.send(new DeleteObjectCommand({ Bucket: 'events-test', Key: 'incoming/a.zip' }));
      unsubscribe();
      await client.send(new PutObjectCommand({ Bucket: 'events-test', Key: 'after', Body: 'x' }));
    } finally {
      client.destroy();
    }
    expect(seen).toHaveLength(2);
    const [created, removed] = seen.map((notification) => notification.Records[0]!);
    expect(created).toMatchObject({
      eventSource: 'aws:s3',
      eventName: 'ObjectCreated:Put',
      s3: { bucket: { name: 'events-test' }, object: { key: 'incoming/a.zip', size: 8 } },
    });
    expect(created!.s3.object.eTag).toMatch(/^[0-9a-f]{32}$/);
    expect(Date.parse(created!.eventTime)).not.toBeNaN();
    expect(removed).toMatchObject({
      eventName: 'ObjectRemoved:Delete',
      s3: { object: { key: 'incoming/a.zip' } },
    });
  });
});

describe('both servers', () => {
  it('refuse a port in use as a failed start, with its code', async () => {
    await expect(startS3('taken-test', { port: s3.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await expect(startDynamo({ port: dynamo.port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    // The servers that hold the ports are untouched.
    const client = dynamoClient({ endpoint: dynamo.endpoint });
    try {
      expect((await client.send(new ListTablesCommand({}))).TableNames).toEqual([]);
    } finally {
      client.destroy();
    }
  });

  it('hold idle keep-alive connections as the proxy does (advertised 60 s)', async () => {
    for (const server of [s3, dynamo]) {
      const answer = await request(server.endpoint);
      await answer.body.dump();
      expect(answer.headers['keep-alive']).toBe(`timeout=${IDLE_CONNECTION.advertisedMs / 1000}`);
    }
  });
});
