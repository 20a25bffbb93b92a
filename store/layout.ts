/**
 * Where a published catalogue lives under its prefix (a local directory or `s3://bucket/prefix/`), and how
 * its objects are named:
 *   current.json                the pointer (store/pointer.ts): the live version and its index shards (written last)
 *   versions/<version>.json     an immutable copy of each published pointer
 *   versions/<version>.manifest what the version references (builder/publish/manifest.ts)
 *   versions/log.json           when each retained version became current and was superseded
 *   o/<objectId>                content-addressed immutable objects: list variants, details, index shards
 *   publish.lock                the publish lock (builder/publish/lock.ts)
 * Only the builder reads `versions/`; the proxy reads the pointer and objects. The builder writes nothing
 * else ({@link confineWrites}).
 */
import { hash } from 'node:crypto';
import type { WritableObjectStore } from './objects/interface.js';

/**
 * The format the builder writes. 3: list entries and segments record digests of the ranges the proxy reads
 * (store/segments.ts), and the proxy checks every read against them. A format-3 proxy still reads format 2
 * (the previous one; see {@link READABLE_FORMATS}), so it can be deployed before the first format-3 publish.
 */
export const FORMAT_VERSION = 3;
/**
 * The formats the proxy reads: this one, and format 2, whose list ranges of more than one segment carry no
 * digest (they are read unverified until a format-3 version is published; everything else is checked).
 */
export const READABLE_FORMATS = [2, FORMAT_VERSION] as const;
export type ReadableFormat = (typeof READABLE_FORMATS)[number];

/** Whether `format` is one this release reads (a pointer's, a shard's, a manifest's). */
export function isReadableFormat(format: unknown): format is ReadableFormat {
  return (READABLE_FORMATS as readonly unknown[]).includes(format);
}
export const POINTER_KEY = 'current.json';
export const OBJECTS_DIR = 'o/';
export const VERSIONS_DIR = 'versions/';

/**
 * The first 128 bits of the SHA-256 of `data`, base64url (22 characters): object ids, ETags, the builder's
 * record digests.
 */
export function digest128(data: string | Uint8Array): string {
  return hash('sha256', data, 'buffer').subarray(0, 16).toString('base64url');
}

/** Object id: the 128-bit digest of the object's bytes. */
export function objectIdFor(bytes: Uint8Array): string {
  return digest128(bytes);
}
export const OBJECT_ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;

/**
 * The object key of an object: where it is stored under `prefix`.
 * @example objectKeyFor('v1/', 'AAAAAAAAAAAAAAAAAAAAAA') // → 'v1/o/AAAAAAAAAAAAAAAAAAAAAA'
 */
export function objectKeyFor(prefix: string, objectId: string): string {
  return `${prefix}${OBJECTS_DIR}${objectId}`;
}

/** The publish lock (builder/publish/lock.ts): held by the one publish writing the catalogue. */
export const LOCK_KEY = 'publish.lock';

/** What a writer owns: whole keys, and prefixes under which every key is its own. */
export interface OwnedKeys {
  keys: readonly string[];
  prefixes: readonly string[];
}

/**
 * What the builder writes of a catalogue under `prefix`: its pointer and lock, its objects and version files —
 * nothing else, whatever else shares the bucket (uploads, reports, another catalogue).
 * @example catalogueWrites('catalogue/').prefixes // → ['catalogue/o/', 'catalogue/versions/']
 */
export function catalogueWrites(prefix: string): OwnedKeys {
  return {
    keys: [`${prefix}${POINTER_KEY}`, `${prefix}${LOCK_KEY}`],
    prefixes: [`${prefix}${OBJECTS_DIR}`, `${prefix}${VERSIONS_DIR}`],
  };
}

/**
 * Whether `key` is one `owned` names: one of its keys, or under one of its prefixes with no empty, `.` or
 * `..` segment after it (a local S3 or a directory would resolve `reports/../current.json` to the pointer).
 * @example isOwnedKey('reports/../current.json', { keys: [], prefixes: ['reports/'] }) // → false
 */
export function isOwnedKey(key: string, owned: OwnedKeys): boolean {
  if (owned.keys.includes(key)) return true;
  const prefix = owned.prefixes.find((candidate) => key.startsWith(candidate));
  if (prefix === undefined || key.length === prefix.length) return false;
  return key
    .slice(prefix.length)
    .split('/')
    .every((segment) => segment !== '' && segment !== '.' && segment !== '..' && !segment.includes('\\'));
}

/** A write the builder must never make: outside what it owns. A bug, never an outcome: thrown. */
export class UnownedWriteError extends Error {
  override name = 'UnownedWriteError';
}

/**
 * `store` with every write (put, conditional put, delete) checked against `owned` first: the one place that
 * asserts the builder writes only where it owns (the upload builder, the CLI's targets, npm start).
 * @example const store = confineWrites(bucketStore, catalogueWrites('catalogue/'));
 */
export function confineWrites(store: WritableObjectStore, owned: OwnedKeys): WritableObjectStore {
  const check = (key: string) => {
    if (!isOwnedKey(key, owned)) {
      throw new UnownedWriteError(
        `refused to write ${JSON.stringify(key)}: the builder writes only ${[...owned.keys, ...owned.prefixes.map((p) => `${p}…`)].join(', ')}`,
      );
    }
  };
  const confined: WritableObjectStore = {
    get: (key, options) => store.get(key, options),
    list: (prefix, options) => store.list(prefix, options),
    put: async (key, body, options) => {
      check(key);
      await store.put(key, body, options);
    },
    putIf: async (key, body, condition, options) => {
      check(key);
      return store.putIf(key, body, condition, options);
    },
    delete: async (keys, options) => {
      for (const key of keys) check(key);
      await store.delete(keys, options);
    },
  };
  if (store.collectTemporary) confined.collectTemporary = (options) => store.collectTemporary!(options);
  return confined;
}
