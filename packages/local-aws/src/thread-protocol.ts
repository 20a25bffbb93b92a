/**
 * The messages between the parent (threads.ts) and the protocol servers' worker thread (server-thread.ts): one
 * contract both sides import.
 */
import type { S3EventNotification } from './events.js';
import type { DynamoOptions, S3Options } from './servers.js';

export type Service = 's3' | 'dynamodb';

/** What the thread runs (its workerData): one server of each service asked for. */
export interface ThreadSpec {
  s3?: S3Options & { bucket: string };
  dynamodb?: DynamoOptions;
}

/** Parent → thread: one of a server's LocalServer operations, answered by a `done` with the same id. */
export interface ThreadCommand {
  id: number;
  service: Service;
  op: 'stop' | 'start' | 'dispose';
}

/** Thread → parent. */
export type ThreadMessage =
  | { type: 'ready'; servers: Partial<Record<Service, { endpoint: string; port: number }>> }
  /** A server did not start; `code` is the system error's (`EADDRINUSE`…). The thread then ends. */
  | { type: 'failed'; error: string; code?: string }
  | { type: 'done'; id: number; error?: string }
  | { type: 'event'; notification: S3EventNotification };
