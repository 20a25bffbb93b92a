/**
 * Changing a key after it was issued (proxy/admin/keys.ts), against dynalite: enable, limits, expiry; and
 * that the request path's key lookup sees each change (an expired key is refused like a revoked one).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdminOptions,
  enableKey,
  issueKey,
  registerKey,
  revokeKey,
  setExpiry,
  setLimits,
} from '../../../proxy/admin/keys.js';
import { DynamoKeyStore } from '../../../proxy/keys/dynamo.js';
import { hashApiKey } from '../../../proxy/keys/hash.js';
import { keyAccepted } from '../../../proxy/keys/interface.js';
import { type DynamoFixture, dynamoFixture } from '../../helpers/dynamo.js';

let db: DynamoFixture;
let admin: AdminOptions;
let store: DynamoKeyStore;

beforeAll(async () => {
  db = await dynamoFixture();
  admin = { client: db.client, keysTable: db.keysTable, countersTable: db.countersTable };
  store = new DynamoKeyStore({ transport: db.transport, table: db.keysTable });
});
afterAll(async () => {
  await db?.dispose();
});

describe('issueKey', () => {
  it('stores an expiry with the key, in its one write', async () => {
    const expires = new Date('2027-01-01T00:00:00Z');

    const { key, record } = await issueKey(admin, { tier: 'free', expires });

    expect(record.expires).toBe('2027-01-01T00:00:00.000Z');
    expect(await store.lookup(hashApiKey(key))).toEqual(record);
  });
});

describe('enableKey', () => {
  it('makes a revoked key active again, keeping its id and limits; twice is harmless', async () => {
    const { key, record } = await issueKey(admin, { tier: 'partner', limits: { minute: 9, month: 99 } });
    await revokeKey(admin, record.keyId);

    const enabled = await enableKey(admin, record.keyId);
    const again = await enableKey(admin, record.keyId);

    expect(enabled).toEqual({ ok: true, alreadyActive: false, record: { ...record, status: 'active' } });
    expect(again).toMatchObject({ ok: true, alreadyActive: true });
    expect(await store.lookup(hashApiKey(key))).toEqual(record);
    expect(await enableKey(admin, 'key_nosuchkey')).toEqual({ ok: false, reason: 'not-found' });
  });
});

describe('setLimits', () => {
  it("changes a partner key's limits, one or both, and reports the previous ones", async () => {
    const { key, record } = await issueKey(admin, { tier: 'partner', limits: { minute: 600, month: 1000 } });

    const minute = await setLimits(admin, record.keyId, { minute: 1200 });
    const both = await setLimits(admin, record.keyId, { minute: 5, month: 7 });

    expect(minute).toMatchObject({
      ok: true,
      previous: { minute: 600, month: 1000 },
      record: { limits: { minute: 1200, month: 1000 } },
    });
    expect(both).toMatchObject({ ok: true, previous: { minute: 1200, month: 1000 } });
    expect((await store.lookup(hashApiKey(key)))?.limits).toEqual({ minute: 5, month: 7 });
  });

  it('refuses the fixed free-tier limits, unknown ids and non-positive limits', async () => {
    const { record } = await issueKey(admin, { tier: 'free' });
    const partner = await issueKey(admin, { tier: 'partner' });

    expect(await setLimits(admin, record.keyId, { minute: 100 })).toEqual({ ok: false, reason: 'free-tier' });
    expect(await setLimits(admin, 'key_nosuchkey', { minute: 100 })).toEqual({
      ok: false,
      reason: 'not-found',
    });
    await expect(setLimits(admin, partner.record.keyId, { minute: 0 })).rejects.toThrow('positive integers');
  });
});

describe('setExpiry', () => {
  it('sets an expiry the request path honours, and removes it', async () => {
    const { key, record } = await issueKey(admin, { tier: 'free' });
    const at = new Date('2026-12-31T00:00:00Z');

    const set = await setExpiry(admin, record.keyId, at);
    const looked = (await store.lookup(hashApiKey(key)))!;
    const removed = await setExpiry(admin, record.keyId, null);

    expect(set).toMatchObject({ ok: true, record: { expires: '2026-12-31T00:00:00.000Z' } });
    expect(keyAccepted(looked, at.getTime() - 1)).toBe(true);
    expect(keyAccepted(looked, at.getTime())).toBe(false);
    expect(removed.ok && removed.record.expires).toBeUndefined();
    expect(await store.lookup(hashApiKey(key))).toEqual(record);
    expect(await setExpiry(admin, 'key_nosuchkey', at)).toEqual({ ok: false, reason: 'not-found' });
  });

  it('re-registering a dev key removes its expiry (registerKey makes it usable again)', async () => {
    const key = 'pk_live_XXXXXXXXXXXXXXXXXXXXXX';
    const first = await registerKey(admin, key, { tier: 'free' });
    await setExpiry(admin, first.keyId, new Date('2020-01-01T00:00:00Z'));

    const again = await registerKey(admin, key, { tier: 'free' });

    expect(again.expires).toBeUndefined();
    expect(keyAccepted(again, Date.now())).toBe(true);
  });
});
