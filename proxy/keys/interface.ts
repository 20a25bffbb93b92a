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
  /**
   * ISO 8601 time from which the key is refused like a revoked one (`invalid_key`); none: it never expires.
   * Set by the operator (`npm run keys -- expire`), e.g. for a trial or a key being rotated out.
   */
  expires?: string;
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

/**
 * Whether a key record is accepted at `nowMs`: active and not expired. An expired key is refused exactly as
 * a revoked one (`invalid_key`); the request path, the key cache and the admin CLI all ask this.
 * @example keyAccepted({ ...record, status: 'active', expires: '2026-01-01T00:00:00Z' }, Date.parse('2026-06-01')) === false
 */
export function keyAccepted(record: KeyRecord, nowMs: number): boolean {
  return record.status === 'active' && !keyExpired(record, nowMs);
}

/**
 * Whether the key's expiry (if any) has passed at `nowMs`.
 * @example keyExpired({ ...record, expires: '2026-01-01T00:00:00Z' }, Date.parse('2026-06-01')) === true
 */
export function keyExpired(record: KeyRecord, nowMs: number): boolean {
  return record.expires !== undefined && Date.parse(record.expires) <= nowMs;
}
