/**
 * The keys and counters tables as both sides see them: the request path (proxy/) reads keys and meters into
 * the counters; key administration (admin/) writes keys and reads the counters; the CDK app (infra/) and
 * `createTables` (admin/tables.ts, for local servers) declare them from these names. Pure data: no AWS SDK, no
 * I/O, so the CDK app may import it (the one file of the product it imports).
 */

/**
 * Keys table. Two kinds of item, told apart by the partition key:
 * - a key: `key_hash` = SHA-256 of the key (64 hex characters); the key itself is never stored;
 * - an owner's ledger: `key_hash` = `owner#<owner>` (never a hex digest), the keys that count against the
 *   owner's cap (admin/ledger.ts). The request path never reads one: it looks keys up by their hash.
 */
export const KEYS_SCHEMA = {
  partitionKey: 'key_hash',
  /** Global secondary index: a key by its public id (projection ALL). */
  keyIdIndex: 'key_id-index',
  keyIdAttribute: 'key_id',
  /** Global secondary index: an owner's keys in the order they were created (projection ALL). */
  ownerIndex: 'owner-index',
  ownerAttribute: 'owner',
  ownerSortAttribute: 'created',
  /** Partition key prefix of an owner's ledger item. */
  ledgerPrefix: 'owner#',
  /**
   * On a key item: the owner's ledger version from which its ledger entry may be gone (admin/ledger.ts), so a
   * write that would make the key usable again over an older version fails. The request path ignores it.
   */
  fenceAttribute: 'ledger_fence',
} as const;

/**
 * Counters table. Two kinds of item, with a TTL each:
 * - a key's counters of one calendar month: `pk` = `<key id>#<YYYY-MM>` (tables/counters.ts);
 * - an idempotency record of the admin API: `pk` = `idempotency#<sha256 of the Idempotency-Key>`, kept 24 h.
 */
export const COUNTERS_SCHEMA = {
  partitionKey: 'pk',
  ttlAttribute: 'expires_at',
  /** Partition key prefix of an idempotency record (admin/idempotency.ts). */
  claimPrefix: 'idempotency#',
} as const;

/** How long a month's counter item outlives the month (usage stays readable for the following month). */
export const COUNTER_RETENTION_SECONDS = 35 * 24 * 3600;

export interface TableNames {
  keysTable: string;
  countersTable: string;
}

/**
 * How long the request path may go on with what it read of a key (its key cache; KEY_CACHE_TTL_MS and
 * KEY_NEGATIVE_CACHE_TTL_MS of the proxy): key administration states by when a change takes effect from them,
 * and the stack deploys them unless set.
 */
export const KEY_CACHE_DEFAULTS = { ttlMs: 30_000, negativeTtlMs: 10_000 } as const;

/** The longest either key-cache time may be set to (the proxy, key administration and the stack's settings). */
export const KEY_CACHE_MAX_MS = 3_600_000;
