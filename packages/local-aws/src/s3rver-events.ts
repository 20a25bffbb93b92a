/**
 * S3 event notifications from s3rver 3.7.1, as S3 delivers them to a subscribed function: s3rver emits an
 * `event` for every object written or deleted (its S3Event shape is S3's), but
 * - names the completion of a multipart upload `ObjectCreated:Post`, where S3 says
 *   `ObjectCreated:CompleteMultipartUpload` (what `aws s3 cp` sends for files over 8 MB);
 * - gives the key as it is, where S3 URL-encodes it (a space as `+`: events.ts eventKeyOf), so a
 *   key with `+` or `%` would be read as another;
 * - names a random principal for every request, where S3 names who signed it.
 * A middleware notes, for the request being handled, whether it completes a multipart upload and who signed
 * it (the access key of its signature, `AWS:S3RVER` for the local credentials; `Anonymous` when unsigned), and
 * each event is put right before it is passed on.
 *
 * Who uploaded is also kept, for the keys under the `uploadsPrefix` given (npm start: `incoming/`): an event
 * that `npm start` had not handled when it stopped (killed in the middle of a build, say) is lost with it, and
 * the upload is taken up again at the next start from a listing, which names no principal. So the signer of each upload is written
 * beside the bucket's objects (`._S3rver_uploaders/`, never listed) before its PUT is answered, and read back
 * by {@link recordedUploader}: the report and the version's history name the uploader either way.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type S3rver from 's3rver';
import { eventKeyOf, type S3EventNotification } from './events.js';
import { beforeRouter, type Middleware as KoaMiddleware, storeOf } from './internals.js';

/** Where a bucket's uploaders are kept, beside s3rver's own `._S3rver_uploads`. */
const UPLOADERS = '._S3rver_uploaders';

/** The file that keeps who uploaded `key` (one per key: a new upload replaces it). */
const uploaderFile = (s3Directory: string, bucket: string, key: string) =>
  join(s3Directory, bucket, UPLOADERS, `${createHash('sha256').update(key).digest('hex')}.json`);

/**
 * Who uploaded this version of an upload (`etag`, bare), as its event named them: `AWS:S3RVER`; undefined
 * when it was not kept (another version of the key, a write an older npm start took, a full disk).
 * @example recordedUploader('.local/s3', 'catalogue', 'incoming/a.tar.gz', '5d41402abc4b2a76b9719d911017c592') // → 'AWS:S3RVER'
 */
export function recordedUploader(
  s3Directory: string,
  bucket: string,
  key: string,
  etag: string,
): string | undefined {
  try {
    const kept = JSON.parse(readFileSync(uploaderFile(s3Directory, bucket, key), 'utf8')) as {
      etag?: unknown;
      principalId?: unknown;
    };
    return kept.etag === etag && typeof kept.principalId === 'string' ? kept.principalId : undefined;
  } catch {
    return undefined;
  }
}

/** Keep who uploaded an upload's version (`key`, as stored; whole or not at all); a full disk only loses the record. */
function keepUploader(
  s3Directory: string,
  key: string,
  record: S3EventNotification['Records'][number],
): void {
  const principalId = record.userIdentity?.principalId;
  if (!principalId) return;
  const file = uploaderFile(s3Directory, record.s3.bucket.name, key);
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    const etag = (record.s3.object.eTag ?? '').replace(/"/g, '');
    writeFileSync(`${file}.next`, JSON.stringify({ key, etag, principalId }));
    renameSync(`${file}.next`, file);
  } catch {
    // The upload is published all the same; only a restart before its report would not name its uploader.
  }
}

/** The part of Koa's context the middleware reads. */
interface Context {
  method: string;
  path: string;
  querystring: string;
  get(header: string): string;
}

/**
 * Who signed a request, as S3's events name a principal: `AWS:<access key id>` from its signature (header or
 * presigned query), `Anonymous` when it is not signed.
 * @example signerOf({ get: () => 'AWS4-HMAC-SHA256 Credential=S3RVER/20260101/us-east-1/s3/aws4_request, …', querystring: '' }) // → 'AWS:S3RVER'
 */
function signerOf(ctx: Pick<Context, 'get' | 'querystring'>): string {
  const authorization = ctx.get('authorization');
  const query = new URLSearchParams(ctx.querystring);
  const accessKey =
    /Credential=([^/,\s]+)\//.exec(authorization)?.[1] ??
    /^AWS ([^:\s]+):/.exec(authorization)?.[1] ??
    query.get('X-Amz-Credential')?.split('/')[0] ??
    query.get('AWSAccessKeyId');
  return accessKey ? `AWS:${accessKey}` : 'Anonymous';
}
type Middleware = KoaMiddleware<Context>;

/**
 * Pass every event of `s3rver` to `emit`, multipart completions named as S3 names them; the uploader of each
 * key under `uploadsPrefix` is kept ({@link recordedUploader}). Call it before `callback()` or `run()` (Koa
 * composes its middleware then).
 * @example const server = new S3rver(options); forwardS3rverEvents(server, (event) => queue.push(event), 'incoming/'); await server.run();
 */
export function forwardS3rverEvents(
  s3rver: S3rver,
  emit: (notification: S3EventNotification) => void,
  uploadsPrefix?: string,
): void {
  /** The request being handled (its events are emitted while it is): who signed it, whether it completes a multipart upload. */
  const requests = new AsyncLocalStorage<{ signer: string; completion: boolean }>();
  const middleware: Middleware = async (ctx, next) => {
    const completion = ctx.method === 'POST' && new URLSearchParams(ctx.querystring).has('uploadId');
    return requests.run({ signer: signerOf(ctx), completion }, next);
  };
  beforeRouter(s3rver, middleware);
  const directory = storeOf(s3rver).rootDirectory;
  // s3rver's 'event' is public (its README): each S3 event notification it emits.
  s3rver.on('event', (notification) => {
    const event = notification as S3EventNotification;
    const request = requests.getStore();
    for (const record of event.Records) {
      if (record.eventName === 'ObjectCreated:Post' && request?.completion) {
        record.eventName = 'ObjectCreated:CompleteMultipartUpload';
      }
      const key = record.s3.object.key;
      record.s3.object.key = eventKeyOf(key);
      record.userIdentity = { principalId: request?.signer ?? 'Anonymous' };
      const upload = uploadsPrefix !== undefined && key.startsWith(uploadsPrefix);
      if (upload && record.eventName.startsWith('ObjectCreated:')) keepUploader(directory, key, record);
    }
    emit(event);
  });
}
