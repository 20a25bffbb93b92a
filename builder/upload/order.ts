/**
 * Which upload is the newest. Uploads are ordered by the time S3 completed them, to the second (the precision
 * S3's listings give), and uploads completed within the same second by their names: a publisher who may
 * upload twice in a second names uploads so that a later one sorts after (a UTC timestamp or a CI run number
 * first). An older upload never publishes over a newer one: the builder publishes an upload only while no
 * newer one is in the incoming prefix, checked before it starts and again once it holds the publish lock.
 */

/** An uploaded object as a listing shows it. */
export interface ListedUpload {
  key: string;
  lastModified: Date;
}

const second = (date: Date) => Math.floor(date.getTime() / 1000);

/**
 * Whether upload `a` is newer than upload `b`.
 * @example newerUpload({ key: 'incoming/2.tar.gz', lastModified: t }, { key: 'incoming/1.tar.gz', lastModified: t }) // → true
 */
export function newerUpload(a: ListedUpload, b: ListedUpload): boolean {
  const [sa, sb] = [second(a.lastModified), second(b.lastModified)];
  return sa !== sb ? sa > sb : a.key > b.key;
}

/**
 * The newest of `uploads` that is newer than `upload`, or undefined when `upload` is the newest.
 * @example newestAfter(mine, listing)?.key // → 'incoming/2026-06-01T1205Z.tar.gz'
 */
export function newestAfter(upload: ListedUpload, uploads: Iterable<ListedUpload>): ListedUpload | undefined {
  let newest: ListedUpload | undefined;
  for (const other of uploads) {
    if (other.key === upload.key || !newerUpload(other, upload)) continue;
    if (!newest || newerUpload(other, newest)) newest = other;
  }
  return newest;
}
