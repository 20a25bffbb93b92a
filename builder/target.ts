/** Where a build goes: `--out DIR` (a directory store) or `--out s3://bucket/prefix` (an S3 store). */
import { resolve } from 'node:path';
import { DirectoryObjectStore } from '../store/objects/directory.js';
import type { WritableObjectStore } from '../store/objects/interface.js';

export interface PublishTarget {
  store: WritableObjectStore;
  /** Key prefix: '' or ending in '/'. */
  prefix: string;
  /** For messages: the resolved directory or the s3:// address. */
  description: string;
  /** For error messages: "S3 bucket B in us-east-1 (endpoint …)" or "directory /abs/path". */
  location: string;
  /** Uploads in flight when --concurrency is absent: S3 round trips are slow, local writes are not. */
  defaultConcurrency: number;
  /** Release clients. */
  close(): void;
}

/** Below the SDK's default of 50 sockets per host, so requests never queue inside the client. */
const S3_CONCURRENCY = 48;
/** Enough to keep libuv's four threads busy; more only queues in the kernel. */
const DIRECTORY_CONCURRENCY = 16;

/** Retries for the publisher: it has no latency budget, and a retried put of immutable bytes is harmless. */
const PUBLISH_MAX_ATTEMPTS = 5;

/**
 * Open the target named by `out`; rejects with a RangeError (a usage error) when it is malformed. The AWS
 * SDK is loaded only for an s3:// target (it takes a good part of a second, a large share of a small
 * incremental publish to a directory).
 * @example (await openTarget('s3://catalogue-bucket/v1', 'http://127.0.0.1:4569')).prefix // → 'v1/'
 * @example (await openTarget('./public')).description // → '/abs/path/public'
 */
export async function openTarget(out: string, endpoint?: string): Promise<PublishTarget> {
  if (out.startsWith('s3://')) {
    const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(out);
    if (!match) throw new RangeError(`--out ${out}: expected s3://bucket or s3://bucket/prefix`);
    const bucket = match[1]!;
    const path = (match[2] ?? '').replace(/\/+$/, '');
    if (
      path.split('/').some((segment) => segment === '' || segment === '.' || segment === '..') &&
      path !== ''
    ) {
      throw new RangeError(`--out ${out}: the prefix has an empty, "." or ".." segment`);
    }
    const prefix = path === '' ? '' : `${path}/`;
    const [{ awsRegion, s3Client }, { S3ObjectStore }] = await Promise.all([
      import('../aws/sdk.js'),
      import('../store/objects/s3.js'),
    ]);
    const client = s3Client({ endpoint, maxAttempts: PUBLISH_MAX_ATTEMPTS });
    return {
      store: new S3ObjectStore({ client, bucket }),
      prefix,
      description: `s3://${bucket}/${prefix}`,
      location: `S3 bucket ${bucket} in ${awsRegion()}${endpoint ? ` at ${endpoint}` : ''}`,
      defaultConcurrency: S3_CONCURRENCY,
      close: () => client.destroy(),
    };
  }
  if (endpoint !== undefined) throw new RangeError('--endpoint applies only to an s3:// --out');
  const root = resolve(out);
  return {
    store: new DirectoryObjectStore(root),
    prefix: '',
    description: root,
    location: `directory ${root}`,
    defaultConcurrency: DIRECTORY_CONCURRENCY,
    close: () => {},
  };
}
