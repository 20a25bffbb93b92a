/**
 * Where `npm run catalogue -- upload` sends a snapshot, and how it reads the report back: the stack's bucket
 * (`--out s3://BUCKET`, or its `UploadUri` output `s3://BUCKET/incoming/`), with the AWS credentials of the
 * environment — those of the stack's upload policy suffice: `s3:PutObject` under `incoming/`, `s3:GetObject`
 * under `reports/`, nothing else is called — or, with no `--out`, the running `npm start` of this checkout's
 * data directory: its local S3 and bucket, as it records them there (aws/local-stack.ts, findLocalStack: every
 * command given no target finds it so), with the local S3's own credentials (aws/env.ts), nothing to set.
 */
import { findLocalStack } from '../aws/local-stack.js';
import type { WritableObjectStore } from '../store/objects/interface.js';
import { UPLOAD_PREFIXES } from '../store/upload-prefixes.js';

export interface UploadDestination {
  store: WritableObjectStore;
  bucket: string;
  /** For messages: `s3://catalogue (npm start's local S3 at http://127.0.0.1:41234, data directory …)`. */
  description: string;
  /** The S3 endpoint, when not AWS's. */
  endpoint: string | undefined;
  /** `npm start`'s own S3. */
  local: boolean;
  close(): void;
}

/** Why there is no destination: said in one line (exit 3, nothing uploaded). */
export class DestinationError extends Error {
  override name = 'DestinationError';
}

/**
 * The bucket of `--out`: `s3://BUCKET`, or the stack's `UploadUri` (`s3://BUCKET/incoming/`). Anything else is
 * a usage error (RangeError) saying what upload takes, e.g. for the catalogue's own `s3://BUCKET/catalogue`.
 * @example uploadBucket('s3://catalogue-bucket/incoming/') // → 'catalogue-bucket'
 */
export function uploadBucket(out: string): string {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(\/.*)?$/.exec(out);
  const path = match?.[2]?.replace(/\/+$/, '') ?? '';
  if (!match || (path !== '' && `${path.slice(1)}/` !== UPLOAD_PREFIXES.incomingPrefix)) {
    throw new RangeError(
      `--out ${out}: upload takes the stack's bucket, s3://BUCKET (or its UploadUri, s3://BUCKET/${UPLOAD_PREFIXES.incomingPrefix}); ` +
        `the snapshot goes to ${UPLOAD_PREFIXES.incomingPrefix} and the stack's builder publishes it`,
    );
  }
  return match[1]!;
}

/** Where the snapshot goes: `--out`'s bucket, or this checkout's `npm start`. */
export interface DestinationRequest {
  out?: string | undefined;
  endpoint?: string | undefined;
  env: Record<string, string | undefined>;
  /** The checkout's root, whose `.local/` is the default data directory. */
  root: string;
}

/**
 * Open the destination. The AWS SDK is loaded here, not before: a snapshot refused by the check costs no SDK.
 * @example (await openDestination({ env: process.env, root: '.' })).description // → 's3://catalogue (npm start's local S3 …)'
 */
export async function openDestination(request: DestinationRequest): Promise<UploadDestination> {
  let { endpoint } = request;
  let bucket: string;
  let description: string;
  const local = request.out === undefined;
  if (local) {
    const found = await findLocalStack(request.env, request.root, 's3');
    if (!found.ok) {
      throw new DestinationError(
        `${found.problem}: start it (npm start) in another shell, or name the stack’s bucket with --out s3://BUCKET`,
      );
    }
    endpoint ??= found.stack.s3;
    bucket = found.stack.bucket;
    description = `s3://${bucket} (npm start's local S3 at ${endpoint}, data directory ${found.directory})`;
  } else {
    bucket = uploadBucket(request.out!);
    description = `s3://${bucket}${endpoint ? ` at ${endpoint}` : ''}`;
  }
  const [{ s3Client }, { S3ObjectStore }] = await Promise.all([
    import('../aws/sdk.js'),
    import('../store/objects/s3.js'),
  ]);
  const client = s3Client({ endpoint, maxAttempts: 5 });
  return {
    store: new S3ObjectStore({ client, bucket }),
    bucket,
    description,
    endpoint,
    local,
    close: () => client.destroy(),
  };
}
