/**
 * In-process S3- and DynamoDB-protocol servers (s3rver, dynalite) on loopback, for `npm start` and tests:
 * ephemeral ports by default, stoppable for real (fault tests) and restartable on the same port and data.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { s3Client } from '../aws/sdk.js';
import type { S3EventNotification } from '../builder/upload/event.js';
import { installS3rverConditionalWrites } from './s3rver-conditional.js';
import { installS3rverDes } from './s3rver-des.js';
import { forwardS3rverEvents } from './s3rver-events.js';

export type { S3EventNotification } from '../builder/upload/event.js';

export interface LocalServer {
  endpoint: string;
  port: number;
  /** Stop listening and drop open connections: clients see refused connections. */
  stop(): Promise<void>;
  /** Listen again on the same port, with the same data. */
  start(): Promise<void>;
  /** Stop for good and remove the data directory. */
  dispose(): Promise<void>;
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export interface ServerOptions {
  /** Data directory; a fresh temporary one (removed by `dispose`) when absent. */
  directory?: string;
  /** 0 (default) for an ephemeral port. */
  port?: number;
}

/** The local S3: a {@link LocalServer} with its bucket, and the event notifications S3 would send. */
export interface LocalS3 extends LocalServer {
  bucket: string;
  /**
   * Call `listener` with every event notification (an object created — by a PUT, a copy or a completed
   * multipart upload — or deleted), shaped as S3 delivers them to a subscribed function; across restarts.
   * Returns the function that unsubscribes.
   */
  onEvent(listener: (notification: S3EventNotification) => void): () => void;
}

/**
 * An s3rver on 127.0.0.1 with `bucket` created (if missing). Listings of any length work on Node ≥ 17
 * (see `s3rver-des.ts`), PUTs honour S3's conditional writes (`s3rver-conditional.ts`), and its event
 * notifications are S3's (`s3rver-events.ts`).
 */
export async function startS3(bucket = 'catalogue-test', options: ServerOptions = {}): Promise<LocalS3> {
  installS3rverDes();
  const temporary = !options.directory;
  const directory = options.directory ?? mkdtempSync(join(tmpdir(), 'cat-s3-'));
  let port = options.port ?? 0;
  let s3rver: S3rver | undefined;
  const listeners = new Set<(notification: S3EventNotification) => void>();
  const emit = (notification: S3EventNotification) => {
    for (const listener of listeners) {
      try {
        listener(notification);
      } catch {
        // A listener's fault is its own: s3rver and the other listeners carry on.
      }
    }
  };
  const start = async () => {
    s3rver = new S3rver({ port, address: '127.0.0.1', silent: true, directory });
    installS3rverConditionalWrites(s3rver);
    forwardS3rverEvents(s3rver, emit);
    const info = (await s3rver.run()) as AddressInfo;
    port = info.port;
  };
  const stop = async () => {
    const server = (s3rver as unknown as { httpServer?: Server } | undefined)?.httpServer;
    if (server?.listening) await closeServer(server);
  };
  await start();
  const endpoint = `http://127.0.0.1:${port}`;
  const client = s3Client({ endpoint });
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
  } finally {
    client.destroy();
  }
  return {
    endpoint,
    port,
    bucket,
    stop,
    start,
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async dispose() {
      await stop();
      if (temporary) rmSync(directory, { recursive: true, force: true });
    },
  };
}

/** A dynalite on 127.0.0.1, persisted on disk so a restart keeps the tables. */
export async function startDynamo(options: ServerOptions = {}): Promise<LocalServer> {
  const temporary = !options.directory;
  const directory = options.directory ?? mkdtempSync(join(tmpdir(), 'cat-ddb-'));
  const server = dynalite({
    path: directory,
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  }) as Server;
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  await listen(options.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  const stop = async () => {
    if (server.listening) await closeServer(server);
  };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    stop,
    start: () => listen(port),
    async dispose() {
      await stop();
      if (temporary) rmSync(directory, { recursive: true, force: true });
    },
  };
}
