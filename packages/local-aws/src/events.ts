/**
 * S3 event notifications as the local S3 emits them: S3's shape (event version 2.x) for the fields s3rver fills,
 * keys encoded as S3 encodes them. Whoever consumes them declares what it reads (structurally the same).
 */

/** One record of an S3 event notification. */
export interface S3EventRecord {
  eventName: string;
  /** ISO time of the event, to the millisecond. */
  eventTime: string;
  /** Who made the request: `AWS:<access key id>`, `Anonymous` when unsigned. */
  userIdentity?: { principalId?: string };
  s3: {
    bucket: { name: string };
    object: {
      /** URL-encoded as in a query string (a space is `+`): {@link eventKeyOf}. */
      key: string;
      size?: number;
      eTag?: string;
      /** Orders the events of one key: a greater sequencer is a later write. */
      sequencer?: string;
    };
  };
}

/** An S3 event notification: what S3 sends a subscribed function, and the local S3 emits. */
export interface S3EventNotification {
  Records: S3EventRecord[];
}

/**
 * An object key as S3's event notifications carry it: each segment URL-encoded, a space as `+` (the local S3
 * sends its events so, as S3 does: s3rver-events.ts).
 * @example eventKeyOf('incoming/a b+c%.tar.gz') // → 'incoming/a+b%2Bc%25.tar.gz'
 */
export function eventKeyOf(key: string): string {
  return key
    .split('/')
    .map((segment) => encodeURIComponent(segment.replace(/\p{Surrogate}/gu, '\uFFFD')).replace(/%20/g, '+'))
    .join('/');
}
