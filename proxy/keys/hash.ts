/** The request path's key hashing: the hash of tables/keys.ts, remembered for the keys seen lately. */
import { hashApiKey } from '../../tables/keys.js';
import { BoundedMemo } from '../cache/memo.js';

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
