/**
 * Gives s3rver 3.7.1 S3's conditional writes: PutObject with `If-None-Match: *` (create only) and
 * `If-Match: <etag>` (replace only that version), which the publish lock and the pointer write rely on.
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
 */
import { randomBytes } from 'node:crypto';
import type S3rver from 's3rver';

/** The part of Koa's context the middleware uses (s3rver is a Koa application). */
interface Context {
  method: string;
  path: string;
  querystring: string;
  status: number;
  type: string;
  body: unknown;
  req: { resume(): void };
  get(header: string): string;
  set(header: string, value: string): void;
  store: {
    existsObject(bucket: string, key: string): Promise<boolean>;
    getMetadata(bucket: string, key: string): Promise<{ etag: string }>;
  };
}
type Middleware = (ctx: Context, next: () => Promise<void>) => Promise<void>;

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

/**
 * The middleware: conditional PUTs of objects, every write of an object under its key's mutex.
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
    // Sub-resources (?tagging, ?uploadId…) and copies keep s3rver's own handling (the SDK adds ?x-id=…).
    const subresource = [...new URLSearchParams(ctx.querystring).keys()].some((name) => name !== 'x-id');
    if (!object || !write || subresource || ctx.get('x-amz-copy-source')) return next();
    const ifNoneMatch = ctx.method === 'PUT' ? ctx.get('if-none-match') : '';
    const ifMatch = ctx.method === 'PUT' ? ctx.get('if-match') : '';
    await serially(`${object.bucket}/${object.key}`, async () => {
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
        return;
      }
      if (ifNoneMatch || ifMatch) {
        const exists = await ctx.store.existsObject(object.bucket, object.key);
        if (ifNoneMatch && exists) {
          answerError(
            ctx,
            412,
            'PreconditionFailed',
            'At least one of the pre-conditions you specified did not hold',
            {
              Condition: 'If-None-Match',
            },
          );
          return;
        }
        if (ifMatch && !exists) {
          answerError(ctx, 404, 'NoSuchKey', 'The specified key does not exist.', { Key: object.key });
          return;
        }
        if (ifMatch && !matches(ifMatch, (await ctx.store.getMetadata(object.bucket, object.key)).etag)) {
          answerError(
            ctx,
            412,
            'PreconditionFailed',
            'At least one of the pre-conditions you specified did not hold',
            {
              Condition: 'If-Match',
            },
          );
          return;
        }
      }
      await next();
    });
  };
}

/**
 * Put the middleware in front of `s3rver`'s router (idempotent). Call it before `run()`: Koa composes its
 * middleware when the server starts listening. `startS3` (servers.ts) does.
 * @example const server = new S3rver(options); installS3rverConditionalWrites(server); await server.run();
 */
export function installS3rverConditionalWrites(s3rver: S3rver): void {
  const app = s3rver as unknown as { middleware: Middleware[]; [INSTALLED]?: true };
  if (app[INSTALLED]) return;
  // Last is s3rver's router; before it, its logging, XML encoding and virtual-host handling.
  app.middleware.splice(app.middleware.length - 1, 0, conditionalWrites());
  app[INSTALLED] = true;
}
