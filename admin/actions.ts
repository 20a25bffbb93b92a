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
  FREE_TIER_LIMITS,
  generateApiKey,
  generateKeyId,
  hashApiKey,
  type KeyRecord,
  keyAccepted,
  keyExpired,
  type Limits,
} from '../tables/keys.js';
import type { AdminTables } from './dynamo.js';
import { type AdminError, adminError } from './errors.js';
import { type Idempotency, recordClaim, releaseClaim } from './idempotency.js';
import { commitToLedger, rollForward } from './ledger.js';
import { limitsText } from './output.js';
import type { AdminSettings } from './settings.js';
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

/**
 * Make `record` exist: in its owner's ledger within the cap, then as a key item. Repeating it is harmless
 * (a replay, a call finishing an interrupted one). `setAside`: the key a roll replaces.
 */
async function materialise(
  ctx: AdminContext,
  record: KeyRecord,
  now: Date,
  setAside?: string,
): Promise<{ ok: true } | { ok: false; error: AdminError }> {
  if (record.owner !== undefined) {
    const committed = await commitToLedger(ctx.tables, record as KeyRecord & { owner: string }, {
      cap: ctx.settings.maxKeysPerOwner,
      now,
      ...(setAside && { setAside }),
    });
    if (!committed.ok) return capReached(record.owner, ctx.settings.maxKeysPerOwner);
  }
  const stored = await ctx.tables.createKey(record);
  if (stored !== 'created' && stored?.keyId !== record.keyId) {
    // 132 random bits never collide in practice; if they did, failing beats overwriting someone's key.
    throw Object.assign(new Error('a key with this hash exists already'), { name: 'KeyCollision' });
  }
  return { ok: true };
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
  let { key, record } = made as { key: string | undefined; record: KeyRecord };
  if (idempotency) {
    const claim = await recordClaim(ctx.tables, { idempotency, action: 'issue', record }, now);
    if (!claim.ok) return claim;
    if (claim.replay) {
      key = undefined;
      record = claim.record;
    }
  }
  const done = await materialise(ctx, record, now);
  if (!done.ok) {
    if (idempotency) await releaseClaim(ctx.tables, idempotency, record.keyId);
    return done;
  }
  return { ok: true, key, record, replayed: key === undefined };
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
  let oldExpires = input.oldKeyExpires;
  if (old.expires && Date.parse(old.expires) < oldExpires.getTime()) oldExpires = new Date(old.expires);
  const made = newRecord(
    {
      tier: old.tier,
      limits: { ...old.limits },
      rolledFrom: old.keyId,
      ...(old.owner !== undefined && { owner: old.owner }),
      ...(old.label !== undefined && { label: old.label }),
    },
    now,
  );
  let { key, record } = made as { key: string | undefined; record: KeyRecord };
  if (idempotency) {
    const claim = await recordClaim(
      ctx.tables,
      { idempotency, action: 'roll', record, oldKeyExpires: oldExpires },
      now,
    );
    if (!claim.ok) return claim;
    if (claim.replay) {
      key = undefined;
      record = claim.record;
      oldExpires = claim.oldKeyExpires ?? oldExpires;
    }
  }
  const release = async () => {
    if (idempotency && key !== undefined) await releaseClaim(ctx.tables, idempotency, record.keyId);
  };
  if (key !== undefined) {
    // A first call (a replay finishes what its first call began, whatever the old key has become since).
    if (old.rolledTo !== undefined && old.rolledTo !== record.keyId) {
      await release();
      return fail(adminError('key_already_rolled', `Key ${keyId} was already rolled to ${old.rolledTo}.`));
    }
    if (!keyAccepted(old, now.getTime())) {
      await release();
      return fail(
        adminError(
          'key_not_active',
          `Key ${keyId} is ${old.status === 'revoked' ? 'revoked' : 'expired'}: issue a new key instead.`,
        ),
      );
    }
  }
  const done = await materialise(ctx, record, now, old.keyId);
  if (!done.ok) {
    await release();
    return done;
  }
  const updated = await ctx.tables.updateKey(old.keyHash, 'rolling a key', {
    expression: 'SET rolled_to = :next, expires = :at',
    condition: '(attribute_not_exists(rolled_to) OR rolled_to = :next)',
    values: { ':next': { S: record.keyId }, ':at': { S: oldExpires.toISOString() } },
  });
  if (!updated) {
    // Another roll of the same key (without an Idempotency-Key) came first: this new key was never shown.
    await ctx.tables.updateKey(record.keyHash, 'withdrawing a key', {
      expression: 'SET #status = :revoked',
      names: { '#status': 'status' },
      values: { ':revoked': { S: 'revoked' } },
    });
    const winner = await ctx.tables.keyById(keyId);
    return fail(
      adminError(
        'key_already_rolled',
        `Key ${keyId} was already rolled${winner?.rolledTo ? ` to ${winner.rolledTo}` : ''}.`,
      ),
    );
  }
  return { ok: true, key, record, replayed: key === undefined, old: updated };
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
  // The first page finishes what interrupted calls left (admin/ledger.ts), so it shows what the cap counts.
  if (!input.cursor) await rollForward(ctx.tables, input.owner, new Set(), now);
  const page = await ctx.tables.ownerKeys(input.owner, input.limit, input.cursor);
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

/** Revoke a key. Every proxy container refuses it by `effectiveBy` (the key cache's bound). */
export async function revoke(
  ctx: AdminContext,
  keyId: string,
): Promise<Outcome<{ record: KeyRecord; already: boolean; effectiveBy: string }>> {
  const now = ctx.now();
  const found = await ctx.tables.keyById(keyId);
  if (!found) return noKey(keyId);
  const effectiveBy = by(now, ctx.settings.keyCacheTtlMs);
  if (found.status === 'revoked') return { ok: true, record: found, already: true, effectiveBy };
  const record = await ctx.tables.updateKey(found.keyHash, 'revoking a key', {
    expression: 'SET #status = :revoked',
    names: { '#status': 'status' },
    values: { ':revoked': { S: 'revoked' } },
  });
  return record ? { ok: true, record, already: false, effectiveBy } : noKey(keyId);
}

/**
 * Make a key usable again: through its owner's ledger first, so the cap holds. Used by enable and by an
 * expiry change that lifts a passed expiry.
 */
async function reinstate(ctx: AdminContext, found: KeyRecord, now: Date) {
  if (found.owner === undefined) return { ok: true as const };
  const committed = await commitToLedger(ctx.tables, found as KeyRecord & { owner: string }, {
    cap: ctx.settings.maxKeysPerOwner,
    now,
    touch: true,
  });
  return committed.ok ? committed : capReached(found.owner, ctx.settings.maxKeysPerOwner);
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
  const found = await ctx.tables.keyById(keyId);
  if (!found) return noKey(keyId);
  const effectiveBy = by(now, ctx.settings.negativeTtlMs);
  const expired = keyExpired(found, now.getTime());
  if (found.status === 'active') return { ok: true, record: found, already: true, expired, effectiveBy };
  if (!expired) {
    const room = await reinstate(ctx, found, now);
    if (!room.ok) return room;
  }
  const record = await ctx.tables.updateKey(found.keyHash, 'enabling a key', {
    expression: 'SET #status = :active',
    names: { '#status': 'status' },
    values: { ':active': { S: 'active' } },
  });
  return record ? { ok: true, record, already: false, expired, effectiveBy } : noKey(keyId);
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
      adminError(
        'invalid_request',
        `Key ${keyId} is a free-tier key: its limits are fixed (${limitsText(FREE_TIER_LIMITS)}).`,
        [{ field: 'tier', problem: 'free-tier limits are fixed: issue a partner key and revoke this one' }],
      ),
    );
  }
  const limits = { ...found.limits, ...input };
  const record = await ctx.tables.updateKey(found.keyHash, 'changing limits', {
    expression: 'SET limit_minute = :minute, limit_month = :month',
    values: { ':minute': { N: String(limits.minute) }, ':month': { N: String(limits.month) } },
  });
  return record
    ? { ok: true, record, previous: found.limits, effectiveBy: by(now, ctx.settings.keyCacheTtlMs) }
    : noKey(keyId);
}

/**
 * Set the time from which a key is refused (`invalid_key`, as if revoked), or remove it (`null`). Lifting a
 * passed expiry makes the key usable again, within its owner's cap. `effectiveBy`: when every proxy container
 * follows (refuses it from max(expiry, now + key cache bound); accepts it again within the negative bound).
 */
export async function setExpiry(
  ctx: AdminContext,
  keyId: string,
  input: ExpiryInput,
): Promise<Outcome<{ record: KeyRecord; effectiveBy: string }>> {
  const now = ctx.now();
  const found = await ctx.tables.keyById(keyId);
  if (!found) return noKey(keyId);
  if (found.status === 'active' && keyExpired(found, now.getTime())) {
    const room = await reinstate(ctx, found, now);
    if (!room.ok) return room;
  }
  const record = await ctx.tables.updateKey(
    found.keyHash,
    'setting an expiry',
    input.expires === null
      ? { expression: 'REMOVE expires' }
      : { expression: 'SET expires = :expires', values: { ':expires': { S: input.expires.toISOString() } } },
  );
  if (!record) return noKey(keyId);
  const effectiveBy =
    input.expires === null
      ? by(now, ctx.settings.negativeTtlMs)
      : new Date(Math.max(input.expires.getTime(), now.getTime() + ctx.settings.keyCacheTtlMs)).toISOString();
  return { ok: true, record, effectiveBy };
}

/** Requests counted this minute and month, the last use, and per-day counts of this and last month. */
export async function usage(ctx: AdminContext, keyId: string): Promise<Outcome<{ usage: KeyUsage }>> {
  const found = await ctx.tables.keyById(keyId);
  if (!found) return noKey(keyId);
  return { ok: true, usage: await readUsage(ctx.tables, found, ctx.now()) };
}

/**
 * Give a key that has none an owner (keys issued before owners existed; the operator's CLI). A usable key
 * enters the owner's ledger first, within the cap.
 */
export async function assignOwner(
  ctx: AdminContext,
  keyId: string,
  owner: string,
): Promise<Outcome<{ record: KeyRecord; already: boolean }>> {
  const now = ctx.now();
  const found = await ctx.tables.keyById(keyId);
  if (!found) return noKey(keyId);
  if (found.owner === owner) return { ok: true, record: found, already: true };
  if (found.owner !== undefined) {
    return fail(
      adminError('owner_already_set', `Key ${keyId} belongs to ${found.owner}; roll it to move it.`),
    );
  }
  if (keyAccepted(found, now.getTime())) {
    const room = await reinstate(ctx, { ...found, owner }, now);
    if (!room.ok) return room;
  }
  const record = await ctx.tables.updateKey(found.keyHash, 'setting an owner', {
    expression: 'SET #owner = :owner',
    condition: 'attribute_not_exists(#owner)',
    names: { '#owner': 'owner' },
    values: { ':owner': { S: owner } },
  });
  return record ? { ok: true, record, already: false } : assignOwner(ctx, keyId, owner);
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
  const label = options.label ? ', label = :label' : '';
  const hash = hashApiKey(key);
  const record = await tables.updateKeyOrCreate(hash, 'registering a key', {
    expression: `SET key_id = if_not_exists(key_id, :id), created = if_not_exists(created, :created), tier = :tier, #status = :active, limit_minute = :minute, limit_month = :month${label} REMOVE expires`,
    names: { '#status': 'status' },
    values: {
      ':id': { S: generateKeyId() },
      ':created': { S: (options.now ?? new Date()).toISOString() },
      ':tier': { S: options.tier },
      ':active': { S: 'active' },
      ':minute': { N: String(options.limits.minute) },
      ':month': { N: String(options.limits.month) },
      ...(options.label ? { ':label': { S: options.label } } : {}),
    },
  });
  return record;
}
