/**
 * @catalogue/local-aws: S3 and DynamoDB on loopback (s3rver and dynalite, extended where the product relies on
 * what AWS does and they do not), in-process or on a worker thread, and the SigV4 check of a function URL with
 * AWS_IAM auth. What each extension does and why: README.md; the one seam into dynalite's and s3rver's insides:
 * internals.ts.
 */

export { sweepExpired } from './dynamo-ttl.js';
export { eventKeyOf, type S3EventNotification, type S3EventRecord } from './events.js';
export { dynaliteItemSize, LayoutError } from './internals.js';
export { recordedUploader } from './s3rver-events.js';
export type { BulkKeys } from './s3rver-store.js';
export {
  type DynamoOptions,
  IDLE_CONNECTION,
  type IdleConnection,
  type LocalS3,
  type LocalServer,
  type S3Options,
  type ServerOptions,
  startDynamo,
  startS3,
} from './servers.js';
export { type LocalCredentials, type ReceivedRequest, sigV4Check } from './sigv4.js';
export { ServerStartError, startServerThread, type ThreadOptions, type ThreadServers } from './threads.js';
