/** Key records in memory: tests, benchmarks and local runs without DynamoDB. */
import {
  FREE_TIER_LIMITS,
  generateKeyId,
  hashApiKey,
  type KeyRecord,
  type Limits,
  type Tier,
} from '../../tables/keys.js';
import type { KeyStore } from './interface.js';

export interface MemoryKeyOptions {
  tier?: Tier;
  status?: KeyRecord['status'];
  limits?: Limits;
  keyId?: string;
  label?: string;
  /** ISO 8601 expiry. */
  expires?: string;
}

/**
 * @example
 * const keys = new MemoryKeyStore();
 * const record = keys.add(devKey, { tier: 'partner', limits: { minute: 600, month: 1e6 } });
 * await keys.lookup(hashApiKey(devKey)); // → record
 */
export class MemoryKeyStore implements KeyStore {
  readonly #records = new Map<string, KeyRecord>();
  /** Lookups made (tests count them). */
  lookups = 0;

  /** Store a record for `key` (only its hash is kept) and return it. */
  add(key: string, options: MemoryKeyOptions = {}): KeyRecord {
    const record: KeyRecord = {
      keyHash: hashApiKey(key),
      keyId: options.keyId ?? generateKeyId(),
      tier: options.tier ?? 'free',
      status: options.status ?? 'active',
      limits: options.limits ?? FREE_TIER_LIMITS,
      created: new Date(0).toISOString(),
      ...(options.label === undefined ? {} : { label: options.label }),
      ...(options.expires === undefined ? {} : { expires: options.expires }),
    };
    this.#records.set(record.keyHash, record);
    return record;
  }

  /** Mark the key with this id revoked; `false` when there is none. */
  revoke(keyId: string): boolean {
    for (const record of this.#records.values()) {
      if (record.keyId === keyId) {
        record.status = 'revoked';
        return true;
      }
    }
    return false;
  }

  async lookup(keyHash: string): Promise<KeyRecord | undefined> {
    this.lookups++;
    const record = this.#records.get(keyHash);
    return record && { ...record, limits: { ...record.limits } };
  }
}
