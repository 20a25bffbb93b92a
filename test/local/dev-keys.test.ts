/** The free-tier dev key `npm start` issues once per data directory and re-uses (local/dev-keys.ts). */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdminTables } from '../../admin/dynamo.js';
import { createTables } from '../../admin/tables.js';
import { DEV_KEY_FILE, devKeyFor } from '../../local/dev-keys.js';
import { type AdminOptions, listKeys, revokeKey, setExpiry } from '../helpers/admin.js';
import { type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';

let db: DynamoFixture;
let admin: AdminOptions;
const scratch = mkdtempSync(join(tmpdir(), 'cat-devkey-'));

beforeAll(async () => {
  db = await dynamoFixture();
  admin = { dynamo: db.dynamo, keysTable: db.keysTable, countersTable: db.countersTable };
});
afterAll(async () => {
  await db?.dispose();
  rmSync(scratch, { recursive: true, force: true });
});

describe('devKeyFor', () => {
  it('issues one key per data directory, keeps it in a 0600 file, and re-uses it', async () => {
    const dir = mkdtempSync(join(scratch, 'dir-'));

    const first = await devKeyFor(new AdminTables(admin), dir);
    const second = await devKeyFor(new AdminTables(admin), dir);

    expect(first).toMatchObject({ reused: false, record: { tier: 'free', label: 'npm start' } });
    expect(second).toMatchObject({ reused: true, key: first.key, record: { keyId: first.record.keyId } });
    expect(JSON.parse(readFileSync(join(dir, DEV_KEY_FILE), 'utf8'))).toEqual({
      key_id: first.record.keyId,
      key: first.key,
    });
    expect(statSync(join(dir, DEV_KEY_FILE)).mode & 0o777).toBe(0o600);
    const issued = (await listKeys(admin)).filter((record) => record.keyId === first.record.keyId);
    expect(issued).toHaveLength(1);
  });

  it('replaces a key that is no longer accepted (revoked, expired) or not in this table', async () => {
    const dir = mkdtempSync(join(scratch, 'dir-'));
    const original = await devKeyFor(new AdminTables(admin), dir);

    await revokeKey(admin, original.record.keyId);
    const afterRevoke = await devKeyFor(new AdminTables(admin), dir);
    await setExpiry(admin, afterRevoke.record.keyId, new Date(Date.now() - 1000));
    const afterExpiry = await devKeyFor(new AdminTables(admin), dir);
    const other = { ...admin, keysTable: 'other-keys', countersTable: 'other-counters' };
    await createTables(db.client, other);
    const otherTable = await devKeyFor(new AdminTables(other), dir);

    expect(afterRevoke).toMatchObject({ reused: false, replaced: original.record.keyId });
    expect(afterRevoke.key).not.toBe(original.key);
    expect(afterExpiry).toMatchObject({ reused: false, replaced: afterRevoke.record.keyId });
    expect(otherTable).toMatchObject({ reused: false, replaced: afterExpiry.record.keyId });
  });
});
