/**
 * A key found from the key itself (admin/by-key.ts), against dynalite: by its hash, consistently (a key
 * imported or issued a moment ago is found at once), revoked with its counters' stop; a key of nothing is
 * `key_not_found`, the body that carries a key checked without showing it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findByKey, parseKeyBody, revokeByKey } from '../../admin/by-key.js';
import { importKeys, parseImportBody } from '../../admin/import/api.js';
import { PARTNER_DEFAULT_LIMITS } from '../../admin/settings.js';
import { importedKeyId } from '../../tables/keys.js';
import { adminContext, issueKey } from '../helpers/admin.js';
import { type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';

let db: DynamoFixture;
beforeAll(async () => {
  db = await dynamoFixture();
});
afterAll(async () => {
  await db?.dispose();
});

const freshKey = () => `pk_live_${randomBytes(17).toString('base64url').slice(0, 22)}`;

describe('a key found from the key itself', () => {
  it('finds a key issued or imported a moment ago, and revokes it with its stop', async () => {
    const ctx = adminContext(db);
    const { key, record } = await issueKey(db, { tier: 'free', owner: 'by-key-1' });
    const imported = freshKey();
    const body = parseImportBody(
      { keys: [{ key: imported, tier: 'partner' }] },
      {
        now: new Date(),
        partnerDefaults: PARTNER_DEFAULT_LIMITS,
      },
    );
    if (!body.ok) throw new Error('a good body');
    const done = await importKeys(ctx, body.value);

    const issuedFound = await findByKey(ctx, key);
    const importedFound = await findByKey(ctx, imported);
    const revoked = await revokeByKey(ctx, imported);

    expect(done.ok).toBe(true);
    expect(issuedFound).toMatchObject({ ok: true, record: { keyId: record.keyId } });
    expect(importedFound).toMatchObject({ ok: true, record: { tier: 'partner', status: 'active' } });
    expect(revoked).toMatchObject({ ok: true, already: false, record: { status: 'revoked' } });
    expect(revoked.ok && revoked.record.keyId).toBe(importedFound.ok && importedFound.record.keyId);
  });

  it('a key of nothing: key_not_found, the key not in the message', async () => {
    const key = freshKey();
    const ctx = adminContext(db);

    for (const outcome of [await findByKey(ctx, key), await revokeByKey(ctx, key)]) {
      expect(outcome).toMatchObject({ ok: false, error: { code: 'key_not_found' } });
      expect(JSON.stringify(outcome)).not.toContain(key.slice(8));
    }
    expect(importedKeyId('0'.repeat(64))).toMatch(/^key_[A-Za-z0-9]{10}$/);
  });

  it('the body: exactly {"key": <a key>}; anything else refused unshown', () => {
    const key = freshKey();
    expect(parseKeyBody({ key })).toEqual({ ok: true, value: key });
    for (const body of [{}, { key: key.slice(1) }, { key, label: 'x' }, { key: 42 }, [key], undefined]) {
      const parsed = parseKeyBody(body);
      expect(parsed.ok).toBe(false);
      expect(JSON.stringify(parsed)).not.toContain(key.slice(9));
    }
  });
});
