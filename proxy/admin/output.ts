/**
 * What `npm run keys` prints, as text and as JSON. One spelling of every field in both: snake_case, as the
 * API (`next_cursor`, `manufacturer_id`), the proxy's log lines (`key_id`, `request_id`) and the tables'
 * attributes (`key_id`, `limit_minute`) spell them — an operator who reads `key_id` in a log line greps,
 * filters (`jq '.key_id'`) and types the same name everywhere. Text output uses the same names as labels and
 * column headers. Pure: records in, text or plain objects out.
 */
import type { KeyRecord, Limits } from '../keys/interface.js';

/** A key record as the CLI shows it (never the hash); `last_used` only where it was read. */
export interface ShownKey {
  key_id: string;
  tier: KeyRecord['tier'];
  status: KeyRecord['status'];
  limits: Limits;
  created: string;
  expires: string | null;
  label: string | null;
  last_used?: string | null;
}

/**
 * The fields of `record` the CLI shows, in its spelling.
 * @example shownKey(record).key_id === record.keyId
 */
export function shownKey(record: KeyRecord, lastUsed?: string | null): ShownKey {
  return {
    key_id: record.keyId,
    tier: record.tier,
    status: record.status,
    limits: { ...record.limits },
    created: record.created,
    expires: record.expires ?? null,
    label: record.label ?? null,
    ...(lastUsed !== undefined && { last_used: lastUsed }),
  };
}

/**
 * Limits for humans.
 * @example limitsText({ minute: 60, month: 5000 }) // → '60/minute, 5000/month'
 */
export const limitsText = (limits: Limits) => `${limits.minute}/minute, ${limits.month}/month`;

/**
 * A time to the second, UTC.
 * @example isoSeconds(new Date('2026-11-24T15:32:10.123Z')) // → '2026-11-24T15:32:10Z'
 */
export const isoSeconds = (time: Date | number) => new Date(time).toISOString().replace(/\.\d{3}Z$/, 'Z');

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
    ['tier', key.tier],
    ['status', key.status],
    ['limits', limitsText(key.limits)],
    ['created', key.created],
    ['expires', key.expires ?? 'never'],
    ...(key.label === null ? [] : [['label', key.label] as [string, string]]),
  ];
}

/**
 * The `list` table: one row per key, headed by the field names.
 * @example keyTable([shownKey(record, null)]) // → 'key_id  tier  status  limits …\nkey_x   free  active  60/minute, 5000/month …'
 */
export function keyTable(keys: readonly ShownKey[]): string {
  const rows = [
    ['key_id', 'tier', 'status', 'limits', 'created', 'expires', 'last_used', 'label'],
    ...keys.map((key) => [
      key.key_id,
      key.tier,
      key.status,
      limitsText(key.limits),
      key.created,
      key.expires ?? 'never',
      key.last_used ?? '-',
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
