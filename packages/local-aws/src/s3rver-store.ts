/**
 * s3rver 3.7.1's filesystem store on a disk that fills up: an object is stored whole or not at all, a write
 * that fails is an answer (never a crash), and the last few megabytes stay for what finishes a publish cleanly.
 *
 * Why: s3rver writes an object's bytes straight into its file, then its metadata and MD5 beside it, with no
 * listener on the file stream's `error`. When the disk filled during an upload's publish, the stream's ENOSPC
 * was an uncaught error that ended the servers' thread, and `npm start` with it; it left objects half written
 * (bytes cut short, no metadata, no MD5) that every later listing tried to complete by writing their MD5 —
 * failing on the full disk, so the listing answered 500 and every full build failed; and the upload's report
 * could not be written either, so nothing said what had happened.
 *
 * How: each server's store is one of s3rver's filesystem stores with the write methods below of its own, put in
 * place of the one s3rver's constructor made (through internals.ts, which checks s3rver's version and layout
 * first; s3rver's own class is left as it is):
 * - **Whole or nothing.** PutObject, UploadPart and a copy's metadata are written into a staging folder of the
 *   bucket (`._S3rver_staging`, beside s3rver's own `._S3rver_uploads`; never listed), every byte flushed,
 *   then a commit record, then renamed into place: the metadata, the bytes, the MD5. Killed before the
 *   first rename, the key holds its old object and the next start removes what was staged; killed after it,
 *   the next start finishes the renames from the record ({@link cleanS3rverStaging}). The MD5 file is never
 *   removed first, so a reader never computes (and keeps) the MD5 of bytes a write is about to replace.
 * - **A failed write is an answer.** Every stream error rejects the write; ENOSPC (and EDQUOT) answers
 *   `507 InsufficientStorage`, as MinIO answers a full drive, with what to do.
 * - **Half-written objects are never listed.** An object whose metadata is missing or unreadable — what a write
 *   of an earlier version left — is removed where it is found and counts as absent; an MD5 that cannot be
 *   cached (a full disk) is still answered.
 * - **A reserve.** A write of bulk ({@link BulkKeys}; npm start: a catalogue's content objects, `o/…` at any
 *   depth, and uploads, `incoming/…`) that
 *   would leave less than {@link reserveBytes} free on the disk is refused (507) before a byte is written,
 *   so a publish that fills the disk fails with room left for its report, its lock, the pointer and version
 *   files, and the local DynamoDB's journal: `npm start` says what happened and keeps serving.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { link, mkdir, open, readdir, readFile, rename, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { type S3ErrorClass, type S3rverStore, s3rverStoreParts } from './internals.js';

/** The bucket's staging folder (s3rver names its own multipart folder `._S3rver_uploads`). */
const STAGING = '._S3rver_staging';

const MIB = 2 ** 20;

/**
 * The free space kept on the local S3's disk for what is not bulk: 5 % of the file system, at least 1 MiB and
 * at most 16 MiB (a report of 1,000 problems is about 200 kB; the local DynamoDB's journal grows by about
 * 100 bytes a request).
 * @example reserveBytes(40 * 2 ** 20) // → 2_097_152 (a 40 MiB disk keeps 2 MiB)
 */
export function reserveBytes(diskBytes: number): number {
  return Math.min(16 * MIB, Math.max(MIB, Math.floor(diskBytes * 0.05)));
}

/** Which keys are bulk, what the reserve is not for: those under one of `atRoot`, or one of `anyDepth` at any depth. */
export interface BulkKeys {
  /** Key prefixes, e.g. `incoming/`. */
  atRoot?: readonly string[];
  /** Key prefixes that count after any `/` too, e.g. `o/`: `o/abc` and `v1/o/abc`. */
  anyDepth?: readonly string[];
}

/**
 * Whether `key` is bulk by `bulk` (none is by default: every write may use the whole disk).
 * @example isBulk('v1/o/abc', { anyDepth: ['o/'] }) // → true
 */
export function isBulk(key: string, bulk: BulkKeys = {}): boolean {
  return (
    (bulk.atRoot ?? []).some((prefix) => key.startsWith(prefix)) ||
    (bulk.anyDepth ?? []).some((prefix) => key.startsWith(prefix) || key.includes(`/${prefix}`))
  );
}

/** What of s3rver's store the store's methods use. */
type Store = S3rverStore & { bulk?: BulkKeys };
interface S3ObjectLike {
  bucket: string;
  key: string;
  content: Buffer | Readable;
  metadata: Record<string, unknown>;
}
const full = (error: unknown) => ['ENOSPC', 'EDQUOT'].includes((error as { code?: string }).code ?? '');

/** The metadata s3rver keeps of a write (its putMetadata's choice): the allowed headers and `x-amz-meta-*`. */
function keptMetadata(
  metadata: Record<string, unknown>,
  allowed: readonly string[],
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(metadata).filter(([name]) => allowed.includes(name) || name.startsWith('x-amz-meta-')),
  );
}

/** Write `content` into `path` whole (every byte flushed), and its MD5 and size. */
async function writeWhole(content: Buffer | Readable, path: string): Promise<{ size: number; md5: string }> {
  const md5 = createHash('md5');
  let size = 0;
  const counting = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      md5.update(chunk);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  const source = Buffer.isBuffer(content) ? Readable.from([content]) : content;
  await pipeline(source, counting, createWriteStream(path));
  return { size, md5: md5.digest('hex') };
}

/** A staging area of one bucket: files made there are renamed into place, or removed. */
class Staged {
  readonly #files: string[] = [];
  private constructor(readonly directory: string) {}

  static async in(store: Store, bucket: string): Promise<Staged> {
    const directory = join(store.getBucketPath(bucket), STAGING);
    await mkdir(directory, { recursive: true });
    return new Staged(directory);
  }

  file(name: string): string {
    const path = join(this.directory, `${randomUUID()}.${name}`);
    this.#files.push(path);
    return path;
  }

  /** A staged file's name, as a commit record names it. */
  static nameOf(path: string): string {
    return basename(path);
  }

  /** Remove what was not renamed into place (a failed write). */
  async discard(): Promise<void> {
    await Promise.all(this.#files.map((path) => rm(path, { force: true })));
  }
}

/** Where an object's three files are. */
function placesOf(store: Store, at: { bucket: string; key: string }) {
  const body = store.getResourcePath(at.bucket, at.key, 'object');
  return { body, metadata: store.getResourcePath(at.bucket, at.key, 'metadata.json'), md5: `${body}.md5` };
}

/**
 * A staged write's commit record (`<id>.commit` in staging, written before the first rename): the key, and the
 * staged files (names in staging) that go to its bytes, metadata and MD5. Its metadata still staged tells that
 * nothing was renamed yet (not committed).
 */
interface CommitRecord {
  bucket: string;
  key: string;
  body?: string | undefined;
  metadata: string;
  md5: string;
}

/**
 * Rename what of a committed write is still staged into place: metadata, bytes, MD5 — so an object's bytes are
 * never there without its metadata (what only a write of an earlier version leaves, and is removed on sight).
 */
async function finish(store: Store, staging: string, record: CommitRecord): Promise<void> {
  const places = placesOf(store, record);
  for (const part of ['metadata', 'body', 'md5'] as const) {
    const staged = record[part];
    if (staged === undefined) continue;
    await rename(join(staging, staged), places[part]).catch((error: { code?: string }) => {
      if (error.code !== 'ENOENT') throw error; // renamed already (a recovery that ran before)
    });
  }
}

/**
 * Put a staged object in place. The commit record first, then the renames: killed after the first, the next
 * start finishes them from the record ({@link cleanS3rverStaging}), so bytes, ETag and headers never disagree
 * for longer than the renames take. A rename that fails half way removes the old MD5 (computed again from the
 * bytes there).
 */
async function commit(store: Store, staged: Staged, record: CommitRecord): Promise<void> {
  const places = placesOf(store, record);
  await mkdir(dirname(places.body), { recursive: true });
  const file = staged.file('commit');
  await writeFile(file, JSON.stringify(record));
  try {
    await finish(store, staged.directory, record);
  } catch (error) {
    await rm(places.md5, { force: true });
    throw error;
  }
  await rm(file, { force: true });
}

/** The answer to a write the disk has no room for. */
function insufficient(S3Error: S3ErrorClass, message: string): Error {
  const error = new S3Error('InsufficientStorage', message);
  error.status = 507;
  return error;
}

/** Refuse bulk that would eat into the reserve. */
async function checkRoom(store: Store, object: S3ObjectLike, S3Error: S3ErrorClass): Promise<void> {
  if (!isBulk(object.key, store.bulk)) return;
  const disk = await statfs(store.rootDirectory);
  const free = disk.bavail * disk.bsize;
  const reserve = reserveBytes(disk.blocks * disk.bsize);
  const size = Number(object.metadata['content-length'] ?? 0) || 0;
  if (free - size >= reserve) return;
  throw insufficient(
    S3Error,
    `The local S3's disk is nearly full: ${mb(free)} free in ${store.rootDirectory}, and it keeps ${mb(reserve)} for reports, locks and the local DynamoDB. Free some space (or use a data directory on a larger disk: CATALOGUE_LOCAL_DIR), then upload or publish again.`,
  );
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

/** An error that says the disk is full, for a write that ran out of space. */
function diskFull(store: Store, S3Error: S3ErrorClass, error: unknown): unknown {
  if (!full(error)) return error;
  return insufficient(
    S3Error,
    `No space left on the local S3's disk (${(error as { code: string }).code}) in ${store.rootDirectory}: nothing was stored. Free some space (or use a data directory on a larger disk: CATALOGUE_LOCAL_DIR), then try again.`,
  );
}

/** An object's metadata file, or undefined when it is missing or unreadable (a half-written object). */
async function storedMetadata(path: string): Promise<Record<string, unknown> | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT' || error instanceof SyntaxError) return undefined;
    throw error;
  }
}

const absent = () => Object.assign(new Error('no such object'), { code: 'ENOENT' });

/** Do `work` in a bucket's staging area: what it staged and did not put in place is removed if it fails. */
async function staging<T>(
  store: Store,
  at: { bucket: string; S3Error: S3ErrorClass },
  work: (staged: Staged) => Promise<T>,
): Promise<T> {
  const staged = await Staged.in(store, at.bucket);
  try {
    return await work(staged);
  } catch (error) {
    await staged.discard();
    throw diskFull(store, at.S3Error, error);
  }
}

/** An object's metadata as s3rver answers it; a half-written object (bytes, no metadata) is removed, absent. */
async function wholeMetadata(store: Store, bucket: string, key: string): Promise<Record<string, unknown>> {
  const body = store.getResourcePath(bucket, key, 'object');
  const size = await stat(body); // ENOENT: no such object
  const kept = await storedMetadata(store.getResourcePath(bucket, key, 'metadata.json'));
  if (!kept) {
    // Bytes without metadata: what a write of an earlier version left (a commit puts the metadata first).
    await Promise.all([rm(body, { force: true }), rm(`${body}.md5`, { force: true })]);
    throw absent();
  }
  return {
    ...kept,
    etag: JSON.stringify(await md5Of(body)),
    'last-modified': size.mtime.toUTCString(),
    'content-length': size.size,
  };
}

/** The store's methods, whole or nothing. */
function patchedMethods(S3Error: S3ErrorClass, allowed: readonly string[]) {
  const json = (metadata: Record<string, unknown>) =>
    JSON.stringify(keptMetadata(metadata, allowed), null, 2);
  return {
    async putObject(this: Store, object: S3ObjectLike) {
      await checkRoom(this, object, S3Error);
      return staging(this, { bucket: object.bucket, S3Error }, async (staged) => {
        const body = staged.file('object');
        const written = await writeWhole(object.content, body);
        const metadata = staged.file('metadata.json');
        await writeFile(metadata, json(object.metadata));
        const md5 = staged.file('md5');
        await writeFile(md5, written.md5);
        await commit(this, staged, {
          bucket: object.bucket,
          key: object.key,
          body: Staged.nameOf(body),
          metadata: Staged.nameOf(metadata),
          md5: Staged.nameOf(md5),
        });
        return written;
      });
    },

    putPart(this: Store, bucket: string, uploadId: string, part: number, content: Readable) {
      const path = join(this.getResourcePath(bucket, undefined, 'uploads'), uploadId, String(part));
      return staging(this, { bucket, S3Error }, async (staged) => {
        const body = staged.file('part');
        const written = await writeWhole(content, body);
        const md5 = staged.file('md5');
        await writeFile(md5, written.md5);
        await mkdir(dirname(path), { recursive: true });
        await rename(md5, `${path}.md5`);
        await rename(body, path);
        return written;
      });
    },

    putMetadata(this: Store, bucket: string, key: string, metadata: Record<string, unknown>, md5?: string) {
      return staging(this, { bucket, S3Error }, async (staged) => {
        const file = staged.file('metadata.json');
        await writeFile(file, json(metadata));
        if (md5 === undefined) return rename(file, this.getResourcePath(bucket, key, 'metadata.json'));
        const md5File = staged.file('md5');
        await writeFile(md5File, md5);
        await commit(this, staged, {
          bucket,
          key,
          metadata: Staged.nameOf(file),
          md5: Staged.nameOf(md5File),
        });
      });
    },

    getMetadata(this: Store, bucket: string, key: string) {
      return wholeMetadata(this, bucket, key);
    },
  };
}

/**
 * An object's MD5: its file, or computed from its bytes (an object an earlier version wrote without one) and
 * kept only if no write replaced the bytes meanwhile and none put its own MD5 first (an exclusive link), so a
 * reader never leaves a stale ETag beside new bytes; on a full disk it is answered all the same.
 */
async function md5Of(body: string): Promise<string> {
  try {
    return await readFile(`${body}.md5`, 'utf8');
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOENT') throw error;
  }
  const file = await open(body, 'r');
  const md5 = createHash('md5');
  let hashed: Awaited<ReturnType<typeof file.stat>>;
  try {
    hashed = await file.stat();
    for await (const chunk of file.createReadStream({ autoClose: false })) md5.update(chunk as Buffer);
  } finally {
    await file.close();
  }
  const digest = md5.digest('hex');
  const kept = `${body}.md5.${randomUUID()}`;
  try {
    const now = await stat(body);
    if (now.ino !== hashed.ino || now.dev !== hashed.dev) return digest;
    await writeFile(kept, digest);
    await link(kept, `${body}.md5`); // EEXIST: a write put its own first
  } catch {
    // Not kept: computed again next time.
  } finally {
    await rm(kept, { force: true });
  }
  return digest;
}

/**
 * A store for s3rver, of `directory`, that writes objects whole, answers a full disk and keeps a reserve from
 * `bulk` writes; `startS3` puts it in place of the one s3rver made.
 * @example replaceStore(s3rver, wholeStore(directory, { atRoot: ['incoming/'] }));
 */
export function wholeStore(directory: string, bulk: BulkKeys = {}): S3rverStore {
  const { Store: FilesystemStore, S3Error, allowed } = s3rverStoreParts();
  const store = new FilesystemStore(directory) as Store;
  Object.assign(store, patchedMethods(S3Error, allowed), { bulk });
  return store;
}

/**
 * Finish the writes a kill interrupted after their commit record (their bytes already in place), and remove
 * what the others left, in the staging folders of the buckets under `directory` (a start, before s3rver
 * serves).
 */
export async function cleanS3rverStaging(directory: string): Promise<void> {
  const { Store: FilesystemStore } = s3rverStoreParts();
  const buckets = await readdir(directory, { withFileTypes: true }).catch(() => []);
  for (const bucket of buckets.filter((entry) => entry.isDirectory())) {
    const staging = join(directory, bucket.name, STAGING);
    const names: string[] = await readdir(staging).catch(() => []);
    for (const name of names.filter((entry) => entry.endsWith('.commit'))) {
      const record = await readFile(join(staging, name), 'utf8')
        .then((text) => JSON.parse(text) as CommitRecord)
        .catch(() => undefined); // cut short: written before any rename, so nothing was committed
      if (!record || names.includes(record.metadata)) continue;
      await finish(new FilesystemStore(directory), staging, record);
    }
    await rm(staging, { recursive: true, force: true });
  }
}
