/**
 * Key lookups on the request path. Keys are looked up by `sha256(key)` (hex); the plaintext key is never
 * stored or logged. The record and its format are the keys table's contract: tables/keys.ts.
 */
import type { KeyRecord } from '../../tables/keys.js';

export interface KeyStore {
  /** The key record for this hash, or `undefined` when none exists. Throws DependencyError on faults. */
  lookup(keyHash: string, options?: { signal?: AbortSignal }): Promise<KeyRecord | undefined>;
  /**
   * What `lookup` would answer right now without any I/O, for a store that holds it in memory: the record,
   * `null` for "no such key", `undefined` when only `lookup` can tell. The core asks this first, so the keys
   * of a warm container cost no dependency call.
   */
  known?(keyHash: string): KeyRecord | null | undefined;
}
