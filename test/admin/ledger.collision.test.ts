/**
 * A new key whose hash is already stored under another key id (admin/ledger.ts's writeKey) against dynalite: a
 * typed error the caller recognises with instanceof, and the stored key left as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminTables } from '../../admin/dynamo.js';
import { KeyCollisionError, writeKey } from '../../admin/ledger.js';
import {
  FREE_TIER_LIMITS,
  generateApiKey,
  generateKeyId,
  hashApiKey,
  type KeyRecord,
} from '../../tables/keys.js';
import { type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';

let db: DynamoFixture;
let tables: AdminTables;

beforeAll(async () => {
  db = await dynamoFixture();
  tables = new AdminTables(db);
});
afterAll(async () => {
  await db?.dispose();
});

const recordOf = (keyHash: string, keyId: string, label: string): KeyRecord => ({
  keyHash,
  keyId,
  tier: 'free',
  status: 'active',
  limits: FREE_TIER_LIMITS,
  label,
  created: '2026-03-01T00:00:00.000Z',
});

describe('a key whose hash is stored under another key id', () => {
  it('is refused with a KeyCollisionError, and the stored key stays as it was', async () => {
    const keyHash = hashApiKey(generateApiKey());
    const stored = recordOf(keyHash, generateKeyId(), 'first');
    expect(await writeKey(tables, stored)).toEqual({ ok: true, record: stored });

    const other = recordOf(keyHash, generateKeyId(), 'second');
    const refused = await writeKey(tables, other).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(KeyCollisionError);
    expect((refused as KeyCollisionError).message).toContain(other.keyId);
    expect((await tables.keysByHash([keyHash])).get(keyHash)).toEqual(stored);
  });

  it('is not met by the same key written again (a retry): that answers the key stored', async () => {
    const stored = recordOf(hashApiKey(generateApiKey()), generateKeyId(), 'again');
    await writeKey(tables, stored);
    expect(await writeKey(tables, stored)).toEqual({ ok: true, record: stored });
  });
});
