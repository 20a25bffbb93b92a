/**
 * Key administration's actions — issue, list, get, revoke, enable, limits, expiry, roll, usage (and, for the
 * operator's CLI, owner and register) — written once for the admin API (admin/http/) and `npm run keys`
 * (admin/cli.ts). Inputs are checked values (admin/validate.ts); outcomes are values: `{ ok: true, … }` or an
 * {@link AdminError}. Only table faults are thrown (AdminTableError: the API's 503). Only key hashes are
 * written; a key's plaintext exists in the answer that issues it and nowhere else.
 *
 * Nothing is half written without transactions (dynalite has none): a new key goes into its owner's ledger
 * first and its key item second (admin/ledger.ts: an interrupted call is rolled forward by the next one), and
 * a retried issue or roll with the same Idempotency-Key finds its record (admin/idempotency.ts) and repeats
 * only the writes that are missing.
 */
import {
  generateApiKey,
  generateKeyId,
  hashApiKey,
  type KeyRecord,
  keyAccepted,
  keyExpired,
  type Limits,
} from '../tables/keys.js';
import type { AdminTables, KeyGuard } from './dynamo.js';
import { type AdminError, adminError, ContentionError } from './errors.js';
import { type Idempotency, recordClaim, releaseClaim } from './idempotency.js';
import {
  commitToLedger,
  dropLostRolls,
  type Replaces,
  rollForward,
  type Written,
  writeKey,
} from './ledger.js';
import { FREE_TIER_FIXED } from './output.js';
import type { AdminSettings } from './settings.js';
import { liftStop, stopKey } from './stop.js';
import { type KeyUsage, lastUsed, readUsage } from './usage.js';
import type { ExpiryInput, IssueInput, LimitsInput, ListInput, RollInput } from './validate.js';

export interface AdminContext {
  tables: AdminTables;
  settings: AdminSettings;
  now: () => Date;
}

export type Outcome<T> = ({ ok: true } & T) | { ok: false; error: AdminError };

const fail = (error: AdminError): { ok: false; error: AdminError } => ({ ok: false, error });
const noKey = (keyId: string) => fail(adminError('key_not_found', `No key ${keyId}.`));
const capReached = (owner: string, cap: number) =>
  fail(
    adminError(
      'owner_key_limit_reached',
      `Owner ${owner} already holds ${cap} usable keys (the cap): revoke one, or let one expire, first.`,
    ),
  );

/** When a change is seen by every proxy container: now + the key cache's bound. */
const by = (now: Date, ms: number) => new Date(now.getTime() + ms).toISOString();

/** A key the caller may still see (issue, roll): the key is in `key` only on the answer that made it. */
export interface Issued {
  /** The key itself: only in the first answer; undefined in a replay. */
  key: string | undefined;
  record: KeyRecord;
  /** A replay of an earlier call with the same Idempotency-Key: the same key id, no key. */
  replayed: boolean;
}

function newRecord(
  fields: Pick<KeyRecord, 'tier' | 'limits'> & Partial<KeyRecord>,
  now: Date,
): { key: string; record: KeyRecord } {
  const key = generateApiKey();
  const record: KeyRecord = {
    keyHash: hashApiKey(key),
    keyId: generateKeyId(),
    status: 'active',
    created: now.toISOString(),
    ...fields,
  };
  return { key, record };
}

/** What issue and roll were asked to create: the key (undefined in a replay) and its record. */
interface Planned {
  key: string | undefined;
  record: KeyRecord;
  /** roll: when the key it replaces ends (a replay's: its first call's). */
  oldKeyExpires?: Date | undefined;
}

/**
 * Record what the call creates under its Idempotency-Key, or find what an earlier call with it created: then
 * this call is a replay of that one, and answers without the key.
 */
async function claimed(
  ctx: AdminContext,
  planned: Planned & { key: string },
  claim: { idempotency: Idempotency | undefined; action: 'issue' | 'roll'; now: Date },
): Promise<Outcome<Planned>> {
  const { idempotency, action, now } = claim;
  if (!idempotency) return { ok: true, ...planned };
  const { record, oldKeyExpires } = planned;
  const found = await recordClaim(ctx.tables, { idempotency, action, record, oldKeyExpires }, now);
  if (!found.ok) return found;
  if (!found.replay) return { ok: true, ...planned };
  return {
    ok: true,
    key: undefined,
    record: found.record,
    oldKeyExpires: found.oldKeyExpires ?? oldKeyExpires,
  };
}

/**
 * Make `record` exist: its entry in its owner's ledger within the cap, then its key writes (admin/ledger.ts).
 * Repeating it is harmless (a replay, a call finishing an interrupted one). `replaces`: the key a roll replaces.
 */
async function create(
  ctx: AdminContext,
  record: KeyRecord,
  at: { now: Date; replaces?: Replaces },
): Promise<Outcome<{ written: Written }>> {
  if (record.owner !== undefined) {
    const committed = await commitToLedger(ctx.tables, record as KeyRecord & { owner: string }, {
      mode: 'create',
      cap: ctx.settings.maxKeysPerOwner,
      now: at.now,
      replaces: at.replaces,
    });
    if (!committed.ok) return capReached(record.owner, ctx.settings.maxKeysPerOwner);
  }
  return { ok: true, written: await writeKey(ctx.tables, record, at.replaces) };
}

/**
 * Issue a key for an owner. The answer holds the key once; a replay (same Idempotency-Key) holds the same key
 * id and record without it.
 * @example const outcome = await issue(ctx, { owner: 'user_42', tier: 'free', limits: FREE_TIER_LIMITS });
 */
export async function issue(
  ctx: AdminContext,
  input: IssueInput,
  idempotency?: Idempotency,
): Promise<Outcome<Issued>> {
  const now = ctx.now();
  const made = newRecord(
    {
      ...(input.owner !== undefined && { owner: input.owner }),
      tier: input.tier,
      limits: { ...input.limits },
      ...(input.label !== undefined && { label: input.label }),
      ...(input.expires && { expires: input.expires.toISOString() }),
    },
    now,
  );
  const planned = await claimed(ctx, made, { idempotency, action: 'issue', now });
  if (!planned.ok) return planned;
  const { key, record } = planned;
  const done = await create(ctx, record, { now });
  if (!done.ok) {
    if (idempotency) await releaseClaim(ctx.tables, idempotency, record.keyId);
    return done;
  }
  return { ok: true, key, record, replayed: key === undefined };
}

/** Why a key cannot be rolled now (a first call; a replay finishes what its first call began). */
function unrollable(old: KeyRecord, next: string, now: Date): { ok: false; error: AdminError } | undefined {
  if (old.rolledTo !== undefined && old.rolledTo !== next) {
    return fail(adminError('key_already_rolled', `Key ${old.keyId} was already rolled to ${old.rolledTo}.`));
  }
  if (!keyAccepted(old, now.getTime())) {
    const state = old.status === 'revoked' ? 'revoked' : 'expired';
    return fail(adminError('key_not_active', `Key ${old.keyId} is ${state}: issue a new key instead.`));
  }
  return undefined;
}

/**
 * Another roll of the same key came first (admin/ledger.ts, *Rolls that lose*): this roll's key was never
 * created and never will be, so its ledger entry and its Idempotency-Key record go too — the refused roll
 * leaves nothing behind (a retry with the same Idempotency-Key is refused the same way).
 */
async function lostRoll(
  ctx: AdminContext,
  roll: { keyId: string; record: KeyRecord; idempotency: Idempotency | undefined },
): Promise<{ ok: false; error: AdminError }> {
  const { keyId, record, idempotency } = roll;
  if (record.owner !== undefined) await dropLostRolls(ctx.tables, record.owner, [record.keyId]);
  if (idempotency) await releaseClaim(ctx.tables, idempotency, record.keyId);
  const winner = await ctx.tables.keyById(keyId);
  const to = winner?.rolledTo ? ` to ${winner.rolledTo}` : '';
  return fail(adminError('key_already_rolled', `Key ${keyId} was already rolled${to}.`));
}

/**
 * Roll a key: a new key for the same owner, tier, limits and label; the old one expires at `oldKeyExpires`
 * (or earlier, if it was to expire earlier) and names its successor. Both are listed until then.
 */
export async function roll(
  ctx: AdminContext,
  keyId: string,
  input: RollInput,
  idempotency?: Idempotency,
): Promise<Outcome<Issued & { old: KeyRecord }>> {
  const now = ctx.now();
  const old = await ctx.tables.keyById(keyId);
  if (!old) return noKey(keyId);
  const until = Math.min(input.oldKeyExpires.getTime(), Date.parse(old.expires ?? '9999-12-31T00:00:00Z'));
  const { key: fresh, record: successor } = newRecord(
    {
      tier: old.tier,
      limits: { ...old.limits },
      rolledFrom: old.keyId,
      ...(old.owner !== undefined && { owner: old.owner }),
      ...(old.label !== undefined && { label: old.label }),
    },
    now,
  );
  const made = { key: fresh, record: successor, oldKeyExpires: new Date(until) };
  const planned = await claimed(ctx, made, { idempotency, action: 'roll', now });
  if (!planned.ok) return planned;
  const { key, record, oldKeyExpires = made.oldKeyExpires } = planned;
  const release = async () => {
    if (idempotency && key !== undefined) await releaseClaim(ctx.tables, idempotency, record.keyId);
  };
  const refused = key === undefined ? undefined : unrollable(old, record.keyId, now);
  const replaces = { keyHash: old.keyHash, keyId: old.keyId, expires: oldKeyExpires.toISOString() };
  const done = refused ?? (await create(ctx, record, { now, replaces }));
  if (!done.ok) {
    await release();
    return done;
  }
  if (!done.written.ok) return lostRoll(ctx, { keyId, record, idempotency });
  return { ok: true, key, record, replayed: key === undefined, old: done.written.old! };
}

/** A key and, when asked, when it was last used. */
export async function get(
  ctx: AdminContext,
  keyId: string,
): Promise<Outcome<{ record: KeyRecord; lastUsed: string | null }>> {
  const record = await ctx.tables.keyById(keyId);
  if (!record) return noKey(keyId);
  const used = await lastUsed(ctx.tables, [record.keyId], ctx.now());
  return { ok: true, record, lastUsed: used.lastUsed.get(record.keyId) ?? null };
}

/**
 * One page of an owner's keys, oldest first, with their last use; `next` positions the following page.
 * Never a key or its hash.
 */
export async function list(
  ctx: AdminContext,
  input: ListInput,
): Promise<Outcome<{ records: KeyRecord[]; lastUsed: Map<string, string>; next: KeyRecord | undefined }>> {
  const now = ctx.now();
  const read = () => ctx.tables.ownerKeys(input.owner, input.limit, input.cursor);
  const page = await (input.cursor ? read() : firstPage(ctx, input.owner, { now, read }));
  const used = await lastUsed(
    ctx.tables,
    page.records.map((record) => record.keyId),
    now,
  );
  return {
    ok: true,
    records: page.records,
    lastUsed: used.lastUsed,
    next: page.more ? page.records[page.records.length - 1] : undefined,
  };
}

/**
 * The first page of an owner's keys, once what interrupted calls left is finished (admin/ledger.ts), so it
 * shows what the cap counts: the ledger read beside the page, the page read again only when a key was written.
 */
async function firstPage(
  ctx: AdminContext,
  owner: string,
  at: { now: Date; read: () => ReturnType<AdminTables['ownerKeys']> },
): ReturnType<AdminTables['ownerKeys']> {
  const page = at.read();
  const listed = page.then(({ records }) => new Set(records.map((record) => record.keyId)));
  // Awaited only when the ledger has entries to check; a failed page is answered through `page` below.
  listed.catch(() => {});
  const [wrote, first] = await Promise.all([rollForward(ctx.tables, owner, { now: at.now, listed }), page]);
  return wrote ? at.read() : first;
}

/** What a revoke did: the key after it, whether it was revoked already, and when its refusal is certain. */
export interface Revoked {
  record: KeyRecord;
  already: boolean;
  /** From when every proxy container refuses it: the stop's write (admin/stop.ts), so at once. */
  effectiveBy: string;
  /** Until when its counters hold the stop; by then every key cache refuses it (`cacheBy`). */
  stoppedUntil: string;
  /** When the last key cache that held it accepted drops it (KEY_CACHE_TTL_MS): the bound without the stop. */
  cacheBy: string;
}

/**
 * Revoke a key: its status, then its counters' stop (admin/stop.ts), so every proxy container refuses it from
 * the moment this returns. Revoking again writes the stop again (a call whose stop failed is finished by its retry).
 */
export async function revoke(ctx: AdminContext, keyId: string): Promise<Outcome<Revoked>> {
  const found = await ctx.tables.keyById(keyId);
  return found ? revokeFound(ctx, found) : noKey(keyId);
}

/** Revoke `found`, a key as read (by id, or from the key itself: admin/by-key.ts). */
export async function revokeFound(ctx: AdminContext, found: KeyRecord): Promise<Outcome<Revoked>> {
  const now = ctx.now();
  const record = found.status === 'revoked' ? found : await ctx.tables.revokeKey(found.keyHash);
  if (!record) return noKey(found.keyId);
  const stoppedUntil = await stopKey(ctx.tables, record.keyId, now);
  return {
    ok: true,
    record,
    already: found.status === 'revoked',
    effectiveBy: ctx.now().toISOString(),
    stoppedUntil,
    cacheBy: by(now, ctx.settings.keyCacheTtlMs),
  };
}

/** Attempts of an action whose key write found the key changed by another call (it reads again). */
const KEY_ATTEMPTS = 5;

/**
 * Decide from the key as read and write; when the write's condition finds the key changed meanwhile by
 * another call (`decide` answers undefined), read it again (consistently) and decide again.
 */
async function onKey<T>(
  ctx: AdminContext,
  keyId: string,
  decide: (found: KeyRecord) => Promise<Outcome<T> | undefined>,
): Promise<Outcome<T>> {
  let found = await ctx.tables.keyById(keyId);
  for (let attempt = 0; attempt < KEY_ATTEMPTS; attempt++) {
    if (!found) return noKey(keyId);
    const outcome = await decide(found);
    if (outcome !== undefined) return outcome;
    found = (await ctx.tables.keysByHash([found.keyHash])).get(found.keyHash);
  }
  throw new ContentionError(`key ${keyId} kept changing while the call wrote it`);
}

/**
 * The guard of a write that makes `found` usable again (`reinstate`) or keeps it usable longer (`renew`):
 * its entry in its owner's ledger first, within the cap (admin/ledger.ts); none for a key without an owner,
 * which no ledger counts, as long as it stays without one.
 */
async function ledgerGuard(
  ctx: AdminContext,
  found: KeyRecord,
  at: { now: Date; mode: 'reinstate' | 'renew' },
): Promise<{ ok: true; guard: KeyGuard } | { ok: false; error: AdminError }> {
  if (found.owner === undefined) return { ok: true, guard: { unowned: true } };
  const committed = await commitToLedger(ctx.tables, found as KeyRecord & { owner: string }, {
    mode: at.mode,
    cap: ctx.settings.maxKeysPerOwner,
    now: at.now,
  });
  if (!committed.ok) return capReached(found.owner, ctx.settings.maxKeysPerOwner);
  return { ok: true, guard: { ledger: committed.version } };
}

/**
 * Make a revoked key active again (same id, limits and counters), within its owner's cap. Accepted by every
 * proxy container by `effectiveBy` (the negative cache's bound). An expired key stays refused until its expiry
 * changes: `expired` says so.
 */
export async function enable(
  ctx: AdminContext,
  keyId: string,
): Promise<Outcome<{ record: KeyRecord; already: boolean; expired: boolean; effectiveBy: string }>> {
  const now = ctx.now();
  const effectiveBy = by(now, ctx.settings.negativeTtlMs);
  const outcome = await enabled(ctx, keyId, { now, effectiveBy });
  // Active first, the revoke's stop lifted second (admin/stop.ts says why this order).
  if (outcome.ok) await liftStop(ctx.tables, keyId, now);
  return outcome;
}

function enabled(ctx: AdminContext, keyId: string, at: { now: Date; effectiveBy: string }) {
  const { now, effectiveBy } = at;
  return onKey(ctx, keyId, async (found) => {
    const expired = keyExpired(found, now.getTime());
    if (found.status === 'active') return { ok: true, record: found, already: true, expired, effectiveBy };
    // Enabled while expired, it stays refused; else it becomes usable: through its owner's ledger.
    const room = expired
      ? { ok: true as const, guard: { expiredAt: now } }
      : await ledgerGuard(ctx, found, { now, mode: 'reinstate' });
    if (!room.ok) return room;
    const record = await ctx.tables.activateKey(found.keyHash, room.guard);
    return record && { ok: true, record, already: false, expired, effectiveBy };
  });
}

/**
 * Change a partner key's limits (a limit not given stays); free-tier limits are the published ones. Used by
 * every proxy container by `effectiveBy`.
 */
export async function setLimits(
  ctx: AdminContext,
  keyId: string,
  input: LimitsInput,
): Promise<Outcome<{ record: KeyRecord; previous: Limits; effectiveBy: string }>> {
  const now = ctx.now();
  const found = await ctx.tables.keyById(keyId);
  if (!found) return noKey(keyId);
  if (found.tier === 'free') {
    return fail(
      adminError('invalid_request', `Key ${keyId} is a free-tier key: ${FREE_TIER_FIXED}.`, [
        { field: 'tier', problem: `${FREE_TIER_FIXED}: issue a partner key and revoke this one` },
      ]),
    );
  }
  const record = await ctx.tables.setKeyLimits(found.keyHash, { ...found.limits, ...input });
  return record
    ? { ok: true, record, previous: found.limits, effectiveBy: by(now, ctx.settings.keyCacheTtlMs) }
    : noKey(keyId);
}

/**
 * The guards of an expiry change: one that only brings the expiry forward needs the expiry still no earlier;
 * one that lifts it or puts it later may make the key usable longer, so it goes through the owner's ledger —
 * unless the key is revoked (it stays refused), and never for a key rolled away (it ends at its roll's expiry).
 */
async function expiryGuards(
  ctx: AdminContext,
  found: KeyRecord,
  at: { now: Date; expires: Date | null },
): Promise<{ ok: true; guards: KeyGuard[] } | { ok: false; error: AdminError }> {
  const { now, expires } = at;
  const later =
    expires === null || (found.expires !== undefined && expires.getTime() > Date.parse(found.expires));
  if (!later) return { ok: true, guards: [{ expiresFrom: expires.toISOString() }] };
  if (found.rolledTo !== undefined) {
    return fail(
      adminError(
        'key_already_rolled',
        `Key ${found.keyId} was rolled to ${found.rolledTo}: it ends at ${found.expires ?? 'its expiry'} or earlier (its expiry can be brought forward, not lifted or put later). Issue a new key instead.`,
      ),
    );
  }
  // Decided from a key not rolled away: the write lands only while it is still not.
  const mode = keyAccepted(found, now.getTime()) ? 'renew' : 'reinstate';
  const room =
    found.status === 'revoked'
      ? { ok: true as const, guard: { revoked: true as const } }
      : await ledgerGuard(ctx, found, { now, mode });
  return room.ok ? { ok: true, guards: [room.guard, { notRolled: true }] } : room;
}

/**
 * Set the time from which a key is refused (`invalid_key`, as if revoked), or remove it (`null`). Lifting a
 * passed expiry makes the key usable again, within its owner's cap. `effectiveBy`: when every proxy container
 * follows (refuses it from max(expiry, now + key cache bound); accepts it again within the negative bound).
 */
export function setExpiry(
  ctx: AdminContext,
  keyId: string,
  input: ExpiryInput,
): Promise<Outcome<{ record: KeyRecord; effectiveBy: string }>> {
  const now = ctx.now();
  const effectiveBy =
    input.expires === null
      ? by(now, ctx.settings.negativeTtlMs)
      : new Date(Math.max(input.expires.getTime(), now.getTime() + ctx.settings.keyCacheTtlMs)).toISOString();
  return onKey(ctx, keyId, async (found) => {
    const room = await expiryGuards(ctx, found, { now, expires: input.expires });
    if (!room.ok) return room;
    const record = await ctx.tables.setKeyExpiry(found.keyHash, input.expires, room.guards);
    return record && { ok: true, record, effectiveBy };
  });
}

/** Requests counted this minute and month, the last use, and per-day counts of this and last month. */
export async function usage(ctx: AdminContext, keyId: string): Promise<Outcome<{ usage: KeyUsage }>> {
  const found = await ctx.tables.keyById(keyId);
  if (!found) return noKey(keyId);
  return { ok: true, usage: await readUsage(ctx.tables, found, ctx.now()) };
}

/**
 * Give a key that has none an owner (keys issued before owners existed; the operator's CLI). A usable key
 * enters the owner's ledger first, within the cap; a refused one only while it stays refused.
 */
export function assignOwner(
  ctx: AdminContext,
  keyId: string,
  owner: string,
): Promise<Outcome<{ record: KeyRecord; already: boolean }>> {
  const now = ctx.now();
  return onKey(ctx, keyId, async (found) => {
    if (found.owner === owner) return { ok: true, record: found, already: true };
    if (found.owner !== undefined) {
      return fail(
        adminError('owner_already_set', `Key ${keyId} belongs to ${found.owner}; roll it to move it.`),
      );
    }
    const room = keyAccepted(found, now.getTime())
      ? await ledgerGuard(ctx, { ...found, owner }, { now, mode: 'reinstate' })
      : { ok: true as const, guard: { unusableAt: now } };
    if (!room.ok) return room;
    const record = await ctx.tables.setKeyOwner(found.keyHash, owner, room.guard);
    return record && { ok: true, record, already: false };
  });
}

/**
 * Make sure a given key exists, is active, unexpiring, and has this tier and limits (its key id and creation
 * time survive re-registration). For seeding known development keys (npm start, benchmarks), never for
 * customers: it bypasses owners and the cap.
 * @example await register(tables, devKey, { tier: 'free', limits: FREE_TIER_LIMITS });
 */
export async function register(
  tables: AdminTables,
  key: string,
  options: { tier: KeyRecord['tier']; limits: Limits; label?: string; now?: Date },
): Promise<KeyRecord> {
  const now = options.now ?? new Date();
  const record = await tables.registerKey(hashApiKey(key), {
    keyId: generateKeyId(),
    created: now.toISOString(),
    tier: options.tier,
    limits: options.limits,
    ...(options.label && { label: options.label }),
  });
  // Active again, as an enable makes it: a stop left by a revoke is lifted (admin/stop.ts).
  await liftStop(tables, record.keyId, now);
  return record;
}
