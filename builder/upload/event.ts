/**
 * S3 event notifications, as S3 delivers them to a Lambda function subscribed to the bucket and as the local
 * S3 of `npm start` emits them (@catalogue/local-aws's `onEvent`; its `eventKeyOf` encodes keys as S3 does): only the fields the upload builder reads.
 */

/** One record of an S3 event notification (event version 2.x). */
export interface S3EventRecord {
  eventName: string;
  /** ISO time of the event, to the millisecond. */
  eventTime: string;
  /** Who made the request: `AWS:<principal id>` (a role session: `AWS:AROA…:<session name>`). */
  userIdentity?: { principalId?: string };
  s3: {
    bucket: { name: string };
    object: {
      /** URL-encoded as in a query string (a space is `+`). */
      key: string;
      size?: number;
      eTag?: string;
      /** Orders the events of one key: a greater sequencer is a later write. */
      sequencer?: string;
    };
  };
}

/** An S3 event notification: what S3 sends a subscribed Lambda function, and s3rver emits. */
export interface S3EventNotification {
  Records: S3EventRecord[];
}

/**
 * The object key of a record, decoded as S3 encodes it (`+` for a space, `%XX` for the rest); undefined when
 * it is not a well-formed encoding (S3 never sends one; a forged or foreign event may).
 * @example objectKeyOf({ s3: { object: { key: 'incoming/a+b%2Bc.tar.gz' } } }) // → 'incoming/a b+c.tar.gz'
 */
export function objectKeyOf(record: Pick<S3EventRecord, 's3'>): string | undefined {
  const key = record.s3?.object?.key;
  if (typeof key !== 'string') return undefined;
  try {
    return decodeURIComponent(key.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** An ETag without its quotes: S3 events carry it bare, listings and reads quoted. */
export function bareEtag(etag: string): string {
  return etag.replace(/^"|"$/g, '');
}
