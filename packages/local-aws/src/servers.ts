/**
 * In-process S3- and DynamoDB-protocol servers (s3rver, dynalite) on loopback, for tests and for `npm start`
 * (which runs them on a thread of their own: threads.ts): ephemeral ports by default, stoppable for real
 * (fault tests) and restartable on the same port and data. Both hold idle keep-alive connections longer than
 * their clients keep them ({@link IDLE_CONNECTION}). Each server's package is loaded by its start, so a thread
 * that runs one loads only that one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type S3rver from 's3rver';
import { installDynaliteExpressionMemo } from './dynalite-expressions.js';
import { installJournaledStore, Journal, type Store } from './dynamo-journal.js';
import { sweepEvery, TimeToLive } from './dynamo-ttl.js';
import type { S3EventNotification } from './events.js';
import { checkInstalled, replaceStore } from './internals.js';
import { installS3rverConditionalWrites } from './s3rver-conditional.js';
import { installS3rverDes } from './s3rver-des.js';
import { forwardS3rverEvents } from './s3rver-events.js';
import { type BulkKeys, cleanS3rverStaging, wholeStore } from './s3rver-store.js';

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

/** The local S3: a server, its bucket, and its event notifications. */
export interface LocalS3 extends LocalServer {
  bucket: string;
  /** Call `listener` with every event notification of the bucket; the returned function unsubscribes. */
  onEvent(listener: (notification: S3EventNotification) => void): () => void;
}

/** Listen on 127.0.0.1:`port` (0: an ephemeral one); a port in use rejects (`EADDRINUSE`). */
function listenOn(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * How long an idle keep-alive connection is kept: the `Keep-Alive: timeout=` advertised, and how long it is
 * really held. A client that reuses a connection the server is closing at that instant loses its request, so
 * every client must give up first: advertised 60 s (undici keeps a connection 58 s), held 125 s, above the idle
 * limits of common clients that ignore the hint; Node's `http.Agent` without a `timeout` (the AWS SDK's) keeps a
 * connection until the server closes it. The same figures as the product's own server (npm start passes its).
 */
export interface IdleConnection {
  advertisedMs: number;
  heldMs: number;
}
export const IDLE_CONNECTION: IdleConnection = { advertisedMs: 60_000, heldMs: 125_000 };

function holdIdleConnections(server: Server, idle: IdleConnection): void {
  server.keepAliveTimeout = idle.advertisedMs;
  server.keepAliveTimeoutBuffer = idle.heldMs - idle.advertisedMs;
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
  /** @default IDLE_CONNECTION */
  idleConnection?: IdleConnection;
}

export interface S3Options extends ServerOptions {
  /** Keys whose uploader is kept beside the bucket (`recordedUploader`): those under this prefix; none by default. */
  uploadsPrefix?: string;
  /** The keys refused when they would eat into the disk's reserve (s3rver-store.ts); none by default. */
  bulk?: BulkKeys;
}

/**
 * An s3rver on 127.0.0.1 with `bucket` created (if missing). Listings of any length work on Node ≥ 17
 * (see `s3rver-des.ts`), PUTs honour S3's conditional writes (`s3rver-conditional.ts`), and objects are stored
 * whole or not at all, a full disk answered 507 with a reserve kept (`s3rver-store.ts`; what a killed write
 * left in staging is removed at each start).
 */
export async function startS3(bucket = 'catalogue-test', options: S3Options = {}): Promise<LocalS3> {
  checkInstalled('s3rver');
  installS3rverDes();
  const { default: S3rverServer } = await import('s3rver');
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
    await cleanS3rverStaging(directory);
    s3rver = new S3rverServer({ silent: true, directory, configureBuckets: [{ name: bucket }] });
    replaceStore(s3rver, wholeStore(directory, options.bulk));
    installS3rverConditionalWrites(s3rver);
    // Before `callback()`, which composes s3rver's middleware: multipart completions named as S3 names them.
    forwardS3rverEvents(s3rver, emit, options.uploadsPrefix);
    // The bucket, if missing, straight into s3rver's store (its own provisioning, as `run()` does it).
    await s3rver.configureBuckets();
    // Served by a server of ours rather than `run()`, whose listen never fails: a port in use would be an
    // uncaught 'error' event instead of a rejected start.
    const server = createServer(s3rver.callback());
    holdIdleConnections(server, options.idleConnection ?? IDLE_CONNECTION);
    port = await listenOn(server, port);
    s3rver.httpServer = server;
  };
  const stop = async () => {
    const server = s3rver?.httpServer;
    if (server?.listening) await closeServer(server);
  };
  try {
    await start();
  } catch (error) {
    if (temporary) rmSync(directory, { recursive: true, force: true });
    throw error;
  }
  const endpoint = `http://127.0.0.1:${port}`;
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
      listeners.clear();
      if (temporary) rmSync(directory, { recursive: true, force: true });
    },
  };
}

export interface DynamoOptions extends ServerOptions {
  /** Between two sweeps of expired items (dynamo-ttl.ts). */
  sweepMs?: number;
  /** Journal size below which a running server does not compact it (dynamo-journal.ts). */
  compactBytes?: number;
}

/**
 * A dynalite on 127.0.0.1: its store in memory, made durable by a journal in the data directory
 * (dynamo-journal.ts), so a restart (and a crash) keeps the tables and items; its expressions parsed once
 * per shape (dynalite-expressions.ts); TTL honoured (dynamo-ttl.ts). Served by a server of ours, so
 * that `stop` and `start` only stop and start listening: the store stays as it is.
 */
export async function startDynamo(options: DynamoOptions = {}): Promise<LocalServer> {
  const temporary = !options.directory;
  checkInstalled('dynalite');
  const directory = options.directory ?? mkdtempSync(join(tmpdir(), 'cat-ddb-'));
  installDynaliteExpressionMemo();
  installJournaledStore();
  let journal: Journal | undefined;
  let server: Server | undefined;
  let stopSweeping = async () => {};
  try {
    journal = await Journal.open(directory, {
      ...(options.compactBytes && { compactBytes: options.compactBytes }),
    });
    const { default: dynalite } = await import('dynalite');
    let store: Store | undefined;
    const emulation = dynalite({
      journal,
      onStore: (created) => {
        store = created;
      },
      createTableMs: 0,
      deleteTableMs: 0,
      updateTableMs: 0,
    });
    await journal.loading;
    const ttl = new TimeToLive(store!);
    server = createServer(ttl.front(emulation.listeners('request')[0] as RequestListener));
    holdIdleConnections(server, options.idleConnection ?? IDLE_CONNECTION);
    const port = await listenOn(server, options.port ?? 0);
    const endpoint = `http://127.0.0.1:${port}`;
    const listening = server;
    stopSweeping = sweepEvery({
      endpoint,
      listening: () => listening.listening,
      ...(options.sweepMs && { sweepMs: options.sweepMs }),
    });
    const stop = async () => {
      if (listening.listening) await closeServer(listening);
    };
    return {
      endpoint,
      port,
      stop,
      start: async () => {
        await listenOn(listening, port);
      },
      async dispose() {
        await stop();
        await stopSweeping();
        journal!.close();
        if (temporary) rmSync(directory, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await stopSweeping();
    journal?.close();
    if (temporary) rmSync(directory, { recursive: true, force: true });
    throw error;
  }
}
