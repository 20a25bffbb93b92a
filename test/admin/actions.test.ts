/**
 * The admin core's actions (admin/actions.ts) against dynalite: changes after issue, owners and their cap
 * (exact under concurrency), rolls, Idempotency-Key replays (one key for concurrent calls), an interrupted
 * call rolled forward, and keys from before owners.
 */
import { hash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as actions from '../../admin/actions.js';
import { commitToLedger, IN_FLIGHT_MS } from '../../admin/ledger.js';
import { DynamoKeyStore } from '../../proxy/keys/dynamo.js';
import {
  FREE_TIER_LIMITS,
  generateKeyId,
  hashApiKey,
  type KeyRecord,
  keyAccepted,
} from '../../tables/keys.js';
import { COUNTERS_SCHEMA } from '../../tables/schema.js';
import {
  type AdminOptions,
  adminContext,
  issueKey,
  registerKey,
  revokeKey,
  setExpiry,
} from '../helpers/admin.js';
import { type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';

let db: DynamoFixture;
let admin: AdminOptions;
let store: DynamoKeyStore;
let ownerCount = 0;
/** A fresh owner per test, so caps do not mix. */
const owner = () => `user_${process.pid}_${++ownerCount}`;

beforeAll(async () => {
  db = await dynamoFixture();
  admin = { dynamo: db.dynamo, keysTable: db.keysTable, countersTable: db.countersTable };
  store = new DynamoKeyStore({ transport: db.transport, table: db.keysTable });
});
afterAll(async () => {
  await db?.dispose();
});

const free = (who: string) => ({ owner: who, tier: 'free' as const, limits: { ...FREE_TIER_LIMITS } });
const idOf = (outcome: unknown) => (outcome as { record: KeyRecord }).record.keyId;

describe('changing a key', () => {
  it('stores an expiry with the key, in its one write', async () => {
    const expires = new Date('2027-01-01T00:00:00Z');
    const { key, record } = await issueKey(admin, { tier: 'free', expires });
    expect(record.expires).toBe('2027-01-01T00:00:00.000Z');
    expect(await store.lookup(hashApiKey(key))).toEqual(record);
  });

  it('enables a revoked key again, keeping its id and limits; twice is harmless', async () => {
    const ctx = adminContext(admin);
    const { key, record } = await issueKey(admin, { tier: 'partner', limits: { minute: 9, month: 99 } });
    await revokeKey(admin, record.keyId);

    const enabled = await actions.enable(ctx, record.keyId);
    const again = await actions.enable(ctx, record.keyId);

    expect(enabled).toMatchObject({ ok: true, already: false, record: { ...record, status: 'active' } });
    expect(again).toMatchObject({ ok: true, already: true });
    expect(await store.lookup(hashApiKey(key))).toEqual(record);
    expect(await actions.enable(ctx, 'key_nosuchkey')).toMatchObject({
      ok: false,
      error: { code: 'key_not_found' },
    });
  });

  it("changes a partner key's limits, one or both, and reports the previous ones; free limits are fixed", async () => {
    const ctx = adminContext(admin);
    const { key, record } = await issueKey(admin, { tier: 'partner', limits: { minute: 600, month: 1000 } });
    const freeKey = await issueKey(admin, { tier: 'free' });

    const minute = await actions.setLimits(ctx, record.keyId, { minute: 1200 });
    const both = await actions.setLimits(ctx, record.keyId, { minute: 5, month: 7 });

    expect(minute).toMatchObject({
      ok: true,
      previous: { minute: 600, month: 1000 },
      record: { limits: { minute: 1200, month: 1000 } },
    });
    expect(both).toMatchObject({ ok: true, previous: { minute: 1200, month: 1000 } });
    expect((await store.lookup(hashApiKey(key)))?.limits).toEqual({ minute: 5, month: 7 });
    expect(await actions.setLimits(ctx, freeKey.record.keyId, { minute: 100 })).toMatchObject({
      ok: false,
      error: { code: 'invalid_request' },
    });
  });

  it('sets an expiry the request path honours, and removes it', async () => {
    const now = new Date('2026-11-24T00:00:00Z');
    const ctx = adminContext(admin, () => now);
    const { key, record } = await issueKey(admin, { tier: 'free' });
    const at = new Date('2026-12-31T00:00:00Z');

    const set = await actions.setExpiry(ctx, record.keyId, { expires: at });
    const looked = (await store.lookup(hashApiKey(key)))!;
    const removed = await actions.setExpiry(ctx, record.keyId, { expires: null });

    expect(set).toMatchObject({ ok: true, record: { expires: '2026-12-31T00:00:00.000Z' } });
    expect(keyAccepted(looked, at.getTime() - 1)).toBe(true);
    expect(keyAccepted(looked, at.getTime())).toBe(false);
    expect(removed.ok && removed.record.expires).toBeUndefined();
    expect(await store.lookup(hashApiKey(key))).toEqual(record);
  });

  it('re-registering a dev key removes its expiry (register makes it usable again)', async () => {
    const key = 'pk_live_XXXXXXXXXXXXXXXXXXXXXX';
    const first = await registerKey(admin, key, { tier: 'free' });
    await setExpiry(admin, first.keyId, new Date('2020-01-01T00:00:00Z'));
    const again = await registerKey(admin, key, { tier: 'free' });
    expect(again.expires).toBeUndefined();
    expect(keyAccepted(again, Date.now())).toBe(true);
  });
});

describe('owners and their cap', () => {
  it("lists an owner's keys oldest first, in pages, never another owner's", async () => {
    const ctx = adminContext(admin);
    const who = owner();
    const issued: string[] = [];
    for (let i = 0; i < 5; i++) issued.push(idOf(await actions.issue(ctx, free(who))));
    await actions.issue(ctx, free(owner()));

    const pages: string[][] = [];
    let cursor: { created: string; keyId: string } | undefined;
    do {
      const page = await actions.list(ctx, { owner: who, limit: 2, ...(cursor && { cursor }) });
      if (!page.ok) throw new Error('refused');
      pages.push(page.records.map((record) => record.keyId));
      cursor = page.next && { created: page.next.created, keyId: page.next.keyId };
    } while (cursor);

    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(issued);
  });

  it('refuses a key over the cap; a revoked key frees its place at once; concurrent issues never pass it', async () => {
    const ctx = adminContext(admin, undefined, { ADMIN_MAX_KEYS_PER_OWNER: '3' });
    const who = owner();

    const results = await Promise.all(Array.from({ length: 8 }, () => actions.issue(ctx, free(who))));
    const admitted = results.filter((outcome) => outcome.ok);
    const refused = await actions.issue(ctx, free(who));
    await actions.revoke(ctx, idOf(admitted[0]));
    const afterRevoke = await actions.issue(ctx, free(who));

    expect(admitted).toHaveLength(3);
    expect(results.filter((outcome) => !outcome.ok).map((o) => !o.ok && o.error.code)).toEqual(
      Array(5).fill('owner_key_limit_reached'),
    );
    expect(refused).toMatchObject({ ok: false, error: { code: 'owner_key_limit_reached' } });
    expect(afterRevoke.ok).toBe(true);
  });

  it('counts an expired key out, and re-enabling a key counts it in again', async () => {
    let now = new Date('2026-11-24T00:00:00Z');
    const ctx = adminContext(admin, () => now, { ADMIN_MAX_KEYS_PER_OWNER: '1' });
    const who = owner();
    const first = await actions.issue(ctx, { ...free(who), expires: new Date('2026-11-24T01:00:00Z') });
    const second = await actions.issue(ctx, free(who));
    now = new Date('2026-11-24T02:00:00Z');
    const third = await actions.issue(ctx, free(who));
    await actions.revoke(ctx, idOf(third));
    now = new Date('2026-11-24T03:00:00Z');
    const fourth = await actions.issue(ctx, free(who));
    const enableThird = await actions.enable(ctx, idOf(third));

    expect([first.ok, second.ok, third.ok, fourth.ok]).toEqual([true, false, true, true]);
    expect(enableThird).toMatchObject({ ok: false, error: { code: 'owner_key_limit_reached' } });
  });

  it('finishes a key whose call stopped between its two writes (rolled forward): the cap and the listing agree', async () => {
    const now = new Date('2026-11-24T00:00:00Z');
    const who = owner();
    const interrupted: KeyRecord = {
      keyHash: hashApiKey(`pk_live_${generateKeyId()}xxxxxxxx`),
      keyId: generateKeyId(),
      owner: who,
      tier: 'free',
      status: 'active',
      limits: { ...FREE_TIER_LIMITS },
      created: now.toISOString(),
    };
    const later = () => new Date(now.getTime() + IN_FLIGHT_MS);
    const ctx = adminContext(admin, later, { ADMIN_MAX_KEYS_PER_OWNER: '1' });
    await commitToLedger(ctx.tables, interrupted as KeyRecord & { owner: string }, {
      mode: 'create',
      cap: 1,
      now,
    });

    const listed = await actions.list(ctx, { owner: who, limit: 10 });
    const refused = await actions.issue(ctx, free(who));

    expect(listed.ok && listed.records.map((record) => record.keyId)).toEqual([interrupted.keyId]);
    expect(refused).toMatchObject({ ok: false, error: { code: 'owner_key_limit_reached' } });
  });

  it('keeps a key from before owners working, and gives it an owner (the CLI)', async () => {
    const ctx = adminContext(admin);
    const { key, record } = await issueKey(admin, { tier: 'free' });
    const who = owner();

    const assigned = await actions.assignOwner(ctx, record.keyId, who);
    const again = await actions.assignOwner(ctx, record.keyId, owner());
    const listed = await actions.list(ctx, { owner: who, limit: 10 });

    expect(record.owner).toBeUndefined();
    expect(assigned).toMatchObject({ ok: true, record: { owner: who } });
    expect(again).toMatchObject({ ok: false, error: { code: 'owner_already_set' } });
    expect(listed.ok && listed.records.map((r) => r.keyId)).toEqual([record.keyId]);
    expect(keyAccepted((await store.lookup(hashApiKey(key)))!, Date.now())).toBe(true);
  });
});

describe('roll', () => {
  it('issues a successor with the same owner, tier, limits and label; the old key expires when asked', async () => {
    const now = new Date();
    const ctx = adminContext(admin, () => now, { ADMIN_MAX_KEYS_PER_OWNER: '1' });
    const who = owner();
    const first = await actions.issue(ctx, {
      owner: who,
      tier: 'partner',
      label: 'app',
      limits: { minute: 9, month: 99 },
    });
    const oldId = idOf(first);
    const at = new Date(now.getTime() + 3_600_000);

    const rolled = await actions.roll(ctx, oldId, { oldKeyExpires: at });
    const again = await actions.roll(ctx, oldId, { oldKeyExpires: at });
    const rollNew = await actions.roll(ctx, idOf(rolled), { oldKeyExpires: at });
    const listed = await actions.list(ctx, { owner: who, limit: 10 });

    expect(rolled).toMatchObject({
      ok: true,
      replayed: false,
      key: expect.stringMatching(/^pk_live_/),
      record: {
        owner: who,
        tier: 'partner',
        label: 'app',
        limits: { minute: 9, month: 99 },
        rolledFrom: oldId,
      },
      old: { keyId: oldId, expires: at.toISOString(), rolledTo: idOf(rolled) },
    });
    expect(again).toMatchObject({ ok: false, error: { code: 'key_already_rolled' } });
    // At the cap, a roll's grace holds one key over it; a second roll waits for the old key to go.
    expect(rollNew).toMatchObject({ ok: false, error: { code: 'owner_key_limit_reached' } });
    expect(listed.ok && listed.records.map((r) => r.keyId).sort()).toEqual([oldId, idOf(rolled)].sort());
  });
});

describe('rolls of one key at once (issue 47: no ghost keys)', () => {
  const N = 10;
  const idem = (key: string) => ({ key, fingerprint: 'the same roll' });
  const claimPk = (key: string) => `${COUNTERS_SCHEMA.claimPrefix}${hash('sha256', key, 'hex')}`;

  /** The owner's keys as stored, its ledger's key ids, and which Idempotency-Key records are left. */
  async function leftBehind(who: string, keys: string[]) {
    const tables = adminContext(admin).tables;
    const stored = (await tables.ownerKeys(who, 100)).records;
    const ledger = Object.keys(JSON.parse((await tables.readLedger(who)).entries) as object);
    const claims = [];
    for (const key of keys) if (await tables.readClaim(claimPk(key))) claims.push(key);
    return { stored, ledger: ledger.sort(), claims };
  }

  /** N rolls of `keyId` at once, each with its own Idempotency-Key. */
  async function rollsAtOnce(ctx: actions.AdminContext, keyId: string, round: string) {
    const keys = Array.from({ length: N }, (_, i) => `${round}-${i}`);
    const at = new Date(ctx.now().getTime() + 3_600_000);
    const outcomes = await Promise.all(
      keys.map((key) => actions.roll(ctx, keyId, { oldKeyExpires: at }, idem(key))),
    );
    return { keys, outcomes };
  }

  it(`${N} at once, five rounds: one successor each, and the refused rolls leave no key, entry or record`, async () => {
    const ctx = adminContext(admin);
    const who = owner();
    let current = idOf(await actions.issue(ctx, free(who)));
    for (let round = 0; round < 5; round++) {
      const { keys, outcomes } = await rollsAtOnce(ctx, current, `${who}-round-${round}`);
      const won = outcomes.filter((outcome) => outcome.ok);
      const refused = keys.filter((_, i) => !outcomes[i]!.ok);
      const left = await leftBehind(who, refused);

      expect(won).toHaveLength(1);
      expect(outcomes.filter((o) => !o.ok).map((o) => !o.ok && o.error.code)).toEqual(
        Array(N - 1).fill('key_already_rolled'),
      );
      const successor = idOf(won[0]);
      // The chain so far and nothing else: the first key and one successor per round.
      expect(left.stored).toHaveLength(round + 2);
      expect(left.stored.filter((record) => record.rolledFrom === current).map((r) => r.keyId)).toEqual([
        successor,
      ]);
      expect(left.ledger).toEqual(expect.arrayContaining([current, successor]));
      const storedIds = left.stored.map((record) => record.keyId);
      expect(left.ledger.filter((keyId) => !storedIds.includes(keyId))).toEqual([]);
      expect(left.claims).toEqual([]);
      // A refused roll's Idempotency-Key is free: sent again, it is refused the same way, as a new call.
      const again = await actions.roll(
        ctx,
        current,
        { oldKeyExpires: new Date(Date.now() + 60_000) },
        idem(refused[0]!),
      );
      expect(again).toMatchObject({ ok: false, error: { code: 'key_already_rolled' } });
      await actions.revoke(ctx, current);
      current = successor;
    }
  });

  it.each([
    ['its ledger entry', false],
    ['its ledger entry and its mark on the old key', true],
  ])(
    `a roll stopped after %s, then ${N} at once: one successor, and nothing else once the window has passed`,
    async (_, marked) => {
      // Today, not a fixed day: the claims expire by the clock, and the local DynamoDB's TTL sweep removes an
      // item whose expiry has passed by the wall clock (a fixed day gone by made the winner's claim vanish).
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      let clock = now;
      const ctx = adminContext(admin, () => clock);
      const who = owner();
      const old = (await actions.issue(ctx, free(who))) as { record: KeyRecord };
      const stopped: KeyRecord = {
        keyHash: hashApiKey(`pk_live_${generateKeyId()}xxxxxxxx`),
        keyId: generateKeyId(),
        owner: who,
        tier: 'free',
        status: 'active',
        limits: { ...FREE_TIER_LIMITS },
        created: now.toISOString(),
        rolledFrom: old.record.keyId,
      };
      const expires = new Date(now.getTime() + 3_600_000).toISOString();
      const replaces = { keyHash: old.record.keyHash, keyId: old.record.keyId, expires };
      await commitToLedger(ctx.tables, stopped as KeyRecord & { owner: string }, {
        mode: 'create',
        cap: 10,
        now,
        replaces,
      });
      if (marked) await ctx.tables.markRolled(old.record.keyHash, stopped.keyId, expires);

      const { keys, outcomes } = await rollsAtOnce(ctx, old.record.keyId, `${who}-stopped`);
      clock = new Date(now.getTime() + IN_FLIGHT_MS);
      const listed = await actions.list(ctx, { owner: who, limit: 100 });
      const left = await leftBehind(who, keys);

      const won = outcomes.filter((outcome) => outcome.ok);
      expect(won).toHaveLength(marked ? 0 : 1);
      const successor = marked ? stopped.keyId : idOf(won[0]);
      expect(listed.ok && listed.records.map((record) => record.keyId).sort()).toEqual(
        [old.record.keyId, successor].sort(),
      );
      expect(left.ledger).toEqual([old.record.keyId, successor].sort());
      expect(left.claims).toEqual(keys.filter((_, i) => outcomes[i]!.ok));
    },
  );
});

describe('Idempotency-Key', () => {
  const idem = (key: string, fingerprint = 'f1') => ({ key, fingerprint });

  it('answers a retried issue with the same key id and no key, creating nothing twice', async () => {
    const ctx = adminContext(admin);
    const who = owner();
    const key = `retry-${who}`;

    const first = await actions.issue(ctx, free(who), idem(key));
    const second = await actions.issue(ctx, free(who), idem(key));
    const other = await actions.issue(ctx, free(who), idem(key, 'f2'));
    const listed = await actions.list(ctx, { owner: who, limit: 10 });

    expect(first).toMatchObject({ ok: true, replayed: false, key: expect.stringMatching(/^pk_live_/) });
    expect(second).toMatchObject({
      ok: true,
      replayed: true,
      key: undefined,
      record: { keyId: idOf(first) },
    });
    expect(other).toMatchObject({ ok: false, error: { code: 'idempotency_key_reused' } });
    expect(listed.ok && listed.records).toHaveLength(1);
  });

  it('creates one key for ten concurrent calls with one Idempotency-Key', async () => {
    const ctx = adminContext(admin);
    const who = owner();

    const results = await Promise.all(
      Array.from({ length: 10 }, () => actions.issue(ctx, free(who), idem(`burst-${who}`))),
    );
    const listed = await actions.list(ctx, { owner: who, limit: 10 });

    expect(new Set(results.map((outcome) => outcome.ok && outcome.record.keyId)).size).toBe(1);
    expect(results.filter((outcome) => outcome.ok && !outcome.replayed)).toHaveLength(1);
    expect(listed.ok && listed.records).toHaveLength(1);
  });

  it('replays a roll as the same successor, and releases a key refused by the cap', async () => {
    const ctx = adminContext(admin, undefined, { ADMIN_MAX_KEYS_PER_OWNER: '1' });
    const who = owner();
    const oldId = idOf(await actions.issue(ctx, free(who)));
    const at = new Date(Date.now() + 3_600_000);

    const refused = await actions.issue(ctx, free(who), idem(`cap-${who}`));
    const rolled = await actions.roll(ctx, oldId, { oldKeyExpires: at }, idem(`roll-${who}`));
    const replay = await actions.roll(ctx, oldId, { oldKeyExpires: at }, idem(`roll-${who}`));
    await actions.revoke(ctx, oldId);
    await actions.revoke(ctx, idOf(rolled));
    const retried = await actions.issue(ctx, free(who), idem(`cap-${who}`));

    expect(refused).toMatchObject({ ok: false, error: { code: 'owner_key_limit_reached' } });
    expect(replay).toMatchObject({ ok: true, replayed: true, record: { keyId: idOf(rolled) } });
    expect(retried).toMatchObject({ ok: true, replayed: false, key: expect.stringMatching(/^pk_live_/) });
  });
});
