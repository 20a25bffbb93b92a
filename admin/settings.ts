/**
 * The settings of key administration, read once from the environment by the admin function, `npm start` and
 * `npm run keys`; a malformed value throws a ConfigurationError naming the variable.
 */
import { type IntegerRule, integerSetting } from '../aws/env.js';
import { KEY_CACHE_DEFAULTS, KEY_CACHE_MAX_MS, type Limits } from '../tables/keys.js';
import type { TableNames } from '../tables/schema.js';
import { ConfigurationError } from './errors.js';

type Env = Record<string, string | undefined>;

/** Partner limits when none are given (overridable by PARTNER_LIMIT_MINUTE / PARTNER_LIMIT_MONTH). */
export const PARTNER_DEFAULT_LIMITS: Limits = { minute: 600, month: 1_000_000 };

/** Usable keys an owner may hold at once, by default (ADMIN_MAX_KEYS_PER_OWNER, 1–100). */
export const DEFAULT_MAX_KEYS_PER_OWNER = 10;

/**
 * How long one admin call may take, from its request to its answer (ADMIN_DEADLINE_MS, 100–20,000): after it
 * nothing more of the call is sent, and the API answers 503 with Retry-After. 8 s: an admin call is a dozen
 * DynamoDB round trips at most, and the admin function has 10 s (infra/admin.ts) to answer before Lambda cuts
 * it; at most 20 s, a third of the ledger's window (admin/ledger.ts IN_FLIGHT_MS), so a call on time never
 * meets a roll-forward of its own work.
 */
export const DEFAULT_DEADLINE_MS = 8_000;
const DEADLINE_MS = { min: 100, max: 20_000 };

/** The bounds of ADMIN_MAX_KEYS_PER_OWNER, and of a partner default limit. */
const MAX_KEYS_PER_OWNER = { min: 1, max: 100 };
const LIMIT = { min: 1, max: Number.MAX_SAFE_INTEGER };

export interface AdminSettings extends TableNames {
  /** Usable (active, unexpired) keys an owner may hold; a roll may hold one more until the old key expires. */
  maxKeysPerOwner: number;
  partnerDefaults: Limits;
  /** The proxy's key cache (KEY_CACHE_TTL_MS, KEY_NEGATIVE_CACHE_TTL_MS): when a change takes effect. */
  keyCacheTtlMs: number;
  negativeTtlMs: number;
  /** How long one admin call may take (ADMIN_DEADLINE_MS). */
  deadlineMs: number;
}

/** An integer setting by the one rule of every setting (aws/env.ts); a ConfigurationError naming it if malformed. */
function integer(env: Env, name: string, rule: IntegerRule): number {
  const read = integerSetting(env, name, rule);
  if (!read.ok) throw new ConfigurationError(read.problem);
  return read.value;
}

/**
 * Partner-tier defaults, from the environment where set.
 * @example partnerDefaults({ PARTNER_LIMIT_MINUTE: '1200' }) // { minute: 1200, month: 1000000 }
 */
export function partnerDefaults(env: Env = process.env): Limits {
  return {
    minute: integer(env, 'PARTNER_LIMIT_MINUTE', { fallback: PARTNER_DEFAULT_LIMITS.minute, ...LIMIT }),
    month: integer(env, 'PARTNER_LIMIT_MONTH', { fallback: PARTNER_DEFAULT_LIMITS.month, ...LIMIT }),
  };
}

/** How long the proxy's containers may go on with what they cached: `{ ttlMs, negativeTtlMs }`. */
export function cacheBounds(env: Env): { keyCacheTtlMs: number; negativeTtlMs: number } {
  const ttl = { min: 0, max: KEY_CACHE_MAX_MS };
  const keyCacheTtlMs = integer(env, 'KEY_CACHE_TTL_MS', { fallback: KEY_CACHE_DEFAULTS.ttlMs, ...ttl });
  const negative = integer(env, 'KEY_NEGATIVE_CACHE_TTL_MS', {
    fallback: KEY_CACHE_DEFAULTS.negativeTtlMs,
    ...ttl,
  });
  return { keyCacheTtlMs, negativeTtlMs: Math.min(keyCacheTtlMs, negative) };
}

/**
 * Every setting; throws a ConfigurationError naming the first missing or malformed variable.
 * @example adminSettings({ KEYS_TABLE: 'k', COUNTERS_TABLE: 'c' }).maxKeysPerOwner === 10
 */
export function adminSettings(env: Env): AdminSettings {
  const required = (name: string) => {
    const value = env[name]?.trim();
    if (!value) throw new ConfigurationError(`${name} is not set`);
    return value;
  };
  return {
    keysTable: required('KEYS_TABLE'),
    countersTable: required('COUNTERS_TABLE'),
    maxKeysPerOwner: integer(env, 'ADMIN_MAX_KEYS_PER_OWNER', {
      fallback: DEFAULT_MAX_KEYS_PER_OWNER,
      ...MAX_KEYS_PER_OWNER,
    }),
    partnerDefaults: partnerDefaults(env),
    ...cacheBounds(env),
    deadlineMs: integer(env, 'ADMIN_DEADLINE_MS', { fallback: DEFAULT_DEADLINE_MS, ...DEADLINE_MS }),
  };
}
