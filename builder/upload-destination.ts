/**
 * Where `npm run catalogue -- upload` sends a snapshot, and how it reads the report back: the stack's bucket
 * (`--out s3://BUCKET`, or its `UploadUri` output `s3://BUCKET/incoming/`), with the AWS credentials of the
 * environment — those of the stack's upload policy suffice: `s3:PutObject` under `incoming/`, `s3:GetObject`
 * under `reports/`, nothing else is called — or, with no `--out`, the `npm start` of this checkout's data
 * directory: its local S3, from the endpoints it records there (aws/local-stack.ts), with the local S3's own
 * credentials (aws/env.ts), nothing to set.
 */
import { localDataDirectory, readEndpoints } from '../aws/local-stack.js';
import type { WritableObjectStore } from '../store/objects/interface.js';
import { UPLOAD_PREFIXES } from '../store/upload-prefixes.js';

/** The bucket `npm start` serves from unless CATALOGUE_BUCKET names another (local/start.ts). */
const LOCAL_BUCKET = 'catalogue';

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
    const directory = localDataDirectory(request.env, request.root);
    const recorded = readEndpoints(directory).s3;
    if (recorded === undefined) {
      throw new DestinationError(
        `no npm start has run on ${directory} (it records its local S3 there): start one (npm start) in ` +
          'another shell, or name the stack’s bucket with --out s3://BUCKET',
      );
    }
    endpoint ??= recorded;
    bucket = request.env.CATALOGUE_BUCKET || LOCAL_BUCKET;
    description = `s3://${bucket} (npm start's local S3 at ${endpoint}, data directory ${directory})`;
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
