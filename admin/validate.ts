/**
 * What the key-administration actions accept: one parser per action's input, each answering every problem
 * at once (`{ ok: false, problems }`, the API's 400 `invalid_request`) or the checked value. Pure: JSON in,
 * values out. The bounds are in {@link BOUNDS}; the OpenAPI document (admin/openapi.json) states the same.
 */
import { createHash } from 'node:crypto';
import { textProblem } from '../store/text.js';
import { FREE_TIER_LIMITS, holdsKey, KEY_ID_PATTERN, type Limits, TIERS, type Tier } from '../tables/keys.js';
import type { FieldProblem } from './errors.js';
import { FREE_TIER_FIXED } from './output.js';

export const BOUNDS = {
  ownerLength: 128,
  labelLength: 100,
  /** One counter item takes about 1,000 writes a second: no key can use more than 60,000 in a minute. */
  minute: { min: 1, max: 60_000 },
  month: { min: 1, max: 1_000_000_000 },
  /** An expiry further out is a mistake (milliseconds for seconds, a year typed wrong). */
  expiryDays: 3_650,
  /** How long the key a roll replaces may go on. */
  rollGraceDays: 30,
  bodyBytes: 16 * 1024,
  /** Objects and arrays inside one another in a body: the API's go two deep (issue's `limits`). */
  bodyDepth: 8,
  idempotencyKeyLength: 255,
  pageSize: 100,
} as const;

/**
 * An owner: the application's own user or organisation id. Letters, digits and `. _ : @ + = | -`, starting
 * with a letter or digit: ids, UUIDs, `org:42`, e-mail addresses.
 */
export const OWNER_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@+=|-]*$/;

/** Printable ASCII but the comma (which joins a header sent twice), as Stripe's Idempotency-Key (a UUID). */
const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x2b\x2d-\x7e]+$/;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Why something shaped like a key is refused where it does not belong. */
export const KEY_PROBLEM =
  'holds something shaped like an API key: a key is a secret, shown once, never sent back (this one was not logged)';

export type Parsed<T> = { ok: true; value: T } | { ok: false; problems: FieldProblem[] };

export interface IssueInput {
  /** Required by the API; the operator's CLI may issue a key without one, as before owners existed. */
  owner?: string;
  tier: Tier;
  label?: string;
  limits: Limits;
  expires?: Date;
}

export interface RollInput {
  /** When the replaced key stops working. */
  oldKeyExpires: Date;
}

export type LimitsInput = Partial<Limits>;

export interface ExpiryInput {
  /** null: never. */
  expires: Date | null;
}

export interface ListInput {
  owner: string;
  limit: number;
  cursor?: { created: string; keyId: string };
}

const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|([+-])(\d{2}):(\d{2})))?$/;

/** A date alone: `2026-12-31`. */
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A time as the API takes it: ISO 8601 with its zone (`2026-12-31T18:00:00Z`, `2026-12-31T19:00+01:00`); with
 * `utcDate` (the operator's CLI, which says so in its help) also a date alone, as midnight UTC. undefined when
 * it is not one — and when it names no instant of the calendar: `2027-02-30`, `24:00`, a 61st second or an
 * offset past ±23:59 are refused, never rolled over into the next day or month as `Date.parse` would.
 * @example parseInstant('2026-12-31T00:00:00Z')?.toISOString() === '2026-12-31T00:00:00.000Z'
 * @example parseInstant('2026-12-31') === undefined
 * @example parseInstant('2026-12-31', { utcDate: true })?.toISOString() === '2026-12-31T00:00:00.000Z'
 * @example parseInstant('2027-02-30T00:00:00Z') === undefined
 */
export function parseInstant(raw: string, options: { utcDate?: boolean } = {}): Date | undefined {
  if (!options.utcDate && DATE_ONLY.test(raw)) return undefined;
  const m = INSTANT.exec(raw);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = Number((m[7] ?? '0').padEnd(3, '0'));
  const [offsetHours, offsetMinutes] = [Number(m[10] ?? 0), Number(m[11] ?? 0)];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return undefined;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined;
  const offset = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, millis);
  return new Date(utc.getTime() - offset);
}

export class Problems {
  readonly list: FieldProblem[] = [];
  add(field: string, problem: string): undefined {
    this.list.push({ field, problem });
    return undefined;
  }
}

/** The body as an object with only `allowed` fields; problems for anything else. */
export function objectOf(
  body: unknown,
  allowed: readonly string[],
  problems: Problems,
): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    problems.add('body', 'must be a JSON object');
    return {};
  }
  for (const name of Object.keys(body)) {
    if (!allowed.includes(name)) {
      problems.add(name, `unknown field (accepted: ${allowed.join(', ') || 'none'})`);
    }
  }
  return body as Record<string, unknown>;
}

export function checkOwner(value: unknown, field: string, problems: Problems): string | undefined {
  if (typeof value !== 'string') return problems.add(field, 'is required: a string');
  if (value.length < 1 || value.length > BOUNDS.ownerLength) {
    return problems.add(field, `must be 1 to ${BOUNDS.ownerLength} characters`);
  }
  if (!OWNER_PATTERN.test(value)) {
    return problems.add(
      field,
      'may hold letters, digits and . _ : @ + = | - and must start with a letter or digit',
    );
  }
  if (holdsKey(value)) return problems.add(field, KEY_PROBLEM);
  return value;
}

export function checkInteger(
  value: unknown,
  field: string,
  bounds: { min: number; max: number },
  problems: Problems,
) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < bounds.min || value > bounds.max) {
    return problems.add(field, `must be an integer from ${bounds.min} to ${bounds.max}`);
  }
  return value;
}

function checkFuture(value: unknown, field: string, now: Date, maxDays: number, problems: Problems) {
  if (typeof value !== 'string') return problems.add(field, 'must be an ISO 8601 time with its zone');
  if (DATE_ONLY.test(value) && parseInstant(value, { utcDate: true })) {
    // Midnight where? Refused rather than guessed: the caller says the zone.
    return problems.add(
      field,
      `must be a time with its zone, not a date alone: for midnight UTC write ${value}T00:00:00Z (or give your zone: ${value}T00:00:00+01:00)`,
    );
  }
  const time = parseInstant(value);
  if (!time) return problems.add(field, 'must be an ISO 8601 time with its zone, e.g. 2026-12-31T00:00:00Z');
  if (time.getTime() <= now.getTime()) return problems.add(field, 'must be in the future');
  if (time.getTime() > now.getTime() + maxDays * DAY_MS) {
    return problems.add(field, `must be at most ${maxDays} days from now`);
  }
  return time;
}

const result = <T>(problems: Problems, value: () => T): Parsed<T> =>
  problems.list.length ? { ok: false, problems: problems.list } : { ok: true, value: value() };

/**
 * A key's label: a non-empty string (trimmed) of printable text — the rule a snapshot's names follow too
 * (store/text.ts: no control, format, zero-width or bidirectional character, no lone surrogate, no blank
 * that is not a space, something visible) — at most BOUNDS.labelLength characters, holding no key.
 */
export function checkLabel(value: unknown, problems: Problems): string | undefined {
  const notText = typeof value === 'string' && value.trim().length > 0 ? textProblem(value) : undefined;
  if (typeof value !== 'string' || value.trim().length === 0) {
    problems.add('label', 'must be a non-empty string');
  } else if ([...value.trim()].length > BOUNDS.labelLength) {
    problems.add('label', `must be at most ${BOUNDS.labelLength} characters`);
  } else if (notText !== undefined) {
    problems.add('label', `must be printable text: it ${notText}`);
  } else if (holdsKey(value)) {
    problems.add('label', KEY_PROBLEM);
  } else return value.trim();
  return undefined;
}

/** An issue's `limits`: `{ minute?, month? }` within the bounds; a free key's only as the free tier's. */
function checkLimits(
  value: unknown,
  tier: Tier | undefined,
  problems: Problems,
): Partial<Limits> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.add('limits', 'must be an object { minute, month }');
    return undefined;
  }
  const given = value as Record<string, unknown>;
  for (const name of Object.keys(given)) {
    if (name !== 'minute' && name !== 'month') problems.add(`limits.${name}`, 'unknown field');
  }
  const limits: Partial<Limits> = {};
  if (given.minute !== undefined)
    limits.minute = checkInteger(given.minute, 'limits.minute', BOUNDS.minute, problems);
  if (given.month !== undefined)
    limits.month = checkInteger(given.month, 'limits.month', BOUNDS.month, problems);
  const fixed = FREE_TIER_LIMITS;
  if (
    tier === 'free' &&
    ((given.minute ?? fixed.minute) !== fixed.minute || (given.month ?? fixed.month) !== fixed.month)
  ) {
    problems.add('limits', `${FREE_TIER_FIXED}: issue a partner key`);
  }
  return limits;
}

/**
 * `POST /v1/keys`: `{ owner, tier, label?, limits?, expires? }`. Free keys carry the published limits;
 * partner keys the given ones or `partnerDefaults`.
 */
export function parseIssue(
  body: unknown,
  now: Date,
  partnerDefaults: Limits,
  options: { ownerRequired: boolean } = { ownerRequired: true },
): Parsed<IssueInput> {
  const problems = new Problems();
  const input = objectOf(body, ['owner', 'tier', 'label', 'limits', 'expires'], problems);
  const owner =
    input.owner === undefined && !options.ownerRequired
      ? undefined
      : checkOwner(input.owner, 'owner', problems);
  const tier = TIERS.includes(input.tier as Tier) ? (input.tier as Tier) : undefined;
  if (!tier) problems.add('tier', `must be one of ${TIERS.join(', ')}`);
  const label =
    input.label === undefined || input.label === null ? undefined : checkLabel(input.label, problems);
  const limits = input.limits === undefined ? undefined : checkLimits(input.limits, tier, problems);
  const expires =
    input.expires === undefined || input.expires === null
      ? undefined
      : checkFuture(input.expires, 'expires', now, BOUNDS.expiryDays, problems);
  return result(problems, () => ({
    ...(owner !== undefined && { owner }),
    tier: tier!,
    ...(label !== undefined && { label }),
    limits:
      tier === 'free'
        ? { ...FREE_TIER_LIMITS }
        : { minute: limits?.minute ?? partnerDefaults.minute, month: limits?.month ?? partnerDefaults.month },
    ...(expires && { expires }),
  }));
}

/** How long the key a roll replaces goes on when the roll does not say. */
export const ROLL_GRACE_DEFAULT_HOURS = 24;

/** `POST /v1/keys/{key_id}/roll`: `{ old_key_expires? }`, by default {@link ROLL_GRACE_DEFAULT_HOURS} from now. */
export function parseRoll(body: unknown, now: Date): Parsed<RollInput> {
  const problems = new Problems();
  const input = objectOf(body, ['old_key_expires'], problems);
  const at =
    input.old_key_expires === undefined
      ? new Date(now.getTime() + ROLL_GRACE_DEFAULT_HOURS * HOUR_MS)
      : checkFuture(input.old_key_expires, 'old_key_expires', now, BOUNDS.rollGraceDays, problems);
  return result(problems, () => ({ oldKeyExpires: at! }));
}

/** `POST /v1/keys/{key_id}/limits`: `{ minute?, month? }`, at least one. */
export function parseLimits(body: unknown): Parsed<LimitsInput> {
  const problems = new Problems();
  const input = objectOf(body, ['minute', 'month'], problems);
  const limits: LimitsInput = {};
  if (input.minute !== undefined)
    limits.minute = checkInteger(input.minute, 'minute', BOUNDS.minute, problems);
  if (input.month !== undefined) limits.month = checkInteger(input.month, 'month', BOUNDS.month, problems);
  if (input.minute === undefined && input.month === undefined && problems.list.length === 0) {
    problems.add('body', 'give minute, month or both');
  }
  return result(problems, () => limits);
}

/** `POST /v1/keys/{key_id}/expiry`: `{ expires: time | null }` (null: never). */
export function parseExpiry(body: unknown, now: Date): Parsed<ExpiryInput> {
  const problems = new Problems();
  const input = objectOf(body, ['expires'], problems);
  if (!('expires' in input)) problems.add('expires', 'is required: a time, or null for never');
  const expires =
    input.expires === null || input.expires === undefined
      ? null
      : checkFuture(input.expires, 'expires', now, BOUNDS.expiryDays, problems);
  return result(problems, () => ({ expires: expires ?? null }));
}

/** Revoke and enable take no fields: an empty body or `{}`. */
export function parseEmpty(body: unknown): Parsed<Record<string, never>> {
  const problems = new Problems();
  objectOf(body, [], problems);
  return result(problems, () => ({}));
}

/** A key id in a path; problems name it. */
export function parseKeyId(raw: string): Parsed<string> {
  const problems = new Problems();
  if (holdsKey(raw)) problems.add('key_id', KEY_PROBLEM);
  else if (!KEY_ID_PATTERN.test(raw)) problems.add('key_id', 'must be key_ followed by 10 letters or digits');
  return result(problems, () => raw);
}

/**
 * The cursor of an owner's listing: where the last page ended, opaque to the caller (base64url of
 * `<created> <key id>`; no hash, nothing secret).
 */
export function encodeCursor(position: { created: string; keyId: string }): string {
  return Buffer.from(`${position.created} ${position.keyId}`).toString('base64url');
}

/** Why an owner in a query holds a space: most often a `+` sent as it is. */
const OWNER_IN_QUERY =
  'holds a space: in a query string a + stands for a space, so write a plus sign in an owner as %2B (encodeURIComponent does); an owner holds no spaces';

/** `GET /v1/keys?owner=…&limit=…&cursor=…`. */
export function parseList(query: URLSearchParams): Parsed<ListInput> {
  const problems = new Problems();
  for (const name of new Set(query.keys())) {
    if (!['owner', 'limit', 'cursor'].includes(name))
      problems.add(`?${name}`, 'unknown parameter (accepted: owner, limit, cursor)');
    else if (query.getAll(name).length > 1) problems.add(`?${name}`, 'must be given once');
  }
  const rawOwner = query.get('owner') ?? undefined;
  // A query string is form-encoded: a `+` is a space there, so `?owner=a+b` asks for `a b`.
  const owner = rawOwner?.includes(' ')
    ? problems.add('?owner', OWNER_IN_QUERY)
    : checkOwner(rawOwner, '?owner', problems);
  let limit: number = BOUNDS.pageSize;
  const rawLimit = query.get('limit');
  if (rawLimit !== null) {
    if (!/^[1-9][0-9]{0,2}$/.test(rawLimit) || Number(rawLimit) > BOUNDS.pageSize) {
      problems.add('?limit', `must be an integer from 1 to ${BOUNDS.pageSize}`);
    } else limit = Number(rawLimit);
  }
  let cursor: ListInput['cursor'];
  const rawCursor = query.get('cursor');
  if (rawCursor !== null) {
    const [created, keyId, extra] = Buffer.from(rawCursor, 'base64url').toString('utf8').split(' ');
    if (!created || !parseInstant(created) || !keyId || !KEY_ID_PATTERN.test(keyId) || extra !== undefined) {
      problems.add('?cursor', 'is not a cursor this listing gave');
    } else cursor = { created, keyId };
  }
  return result(problems, () => ({ owner: owner!, limit, ...(cursor && { cursor }) }));
}

/**
 * An Idempotency-Key header: 1 to 255 printable ASCII characters but the comma, sent once. A header sent twice
 * reaches the API as one value joined by commas (HTTP's rule: Node's `, `, a function URL's `,`), so a comma
 * is what tells it: refused as sent twice, never as a bad character.
 */
export function parseIdempotencyKey(raw: string | undefined): Parsed<string | undefined> {
  const problems = new Problems();
  if (raw?.includes(',')) {
    problems.add(
      'Idempotency-Key',
      'must be sent once (a header sent twice arrives joined by commas, so a key holds no comma): send one key, a UUID',
    );
  } else if (
    raw !== undefined &&
    (raw.length > BOUNDS.idempotencyKeyLength || !IDEMPOTENCY_KEY_PATTERN.test(raw))
  ) {
    problems.add(
      'Idempotency-Key',
      `must be 1 to ${BOUNDS.idempotencyKeyLength} printable ASCII characters, no spaces or commas (a UUID)`,
    );
  }
  return result(problems, () => raw);
}

/**
 * What a request asked for, as a digest: a call retried with the same Idempotency-Key must ask for the same.
 * @example fingerprint('issue', { owner: 'u1', tier: 'free' }) === fingerprint('issue', { tier: 'free', owner: 'u1' })
 */
export function fingerprint(action: string, ...parts: unknown[]): string {
  const canonical = (value: unknown): unknown =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
        )
      : value;
  return createHash('sha256')
    .update(JSON.stringify([action, ...parts.map(canonical)]))
    .digest('base64url');
}
