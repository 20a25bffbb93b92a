import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as actions from '../../../admin/actions.js';
import { AdminTables } from '../../../admin/dynamo.js';
import { partnerDefaults } from '../../../admin/settings.js';
import { createTables } from '../../../admin/tables.js';
import { readUsage } from '../../../admin/usage.js';
import { parseIssue } from '../../../admin/validate.js';
import { CachedKeyStore } from '../../../proxy/keys/cached.js';
import { DynamoKeyStore } from '../../../proxy/keys/dynamo.js';
import { DynamoQuotaMeter } from '../../../proxy/quota/dynamo.js';
import { API_KEY_PATTERN, hashApiKey } from '../../../tables/keys.js';
import {
  type AdminOptions,
  adminContext,
  findKey,
  issueKey,
  listKeys,
  registerKey,
  revokeKey,
} from '../../helpers/admin.js';
import { at, countTransportCalls, type DynamoFixture, dynamoFixture } from '../../helpers/dynamo.js';

let db: DynamoFixture;
let admin: AdminOptions;
let store: DynamoKeyStore;

beforeAll(async () => {
  db = await dynamoFixture();
  admin = { dynamo: db.dynamo, keysTable: db.keysTable, countersTable: db.countersTable };
  store = new DynamoKeyStore({ transport: db.transport, table: db.keysTable });
});
afterAll(async () => {
  await db?.dispose();
});

describe('tables', () => {
  it('creates the tables idempotently and reports TTL support', async () => {
    const again = await createTables(db.client, { keysTable: db.keysTable, countersTable: db.countersTable });
    // The local DynamoDB honours TTL as AWS does (@catalogue/local-aws, dynamo-ttl.ts): enabled on expires_at.
    expect(again).toEqual({ created: [], ownerIndex: 'present', ttl: 'enabled' });
  });
});

describe('DynamoKeyStore and admin', () => {
  describe('happy', () => {
    it('issues a free key that the store finds by its hash', async () => {
      const { key, record } = await issueKey(admin, { tier: 'free', label: 'happy' });

      const found = await store.lookup(hashApiKey(key));

      expect(key).toMatch(API_KEY_PATTERN);
      expect(found).toEqual(record);
      expect(found).toMatchObject({ tier: 'free', status: 'active', limits: { minute: 60, month: 5000 } });
    });

    it('stores partner limits per key, and meters with them', async () => {
      const { key } = await issueKey(admin, { tier: 'partner', limits: { minute: 7, month: 9 } });
      const record = (await store.lookup(hashApiKey(key)))!;
      const meter = new DynamoQuotaMeter({ transport: db.transport, table: db.countersTable });

      const results = [];
      for (let i = 0; i < 10; i++) results.push(await meter.meter(record, at('2026-11-21T10:00:00Z')));

      expect(record.limits).toEqual({ minute: 7, month: 9 });
      expect(results.filter((r) => r.ok)).toHaveLength(7);
      expect(results[9]).toMatchObject({
        ok: false,
        reason: 'minute',
        limitMinute: 7,
        limitMonth: 9,
      });
    });

    it('registers a given key idempotently, keeping its key id', async () => {
      const key = 'pk_live_AAAAAAAAAAAAAAAAAAAAAA';
      const first = await registerKey(admin, key, { tier: 'free' });
      await revokeKey(admin, first.keyId);

      const second = await registerKey(admin, key, { tier: 'partner', limits: { minute: 100, month: 1000 } });

      expect(second).toMatchObject({
        keyId: first.keyId,
        created: first.created,
        tier: 'partner',
        status: 'active',
      });
      expect(await store.lookup(hashApiKey(key))).toEqual(second);
    });

    it('lists keys by key id, revokes them, and reports usage', async () => {
      const { record } = await issueKey(admin, { tier: 'free', label: 'listed' });
      const meter = new DynamoQuotaMeter({ transport: db.transport, table: db.countersTable });
      const now = at('2026-11-21T10:00:30Z');
      for (let i = 0; i < 3; i++) await meter.meter(record, now);

      const listed = await listKeys(admin);
      const used = await readUsage(new AdminTables(admin), record, now);
      const revoked = await actions.revoke(adminContext(admin), record.keyId);
      const again = await actions.revoke(adminContext(admin), record.keyId);

      expect(listed.map((r) => r.keyId)).toContain(record.keyId);
      expect(used).toMatchObject({ current: { month: '2026-11', count: 3 }, minuteCount: 3 });
      expect(revoked).toMatchObject({ ok: true, already: false, record: { status: 'revoked' } });
      expect(again).toMatchObject({ ok: true, already: true });
      expect((await findKey(admin, record.keyId))?.status).toBe('revoked');
    });

    it('reads partner defaults from the environment', () => {
      expect(partnerDefaults({})).toEqual({ minute: 600, month: 1_000_000 });
      expect(partnerDefaults({ PARTNER_LIMIT_MINUTE: '1200', PARTNER_LIMIT_MONTH: '2000000' })).toEqual({
        minute: 1200,
        month: 2_000_000,
      });
    });
  });

  describe('error', () => {
    it('answers undefined for an unknown hash', async () => {
      expect(await store.lookup(hashApiKey('pk_live_unknownunknownunknown'))).toBeUndefined();
    });

    it('reports unknown key ids as values', async () => {
      expect(await actions.revoke(adminContext(admin), 'key_nosuchkey')).toMatchObject({
        ok: false,
        error: { code: 'key_not_found' },
      });
      expect(await actions.usage(adminContext(admin), 'key_nosuchkey')).toMatchObject({
        ok: false,
        error: { code: 'key_not_found' },
      });
    });

    it('rejects custom limits on the free tier and bad partner defaults', async () => {
      const free = parseIssue(
        { owner: 'u1', tier: 'free', limits: { minute: 1000, month: 1 } },
        new Date(),
        partnerDefaults({}),
      );
      expect(free.ok ? [] : free.problems.map((p) => p.problem)).toEqual([
        expect.stringContaining('free-tier limits are fixed'),
      ]);
      expect(() => partnerDefaults({ PARTNER_LIMIT_MINUTE: '1e3' })).toThrow(
        'PARTNER_LIMIT_MINUTE must be an integer',
      );
    });
  });

  describe('security', () => {
    it('never stores a plaintext key: a scan of both tables finds none', async () => {
      const issued = [
        (await issueKey(admin, { tier: 'free' })).key,
        (await issueKey(admin, { tier: 'partner', label: 'scan' })).key,
      ];
      const registered = 'pk_live_BBBBBBBBBBBBBBBBBBBBBB';
      await registerKey(admin, registered, { tier: 'free' });
      const meter = new DynamoQuotaMeter({ transport: db.transport, table: db.countersTable });
      for (const key of [...issued, registered])
        await meter.meter((await store.lookup(hashApiKey(key)))!, new Date());

      const dump = [];
      for (const table of [db.keysTable, db.countersTable]) {
        dump.push(JSON.stringify((await db.client.send(new ScanCommand({ TableName: table }))).Items));
      }
      const text = dump.join('\n');

      expect(text).not.toMatch(/pk_live_/);
      for (const key of [...issued, registered]) {
        expect(text).not.toContain(key.slice('pk_live_'.length));
        expect(text).toContain(hashApiKey(key));
      }
    });

    it('makes a revocation visible through the cache within its TTL', async () => {
      const clock = { now: 0 };
      const cached = new CachedKeyStore(store, { ttlMs: 5_000, maxEntries: 10, now: () => clock.now });
      const { key, record } = await issueKey(admin, { tier: 'free' });
      expect((await cached.lookup(hashApiKey(key)))?.status).toBe('active');

      await revokeKey(admin, record.keyId);
      clock.now = 4_999;
      const withinBound = await cached.lookup(hashApiKey(key));
      clock.now = 5_000;
      const atBound = await cached.lookup(hashApiKey(key));

      expect(withinBound?.status).toBe('active');
      expect(atBound?.status).toBe('revoked');
    });
  });

  describe('DynamoDB calls per lookup', () => {
    it('makes one GetItem uncached and none cached', async () => {
      const { key } = await issueKey(admin, { tier: 'free' });
      const counted = countTransportCalls(db.transport);
      const counting = new DynamoKeyStore({ transport: counted.transport, table: db.keysTable });
      const cached = new CachedKeyStore(counting, { ttlMs: 30_000, maxEntries: 10 });

      await cached.lookup(hashApiKey(key));
      const uncached = counted.calls.splice(0);
      await cached.lookup(hashApiKey(key));
      const hit = [...counted.calls];

      console.info(`calls per lookup: uncached ${JSON.stringify(uncached)}, cached ${JSON.stringify(hit)}`);
      expect(uncached).toEqual(['GetItem']);
      expect(hit).toEqual([]);
    });
  });
});
