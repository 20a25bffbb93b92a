/**
 * How a key is shown by the admin API and `npm run keys`: one spelling of every field in both, snake_case, as
 * the public API (`next_cursor`), the proxy's log lines (`key_id`, `request_id`) and the tables' attributes
 * (`key_id`, `limit_minute`) spell them. Never the key, never its hash. The CLI's text uses the same names as
 * labels and column headers. Pure: records in, plain objects or text out.
 */
import { FREE_TIER_LIMITS, type KeyRecord, keyExpired, type Limits } from '../tables/keys.js';

/** A key as shown (never the hash); `last_used` only where it was read. */
export interface ShownKey {
  key_id: string;
  owner: string | null;
  tier: KeyRecord['tier'];
  /** As stored: `active` or `revoked`. */
  status: KeyRecord['status'];
  /** Whether its expiry has passed: an expired key is refused like a revoked one. */
  expired: boolean;
  limits: Limits;
  label: string | null;
  created: string;
  expires: string | null;
  rolled_from: string | null;
  rolled_to: string | null;
  /** The id the system that issued it before gave it (import); null: issued here. */
  external_id: string | null;
  /** When it came over from that system (import); null: issued here. */
  imported: string | null;
  last_used?: string | null;
}

/**
 * The fields of `record` as shown, at `now`.
 * @example shownKey(record, new Date()).key_id === record.keyId
 */
export function shownKey(record: KeyRecord, now: Date, lastUsed?: string | null): ShownKey {
  return {
    key_id: record.keyId,
    owner: record.owner ?? null,
    tier: record.tier,
    status: record.status,
    expired: keyExpired(record, now.getTime()),
    limits: { ...record.limits },
    label: record.label ?? null,
    created: record.created,
    expires: record.expires ?? null,
    rolled_from: record.rolledFrom ?? null,
    rolled_to: record.rolledTo ?? null,
    external_id: record.externalId ?? null,
    imported: record.imported ?? null,
    ...(lastUsed !== undefined && { last_used: lastUsed }),
  };
}

/**
 * Limits for humans.
 * @example limitsText({ minute: 60, month: 5000 }) // → '60/minute, 5000/month'
 */
export const limitsText = (limits: Limits) => `${limits.minute}/minute, ${limits.month}/month`;

/**
 * The free tier's rule, worded once for the API's refusals, the CLI's and its help.
 * @example FREE_TIER_FIXED // → 'free-tier limits are fixed (60/minute, 5000/month)'
 */
export const FREE_TIER_FIXED = `free-tier limits are fixed (${limitsText(FREE_TIER_LIMITS)})`;

/**
 * A time to the second, UTC.
 * @example isoSeconds(new Date('2026-11-24T15:32:10.123Z')) // → '2026-11-24T15:32:10Z'
 */
export const isoSeconds = (time: Date | number | string) =>
  new Date(time).toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * `name: value` lines with the values aligned.
 * @example fieldLines([['key_id', 'key_x'], ['tier', 'free']]) // → 'key_id: key_x\ntier:   free'
 */
export function fieldLines(fields: readonly (readonly [string, string])[]): string {
  const width = Math.max(...fields.map(([name]) => name.length)) + 1;
  return fields.map(([name, value]) => `${`${name}:`.padEnd(width)} ${value}`).join('\n');
}

/** The text lines of one key, as `issue` and `usage` print them. */
export function keyFields(key: ShownKey): [string, string][] {
  return [
    ['key_id', key.key_id],
    ...(key.owner === null ? [] : [['owner', key.owner] as [string, string]]),
    ['tier', key.tier],
    ['status', key.status],
    ['limits', limitsText(key.limits)],
    ['created', key.created],
    ['expires', key.expires ?? 'never'],
    ...(key.label === null ? [] : [['label', key.label] as [string, string]]),
    ...(key.rolled_to === null ? [] : [['rolled_to', key.rolled_to] as [string, string]]),
    ...(key.external_id === null ? [] : [['external_id', key.external_id] as [string, string]]),
    ...(key.imported === null ? [] : [['imported', key.imported] as [string, string]]),
  ];
}

/**
 * The `list` table: one row per key, headed by the field names; `external_id` (the id an imported key had in
 * the system it came from) only when a key has one.
 * @example keyTable([shownKey(record, now, null)]) // → 'key_id  owner  tier  status  limits …\nkey_x   -      free  active  60/minute, 5000/month …'
 */
export function keyTable(keys: readonly ShownKey[]): string {
  const external = keys.some((key) => key.external_id !== null);
  const rows = [
    [
      'key_id',
      'owner',
      'tier',
      'status',
      'limits',
      'created',
      'expires',
      'last_used',
      ...(external ? ['external_id'] : []),
      'label',
    ],
    ...keys.map((key) => [
      key.key_id,
      key.owner ?? '-',
      key.tier,
      key.status,
      limitsText(key.limits),
      key.created,
      key.expires ?? 'never',
      key.last_used ?? '-',
      ...(external ? [key.external_id ?? '-'] : []),
      key.label ?? '',
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
