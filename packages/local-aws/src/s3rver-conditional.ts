/**
 * Gives s3rver 3.7.1 what S3 promises about writes and the product relies on: conditional writes, and a body
 * stored only whole.
 *
 * Conditional writes: PutObject with `If-None-Match: *` (create only) and `If-Match: <etag>` (replace only that
 * version), which the publish lock, the pointer write and the upload reports rely on.
 *
 * Why: s3rver honours If-None-Match and If-Match on GET only; on PUT it ignores them and overwrites, so a
 * lock taken with a conditional write would hold for every publisher at once on `npm start` and in tests,
 * and never in a way that matches S3.
 *
 * How: one Koa middleware, put in front of s3rver's router before it listens. Every write of an object
 * (PUT, DELETE) runs under a mutex of its bucket and key, and a conditional PUT checks its condition under
 * it, against the object's ETag as s3rver keeps it (the quoted MD5), then lets s3rver store the object. The
 * answers are S3's documented ones: `412 PreconditionFailed` when the condition does not hold (with the
 * `<Condition>` that failed), `404 NoSuchKey` for If-Match on a missing object, `501 NotImplemented` for an
 * If-None-Match other than `*`. Where S3 may answer `409 ConditionalRequestConflict` to two conditional
 * writes in flight at once, this serialises them, and the loser gets its 412. Unconditional writes, reads,
 * copies and multipart uploads go through untouched.
 *
 * A body stored only whole: s3rver streams a PUT's body straight into the object's file, so a writer that
 * died in the middle left a truncated object stored as complete (and, under the mutex above, a key no one
 * could write again: the stream never ended). Here every PutObject and UploadPart body is received in full
 * first — as many bytes as Content-Length says, and the Content-MD5 or `x-amz-checksum-*` header it carries
 * checked (S3's `400 BadDigest` / `InvalidDigest`) — before the key's mutex is taken and s3rver stores it. A
 * writer that dies mid-body stores nothing and holds nothing. (A body sent with `aws-chunked` encoding and its
 * checksum in a trailer is not decoded here, as s3rver never decodes it.)
 */
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { Crc32c, Crc64Nvme } from '@aws-sdk/checksums/crc';
import type S3rver from 's3rver';
import { beforeRouter, type Middleware as KoaMiddleware } from './internals.js';

/** The part of Koa's context the middleware uses (s3rver is a Koa application). */
interface Context {
  method: string;
  path: string;
  querystring: string;
  status: number;
  type: string;
  body: unknown;
  req: IncomingMessage | Readable;
  get(header: string): string;
  set(header: string, value: string): void;
  store: {
    existsObject(bucket: string, key: string): Promise<boolean>;
    getMetadata(bucket: string, key: string): Promise<{ etag: string }>;
  };
}
type Middleware = KoaMiddleware<Context>;

/** Marks an s3rver that has the middleware already. */
const INSTALLED = Symbol.for('catalogue-read-api.s3rver-conditional');

/** The bucket and key of a path-style object request (`/bucket/key…`), or undefined for a bucket request. */
function objectOf(path: string): { bucket: string; key: string } | undefined {
  const match = /^\/([^/]+)\/(.+)$/.exec(path);
  if (!match) return undefined;
  try {
    return { bucket: decodeURIComponent(match[1]!), key: decodeURIComponent(match[2]!) };
  } catch {
    return undefined;
  }
}

function answerError(
  ctx: Context,
  status: number,
  code: string,
  message: string,
  detail: Record<string, string>,
) {
  // The body is not read: let it drain, so the connection stays usable.
  ctx.req.resume();
  const fields = Object.entries(detail)
    .map(([name, value]) => `<${name}>${value}</${name}>`)
    .join('');
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.body =
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${code}</Code><Message>${message}</Message>${fields}` +
    `<RequestId>${randomBytes(8).toString('hex').toUpperCase()}</RequestId></Error>`;
}

/** Whether `header` (an If-Match value: `*` or a list of entity tags) matches the object's ETag. */
function matches(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** Largest body the local S3 receives (held in memory while it is checked): 4× an upload's limit. */
export const LOCAL_BODY_LIMIT = 512 * 2 ** 20;

/** The checksum headers S3 checks a body against, and how each is computed (base64 of the digest). */
const CHECKSUMS: Record<string, (body: Buffer) => Promise<string>> = {
  'content-md5': async (body) => createHash('md5').update(body).digest('base64'),
  'x-amz-checksum-sha1': async (body) => createHash('sha1').update(body).digest('base64'),
  'x-amz-checksum-sha256': async (body) => createHash('sha256').update(body).digest('base64'),
  'x-amz-checksum-crc32': async (body) => {
    const digest = Buffer.alloc(4);
    digest.writeUInt32BE(crc32(body));
    return digest.toString('base64');
  },
  'x-amz-checksum-crc32c': (body) => digestOf(new Crc32c(), body),
  'x-amz-checksum-crc64nvme': (body) => digestOf(new Crc64Nvme(), body),
};

async function digestOf(
  checksum: { update(data: Uint8Array): void; digest(): Promise<Uint8Array> },
  body: Buffer,
): Promise<string> {
  checksum.update(body);
  return Buffer.from(await checksum.digest()).toString('base64');
}

/** Why `body` is not what its headers say it is (S3's error code and message), or undefined. */
async function bodyProblem(ctx: Context, body: Buffer): Promise<[code: string, message: string] | undefined> {
  const declared = ctx.get('content-length');
  if (declared !== '' && Number(declared) !== body.byteLength) {
    return [
      'IncompleteBody',
      'You did not provide the number of bytes specified by the Content-Length HTTP header.',
    ];
  }
  for (const [header, compute] of Object.entries(CHECKSUMS)) {
    const sent = ctx.get(header);
    if (!sent) continue;
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(sent)) {
      return ['InvalidDigest', `The ${header} you specified was invalid.`];
    }
    if ((await compute(body)) !== sent) {
      return ['BadDigest', `The ${header} you specified did not match the calculated checksum.`];
    }
  }
  return undefined;
}

/**
 * Receive a PUT's body in full and check it; then s3rver reads it from memory. False, with the answer set
 * (or none: the writer is gone), when there is nothing to store.
 */
async function receiveBody(ctx: Context): Promise<boolean> {
  const request = ctx.req as IncomingMessage;
  if (Number(ctx.get('content-length')) > LOCAL_BODY_LIMIT) {
    answerError(ctx, 400, 'EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size', {
      MaxSizeAllowed: String(LOCAL_BODY_LIMIT),
    });
    ctx.set('connection', 'close');
    return false;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of request as AsyncIterable<Buffer>) {
      size += chunk.byteLength;
      if (size > LOCAL_BODY_LIMIT) throw new Error('too large');
      chunks.push(chunk);
    }
  } catch {
    // The writer died (or sent more than a body may hold): nothing is stored, nothing held.
    request.destroy();
    return false;
  }
  if (!request.complete) return false;
  const body = Buffer.concat(chunks);
  const problem = await bodyProblem(ctx, body);
  if (problem) {
    answerError(ctx, 400, problem[0], problem[1], {});
    return false;
  }
  ctx.req = Readable.from([body]);
  return true;
}

/**
 * The middleware: object PUTs and parts received whole first; conditional PUTs of objects, every write of an
 * object under its key's mutex.
 */
function conditionalWrites(): Middleware {
  const tails = new Map<string, Promise<void>>();
  /** Run `task` after every earlier one of `name`; the map holds only keys with writes in flight. */
  const serially = async (name: string, task: () => Promise<void>) => {
    const previous = tails.get(name) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    const tail = previous.then(() => mine);
    tails.set(name, tail);
    await previous;
    try {
      await task();
    } finally {
      done();
      if (tails.get(name) === tail) tails.delete(name);
    }
  };

  return async (ctx, next) => {
    const object = objectOf(ctx.path);
    const write = ctx.method === 'PUT' || ctx.method === 'DELETE';
    const query = new URLSearchParams(ctx.querystring);
    // Sub-resources (?tagging, ?uploadId…) and copies keep s3rver's own handling (the SDK adds ?x-id=…).
    const subresource = [...query.keys()].some((name) => name !== 'x-id');
    const copy = ctx.get('x-amz-copy-source') !== '';
    if (!object || !write || copy) return next();
    const part = query.has('partNumber') && query.has('uploadId');
    if (ctx.method === 'PUT' && (part || !subresource) && !(await receiveBody(ctx))) return;
    if (subresource) return next();
    const ifNoneMatch = ctx.method === 'PUT' ? ctx.get('if-none-match') : '';
    const ifMatch = ctx.method === 'PUT' ? ctx.get('if-match') : '';
    await serially(`${object.bucket}/${object.key}`, async () => {
      if (await conditionFails(ctx, object, { ifNoneMatch, ifMatch })) return;
      await next();
    });
  };
}

/** Whether a conditional PUT's condition does not hold (its answer then set): S3's answers. */
async function conditionFails(
  ctx: Context,
  object: { bucket: string; key: string },
  { ifNoneMatch, ifMatch }: { ifNoneMatch: string; ifMatch: string },
): Promise<boolean> {
  if (ifNoneMatch && ifNoneMatch.trim() !== '*') {
    answerError(
      ctx,
      501,
      'NotImplemented',
      'A header you provided implies functionality that is not implemented',
      {
        Header: 'If-None-Match',
      },
    );
    return true;
  }
  if (!ifNoneMatch && !ifMatch) return false;
  const exists = await ctx.store.existsObject(object.bucket, object.key);
  const failed = (condition: string) => {
    answerError(
      ctx,
      412,
      'PreconditionFailed',
      'At least one of the pre-conditions you specified did not hold',
      {
        Condition: condition,
      },
    );
    return true;
  };
  if (ifNoneMatch && exists) return failed('If-None-Match');
  if (ifMatch && !exists) {
    answerError(ctx, 404, 'NoSuchKey', 'The specified key does not exist.', { Key: object.key });
    return true;
  }
  if (ifMatch && !matches(ifMatch, (await ctx.store.getMetadata(object.bucket, object.key)).etag)) {
    return failed('If-Match');
  }
  return false;
}

/**
 * Put the middleware in front of `s3rver`'s router (idempotent). Call it before `run()`: Koa composes its
 * middleware when the server starts listening. `startS3` (servers.ts) does.
 * @example const server = new S3rver(options); installS3rverConditionalWrites(server); await server.run();
 */
export function installS3rverConditionalWrites(s3rver: S3rver): void {
  const app = s3rver as unknown as { [INSTALLED]?: true };
  if (app[INSTALLED]) return;
  // Last is s3rver's router; before it, its logging, XML encoding and virtual-host handling.
  beforeRouter(s3rver, conditionalWrites());
  app[INSTALLED] = true;
}
