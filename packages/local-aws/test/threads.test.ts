/**
 * The protocol servers on a thread of their own (src/threads.ts), as `npm start` runs them: the same
 * LocalServer as in-process (stop listening for real, listen again on the same port with the same data,
 * dispose), the local S3's event notifications forwarded to the parent, a port in use refused with its
 * code, and a thread that dies while serving reported.
 */

import { createServer as createNetServer } from 'node:net';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { S3EventNotification } from '../src/events.js';
import type { LocalS3, LocalServer } from '../src/servers.js';
import { startServerThread } from '../src/threads.js';
import { dynamoClient, s3Client } from './helpers/aws.js';

/** Whether `port` on 127.0.0.1 can be listened on (nothing holds it). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createNetServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

let s3: LocalS3;
let dynamo: LocalServer;
beforeAll(async () => {
  const started = await startServerThread({ s3: { bucket: 'thread-test' }, dynamodb: {} });
  [s3, dynamo] = [started.s3!, started.dynamodb!];
});
afterAll(async () => {
  await s3?.dispose();
  await dynamo?.dispose();
});

describe('servers on a thread', () => {
  it('forward the local S3’s event notifications to the parent', async () => {
    const seen: S3EventNotification[] = [];
    const unsubscribe = s3.onEvent((notification) => seen.push(notification));
    const client = s3Client({ endpoint: s3.endpoint });
    try {
      await client.send(
        new PutObjectCommand({ Bucket: 'thread-test', Key: 'incoming/b.zip', Body: 'bytes' }),
      );
      await expect.poll(() => seen.length).toBe(1);
    } finally {
      unsubscribe();
      client.destroy();
    }
    expect(seen[0]!.Records[0]).toMatchObject({
      eventName: 'ObjectCreated:Put',
      s3: { bucket: { name: 'thread-test' }, object: { key: 'incoming/b.zip', size: 5 } },
    });
  });

  it('stop listening for real and listen again on the same port, with the same data', async () => {
    const client = s3Client({ endpoint: s3.endpoint, maxAttempts: 1 });
    const tables = dynamoClient({ endpoint: dynamo.endpoint, maxAttempts: 1 });
    try {
      await client.send(new PutObjectCommand({ Bucket: 'thread-test', Key: 'kept', Body: 'kept' }));
      await Promise.all([s3.stop(), dynamo.stop()]);
      expect(await portFree(s3.port)).toBe(true);
      await expect(tables.send(new ListTablesCommand({}))).rejects.toMatchObject({ code: 'ECONNREFUSED' });

      await Promise.all([s3.start(), dynamo.start()]);
      const kept = await client.send(new GetObjectCommand({ Bucket: 'thread-test', Key: 'kept' }));
      expect(await kept.Body!.transformToString()).toBe('kept');
      expect((await tables.send(new ListTablesCommand({}))).TableNames).toEqual([]);
    } finally {
      client.destroy();
      tables.destroy();
    }
  });

  it('refuse a port in use as a failed start, with its code', async () => {
    await expect(startServerThread({ dynamodb: { port: dynamo.port } })).rejects.toMatchObject({
      name: 'ServerStartError',
      code: 'EADDRINUSE',
    });
  });

  it('end with dispose: the ports are free, and the servers stopped for good', async () => {
    await s3.dispose();
    await dynamo.dispose();
    expect(await portFree(s3.port)).toBe(true);
    expect(await portFree(dynamo.port)).toBe(true);
    await expect(dynamo.start()).rejects.toThrow(
      'the local DynamoDB (dynalite) is not running: it was disposed, or its thread ended',
    );
  });

  it('report a thread that dies while serving, and one that ends before it is ready', async () => {
    const module = new URL('./failing-thread.ts', import.meta.url);
    const crashed = new Promise<Error>((resolve) => {
      void startServerThread({ s3: { bucket: 'crash' }, dynamodb: {} }, { module, onCrash: resolve });
    });
    expect((await crashed).message).toBe(
      'the local S3 (s3rver) and the local DynamoDB (dynalite) crashed: Error: the server failed while serving',
    );
    await expect(startServerThread({ s3: { bucket: 'exit' } }, { module })).rejects.toThrow(
      'the local S3 (s3rver) did not start: its thread exited with code 3',
    );
  });
});
