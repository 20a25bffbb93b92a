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

export const FORMAT_VERSION = 2;
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
