/**
 * API keys. Keys are looked up by `sha256(key)` (hex); the plaintext key is never stored or logged.
 * `keyId` is a short non-secret identifier, safe for logs and for the admin CLI.
 */
export type Tier = 'free' | 'partner';

export interface Limits {
  minute: number;
  month: number;
}

export interface KeyRecord {
  keyHash: string;
  keyId: string;
  tier: Tier;
  status: 'active' | 'revoked';
  limits: Limits;
  label?: string;
  /** ISO 8601 */
  created: string;
}

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

export const FREE_TIER_LIMITS: Limits = { minute: 60, month: 5000 };
