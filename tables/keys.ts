/**
 * A key as the keys table stores it, the key's wire format and its hash: what the request path (reads) and key
 * administration (writes) must agree on. Only a hash of a key is ever stored; `keyId` is a short non-secret
 * identifier, safe for logs and for the admin API.
 */
import { hash, randomBytes } from 'node:crypto';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { KEYS_SCHEMA } from './schema.js';

export type Item = Record<string, AttributeValue>;

export type Tier = 'free' | 'partner';
export const TIERS: readonly Tier[] = ['free', 'partner'];

export interface Limits {
  minute: number;
  month: number;
}

/** The published free-tier limits (docs/api.md#rate-limits); partner limits are stored per key. */
export const FREE_TIER_LIMITS: Limits = { minute: 60, month: 5000 };

export interface KeyRecord {
  keyHash: string;
  keyId: string;
  tier: Tier;
  status: 'active' | 'revoked';
  limits: Limits;
  label?: string;
  /**
   * The publisher's application's own user or organisation id the key belongs to. Keys issued before owners
   * existed have none: the request path accepts them as before; `npm run keys -- owner` gives them one.
   */
  owner?: string;
  /** ISO 8601 */
  created: string;
  /**
   * ISO 8601 time from which the key is refused like a revoked one (`invalid_key`); none: it never expires.
   */
  expires?: string;
  /** The key this one replaced (roll). */
  rolledFrom?: string;
  /** The key that replaced this one (roll); this one expires at `expires`. */
  rolledTo?: string;
  /** The id the system that issued it before gave it (import: `external_id`), kept as it was. */
  externalId?: string;
  /** ISO 8601 time at which it came over from that system (import); none: issued here. */
  imported?: string;
}

/**
 * The key item's attributes by the {@link KeyRecord} field they store: named here once, for the decoder and the
 * encoder below and for key administration's conditions and updates (admin/dynamo.ts). The key's hash, its id,
 * its owner and its creation time are the table's keys and indexes ({@link KEYS_SCHEMA}).
 */
export const KEY_ATTRIBUTES = {
  keyHash: KEYS_SCHEMA.partitionKey,
  keyId: KEYS_SCHEMA.keyIdAttribute,
  tier: 'tier',
  status: 'status',
  limitMinute: 'limit_minute',
  limitMonth: 'limit_month',
  label: 'label',
  owner: KEYS_SCHEMA.ownerAttribute,
  created: KEYS_SCHEMA.ownerSortAttribute,
  expires: 'expires',
  rolledFrom: 'rolled_from',
  rolledTo: 'rolled_to',
  externalId: 'external_id',
  imported: 'imported',
} as const;

/** `pk_live_` followed by 22 base64url characters (docs/api.md#authentication). */
export const API_KEY_PATTERN = /^pk_live_[A-Za-z0-9_-]{22}$/;

/**
 * Anything shaped like a key, and its near misses: `pk` and `live` (or `test`) in any case, joined by `_`, `-`
 * or nothing, then 16 or more base64url characters — a key typed, pasted or cut a little wrong is still a
 * secret. Percent-escapes are read first (`pk%5Flive%5F…`).
 */
const KEY_SHAPED = /pk[_-]?(?:live|test)[_-]?[A-Za-z0-9_-]{16,}/i;
const EVERY_KEY_SHAPED = new RegExp(KEY_SHAPED.source, 'gi');

const percentDecoded = (text: string) =>
  text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

/**
 * Whether `text` holds something shaped like an API key ({@link KEY_SHAPED}), as typed or percent-encoded.
 * Key administration refuses such a text where a key id, an owner or a label goes, before it is logged or
 * echoed: a key appears in the one answer that issues it, nowhere else.
 * @example holdsKey(`/v1/keys/pk_live_${'A'.repeat(22)}`) === true // a key, as typed
 * @example holdsKey(`owner=PK-LIVE-${'a'.repeat(17)}`) === true // a near miss of one
 * @example holdsKey('/v1/keys/key_3fG7xQ2mPa') === false
 */
export function holdsKey(text: string): boolean {
  return KEY_SHAPED.test(text) || (text.includes('%') && KEY_SHAPED.test(percentDecoded(text)));
}

/**
 * `text` with everything shaped like a key replaced by `[key redacted]` (percent-escapes read first where
 * that is what held one): what an audit line may show of a refused request's path.
 * @example redactKeys(`/v1/keys/pk_live_${'A'.repeat(22)}/revoke`) === '/v1/keys/[key redacted]/revoke'
 */
export function redactKeys(text: string): string {
  const plain = holdsKey(text) && !KEY_SHAPED.test(text) ? percentDecoded(text) : text;
  return plain.replace(EVERY_KEY_SHAPED, '[key redacted]');
}

/** `key_` followed by 10 letters and digits: the public id of a key. */
export const KEY_ID_PATTERN = /^key_[A-Za-z0-9]{10}$/;

/** SHA-256 of a key as the keys table stores it: 64 lower-case hexadecimal characters. */
export const KEY_HASH_PATTERN = /^[0-9a-f]{64}$/;

/** SHA-256 of the key, hex: the only form in which a key is stored or compared. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** A fresh random key (132 bits of entropy). Shown once, in the answer that issues it; never stored. */
export function generateApiKey(): string {
  return `pk_live_${randomBytes(17).toString('base64url').slice(0, 22)}`;
}

/** A fresh key id: short, random, not derived from the key, safe for logs and the admin API. */
export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('base64url').replace(/[-_]/g, 'x').slice(0, 10)}`;
}

/**
 * The key id of a key brought over from another system (import), derived from its hash: the same key always
 * gets the same id, so an import run again (or resumed after it was cut) finds what it wrote and writes
 * nothing twice. Ten letters and digits of SHA-256 over a fixed prefix and the hash: nothing of the key or its
 * hash can be read back from it, and it looks like every other key id.
 * @example importedKeyId('9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08') // → 'key_…' (always the same)
 */
export function importedKeyId(keyHash: string): string {
  const digest = hash('sha256', `catalogue-read-api imported key ${keyHash}`, 'base64url');
  return `key_${digest.replace(/[-_]/g, 'x').slice(0, 10)}`;
}

// Declared with the tables' schema, so that infra/ (which may import only that file) deploys the same defaults.
export { KEY_CACHE_DEFAULTS, KEY_CACHE_MAX_MS } from './schema.js';

/**
 * Whether a key record is accepted at `nowMs`: active and not expired. An expired key is refused exactly as
 * a revoked one (`invalid_key`); the request path, the key cache and key administration all ask this.
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

/** The record's optional text fields, each stored as its attribute when present, absent when not. */
const OPTIONAL_FIELDS = [
  'label',
  'owner',
  'expires',
  'rolledFrom',
  'rolledTo',
  'externalId',
  'imported',
] as const;

/**
 * The key record stored in `item`, or `undefined` when the item is not a well-formed key record.
 * @example keyRecordFromItem({ key_hash: { S: 'ab…' }, key_id: { S: 'key_x' }, … })?.tier === 'free'
 */
export function keyRecordFromItem(item: Item): KeyRecord | undefined {
  const A = KEY_ATTRIBUTES;
  const text = (attribute: string) => item[attribute]?.S;
  const keyHash = text(A.keyHash);
  const keyId = text(A.keyId);
  const tier = text(A.tier) as Tier | undefined;
  const status = text(A.status);
  const minute = Number(item[A.limitMinute]?.N);
  const month = Number(item[A.limitMonth]?.N);
  const created = text(A.created);
  if (!keyHash || !keyId || !created || !tier || !TIERS.includes(tier)) return undefined;
  if (status !== 'active' && status !== 'revoked') return undefined;
  if (!Number.isSafeInteger(minute) || !Number.isSafeInteger(month)) return undefined;
  const record: KeyRecord = { keyHash, keyId, tier, status, limits: { minute, month }, created };
  const expires = text(A.expires);
  // An expiry that cannot be read must not turn into "never expires": the record is malformed.
  if (expires !== undefined && Number.isNaN(Date.parse(expires))) return undefined;
  for (const field of OPTIONAL_FIELDS) {
    const value = text(A[field]);
    if (value !== undefined) record[field] = value;
  }
  return record;
}

/**
 * The item that stores `record` (no plaintext key: the record holds only its hash).
 * @example keyItem(record).key_hash.S === record.keyHash
 */
export function keyItem(record: KeyRecord): Item {
  const A = KEY_ATTRIBUTES;
  const item: Item = {
    [A.keyHash]: { S: record.keyHash },
    [A.keyId]: { S: record.keyId },
    [A.tier]: { S: record.tier },
    [A.status]: { S: record.status },
    [A.limitMinute]: { N: String(record.limits.minute) },
    [A.limitMonth]: { N: String(record.limits.month) },
    [A.created]: { S: record.created },
  };
  for (const field of OPTIONAL_FIELDS) {
    const value = record[field];
    if (value !== undefined) item[A[field]] = { S: value };
  }
  return item;
}
