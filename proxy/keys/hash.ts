/** The API key wire format, and what is stored instead of the key. */
import { hash, randomBytes } from 'node:crypto';
import { BoundedMemo } from '../cache/memo.js';

/** `pk_live_` followed by 22 base64url characters (spec §5). */
export const API_KEY_PATTERN = /^pk_live_[A-Za-z0-9_-]{22}$/;

/** SHA-256 of the key, hex: the only form in which a key is stored or compared. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** A fresh random key (132 bits of entropy). Shown once to the operator; never stored. */
export function generateApiKey(): string {
  return `pk_live_${randomBytes(17).toString('base64url').slice(0, 22)}`;
}

/** A fresh key id: short, random, not derived from the key, safe for logs and the admin CLI. */
export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('base64url').replace(/[-_]/g, 'x').slice(0, 10)}`;
}

/**
 * Hashes of the keys seen lately, so a busy key is hashed once per container, not per request. Bounded (a
 * {@link BoundedMemo}, emptied when full). It keeps recent keys in the container's memory, where the requests
 * that carried them already were; nothing of it is logged or sent.
 */
const KEY_HASH_MEMO_ENTRIES = 1_024;

/**
 * A {@link hashApiKey} that remembers the hashes of recent keys.
 * @example const hashOf = apiKeyHasher(); hashOf(key) === hashApiKey(key)
 */
export function apiKeyHasher(): (key: string) => string {
  const memo = new BoundedMemo<string>(KEY_HASH_MEMO_ENTRIES);
  return (key) => memo.get(key, hashApiKey);
}
