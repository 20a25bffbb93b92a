/**
 * One key brought over from the system that issued it before (`npm run keys -- import`, the admin API's
 * `POST /v1/keys/import`): a JSON object per line, checked as the admin API checks what it is sent, into the
 * key record it will be stored as. Pure: values in, a record or every problem out; a problem never holds what
 * the line held (a key, or its near miss, is a secret; the rest is not echoed either).
 *
 * The key is given as itself (`key`, for a system that kept it) or as the SHA-256 the keys table stores anyway
 * (`key_sha256`, for a system that kept only that): either way only the hash is stored. Its key id is derived
 * from the hash (tables/keys.ts importedKeyId), so a line imported twice is found, never written twice.
 */

import { textProblem } from '../../store/text.js';
import {
  API_KEY_PATTERN,
  FREE_TIER_LIMITS,
  hashApiKey,
  holdsKey,
  importedKeyId,
  KEY_HASH_PATTERN,
  type KeyRecord,
  type Limits,
  TIERS,
  type Tier,
} from '../../tables/keys.js';
import { NOT_A_KEY } from '../by-key.js';
import { FREE_TIER_FIXED } from '../output.js';
import {
  BOUNDS,
  checkInteger,
  checkLabel,
  checkOwner,
  KEY_PROBLEM,
  objectOf,
  type Parsed,
  Problems,
  parseInstant,
} from '../validate.js';

/** The fields a line may have; every other is refused (a misspelt one would be lost silently). */
export const IMPORT_FIELDS = [
  'key',
  'key_sha256',
  'tier',
  'owner',
  'label',
  'minute',
  'month',
  'expires',
  'created',
  'status',
  'external_id',
] as const;

/** At most this long: the old system's id of a key. */
const EXTERNAL_ID_LENGTH = 128;

/** How far ahead of the clock a line's `created` may be (another machine's clock), before it is a mistake. */
const CREATED_SKEW_MS = 5 * 60_000;

export interface ImportLine {
  /** The key as it will be stored: its hash, never the key; its key id derived from the hash. */
  record: KeyRecord;
  /** Whether the line said when the key was created (else it is the import's time, not compared again). */
  createdGiven: boolean;
  /** A partner key without its limits: it gets the partner defaults. */
  defaultLimits: boolean;
}

/** What every line of one import shares: its time (`imported`, and `created` where none is given). */
export interface LineContext {
  now: Date;
  partnerDefaults: Limits;
}

/** An optional field: absent, or null (what an export of an empty column gives), is not given. */
const given = (value: unknown) => value !== undefined && value !== null;

/** The key's hash, from `key` or `key_sha256` (exactly one of them). */
function keyHashOf(input: Record<string, unknown>, problems: Problems): string | undefined {
  const { key, key_sha256: sha } = input;
  if (given(key) && given(sha)) return problems.add('key', 'give key or key_sha256, not both');
  if (given(key)) {
    return typeof key === 'string' && API_KEY_PATTERN.test(key)
      ? hashApiKey(key)
      : problems.add('key', NOT_A_KEY);
  }
  if (given(sha)) {
    const hex = typeof sha === 'string' ? sha.toLowerCase() : '';
    if (KEY_HASH_PATTERN.test(hex)) return hex;
    return problems.add(
      'key_sha256',
      'must be the SHA-256 of the key: 64 hexadecimal characters (not shown)',
    );
  }
  return problems.add('key', 'is required: the key (key) or its SHA-256 in hexadecimal (key_sha256)');
}

/** Limits: a free key's are the published ones (given, they must be those); a partner key's, given or the defaults. */
function limitsOf(
  input: Record<string, unknown>,
  tier: Tier | undefined,
  { partnerDefaults, problems }: { partnerDefaults: Limits; problems: Problems },
): Limits {
  const minute = given(input.minute)
    ? checkInteger(input.minute, 'minute', BOUNDS.minute, problems)
    : undefined;
  const month = given(input.month) ? checkInteger(input.month, 'month', BOUNDS.month, problems) : undefined;
  if (tier === 'free') {
    const fixed = FREE_TIER_LIMITS;
    if ((minute ?? fixed.minute) !== fixed.minute || (month ?? fixed.month) !== fixed.month) {
      problems.add('tier', `${FREE_TIER_FIXED}: give the key tier partner for other limits`);
    }
    return { ...fixed };
  }
  return { minute: minute ?? partnerDefaults.minute, month: month ?? partnerDefaults.month };
}

/**
 * A time of the line: ISO 8601 with its zone, or a date alone, taken as midnight UTC (docs/keys.md says so: an
 * old system's export often has a day column); `at most` bounds it.
 */
function timeOf(value: unknown, field: string, bounds: { latest: number; why: string }, problems: Problems) {
  const time = typeof value === 'string' ? parseInstant(value, { utcDate: true }) : undefined;
  if (!time) {
    return problems.add(
      field,
      'must be an ISO 8601 time with its zone, e.g. 2026-12-31T00:00:00Z, or a date alone (midnight UTC)',
    );
  }
  if (time.getTime() > bounds.latest) return problems.add(field, bounds.why);
  return time.toISOString();
}

/**
 * The old system's id: a string or an integer, kept as text; printable (store/text.ts, the labels' rule), at
 * most 128 characters, no key.
 */
function externalIdOf(value: unknown, problems: Problems): string | undefined {
  const text = Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== 'string' || text.length < 1 || [...text].length > EXTERNAL_ID_LENGTH) {
    return problems.add(
      'external_id',
      `must be a string of 1 to ${EXTERNAL_ID_LENGTH} characters, or an integer`,
    );
  }
  const notText = textProblem(text);
  if (notText !== undefined) return problems.add('external_id', notText);
  if (holdsKey(text)) return problems.add('external_id', KEY_PROBLEM);
  return text;
}

/** `status`: active (the default) or revoked; a revoked key comes over revoked and stays refused. */
function statusOf(value: unknown, problems: Problems): KeyRecord['status'] | undefined {
  if (!given(value)) return 'active';
  if (value === 'active' || value === 'revoked') return value;
  return problems.add('status', 'must be active or revoked');
}

/**
 * One line's value (the JSON it holds) as the key it imports, or every problem of it.
 * @example parseImportLine({ key_sha256: 'ab…', tier: 'free', owner: 'user_42' }, { now, partnerDefaults })
 *   // → { ok: true, value: { record: { keyId: 'key_…', tier: 'free', … }, createdGiven: false, defaultLimits: false } }
 */
export function parseImportLine(value: unknown, context: LineContext): Parsed<ImportLine> {
  const problems = new Problems();
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.add('line', 'must be a JSON object: one key a line');
    return { ok: false, problems: problems.list };
  }
  const input = objectOf(value, IMPORT_FIELDS, problems);
  const { now } = context;
  const keyHash = keyHashOf(input, problems);
  const tier = TIERS.includes(input.tier as Tier) ? (input.tier as Tier) : undefined;
  if (!tier) problems.add('tier', `must be one of ${TIERS.join(', ')}`);
  const limits = limitsOf(input, tier, { partnerDefaults: context.partnerDefaults, problems });
  const owner = given(input.owner) ? checkOwner(input.owner, 'owner', problems) : undefined;
  const label = given(input.label) ? checkLabel(input.label, problems) : undefined;
  const far = now.getTime() + BOUNDS.expiryDays * 86_400_000;
  const expires = given(input.expires)
    ? timeOf(
        input.expires,
        'expires',
        { latest: far, why: `must be at most ${BOUNDS.expiryDays} days from now` },
        problems,
      )
    : undefined;
  const soon = now.getTime() + CREATED_SKEW_MS;
  const created = given(input.created)
    ? timeOf(input.created, 'created', { latest: soon, why: 'must not be in the future' }, problems)
    : undefined;
  const status = statusOf(input.status, problems);
  const externalId = given(input.external_id) ? externalIdOf(input.external_id, problems) : undefined;
  if (problems.list.length > 0) return { ok: false, problems: problems.list };
  const record: KeyRecord = {
    keyHash: keyHash!,
    keyId: importedKeyId(keyHash!),
    tier: tier!,
    status: status!,
    limits,
    created: created ?? now.toISOString(),
    imported: now.toISOString(),
    ...(owner !== undefined && { owner }),
    ...(label !== undefined && { label }),
    ...(expires !== undefined && { expires }),
    ...(externalId !== undefined && { externalId }),
  };
  const defaultLimits = tier === 'partner' && !given(input.minute) && !given(input.month);
  return { ok: true, value: { record, createdGiven: created !== undefined, defaultLimits } };
}

const sameTime = (a: string | undefined, b: string | undefined) =>
  a === b || (a !== undefined && b !== undefined && Date.parse(a) === Date.parse(b));

/**
 * Where the key already in the table differs from the line that would import it, by field name (never
 * values): empty when it is the key this line imported before. What the table holds is never overwritten; a
 * key changed here since (revoked, its limits or expiry changed, rolled) shows as a difference too.
 * @example differences(stored, line) // → ['status'] (revoked here since it was imported)
 */
export function differences(stored: KeyRecord, line: ImportLine): string[] {
  const { record } = line;
  const fields: [string, boolean][] = [
    ['key_id', stored.keyId === record.keyId],
    ['tier', stored.tier === record.tier],
    ['status', stored.status === record.status],
    ['minute', stored.limits.minute === record.limits.minute],
    ['month', stored.limits.month === record.limits.month],
    ['owner', stored.owner === record.owner],
    ['label', stored.label === record.label],
    ['expires', sameTime(stored.expires, record.expires)],
    ['external_id', stored.externalId === record.externalId],
    ['created', !line.createdGiven || sameTime(stored.created, record.created)],
  ];
  return fields.filter(([, same]) => !same).map(([field]) => field);
}
