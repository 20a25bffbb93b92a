/**
 * Where a published catalogue lives under its prefix (a local directory or `s3://bucket/prefix/`), and how
 * its objects are named:
 *   current.json                the pointer (store/pointer.ts): the live version and its index shards (written last)
 *   versions/<version>.json     an immutable copy of each published pointer
 *   versions/<version>.manifest what the version references (builder/publish/manifest.ts)
 *   versions/log.json           when each retained version became current and was superseded
 *   o/<objectId>                content-addressed immutable objects: list variants, details, index shards
 * Only the builder reads `versions/`; the proxy reads the pointer and objects.
 */
import { hash } from 'node:crypto';

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
