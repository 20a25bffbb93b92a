/**
 * S3 event notifications from s3rver 3.7.1, as S3 delivers them to a subscribed function: s3rver emits an
 * `event` for every object written or deleted (its S3Event shape is S3's), but names the completion of a
 * multipart upload `ObjectCreated:Post`, where S3 says `ObjectCreated:CompleteMultipartUpload` (what
 * `aws s3 cp` sends for files over 8 MB). A middleware marks the objects whose multipart upload is being
 * completed, and the event of such an object is renamed before it is passed on.
 */
import type S3rver from 's3rver';
import type { S3EventNotification } from '../builder/upload/event.js';

/** The part of Koa's context the middleware reads. */
interface Context {
  method: string;
  path: string;
  querystring: string;
}
type Middleware = (ctx: Context, next: () => Promise<void>) => Promise<void>;

/**
 * Pass every event of `s3rver` to `emit`, multipart completions named as S3 names them. Call it before `callback()` or
 * `run()` (Koa composes its middleware then).
 * @example const server = new S3rver(options); forwardS3rverEvents(server, (event) => queue.push(event)); await server.run();
 */
export function forwardS3rverEvents(s3rver: S3rver, emit: (notification: S3EventNotification) => void): void {
  const app = s3rver as unknown as {
    middleware: Middleware[];
    on(name: 'event', listener: (event: S3EventNotification) => void): void;
  };
  /** `bucket/key` of the multipart uploads being completed now (their event is emitted in between). */
  const completing = new Set<string>();
  app.middleware.splice(app.middleware.length - 1, 0, async (ctx, next) => {
    const match = /^\/([^/]+)\/(.+)$/.exec(ctx.path);
    const completion = ctx.method === 'POST' && match && new URLSearchParams(ctx.querystring).has('uploadId');
    if (!completion) return next();
    const name = `${decodeURIComponent(match[1]!)}/${decodeURIComponent(match[2]!)}`;
    completing.add(name);
    try {
      await next();
    } finally {
      completing.delete(name);
    }
  });
  app.on('event', (event) => {
    for (const record of event.Records) {
      const name = `${record.s3.bucket.name}/${record.s3.object.key}`;
      if (record.eventName === 'ObjectCreated:Post' && completing.has(name)) {
        record.eventName = 'ObjectCreated:CompleteMultipartUpload';
      }
    }
    emit(event);
  });
}
