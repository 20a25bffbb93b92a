/**
 * How a key record is stored in the keys table (tables/keys.ts): every field round-trips, expiry, owner and
 * roll links included; a record from before owners reads as one without an owner.
 */
import { describe, expect, it } from 'vitest';
import { keyItem, keyRecordFromItem } from '../../tables/keys.js';
import { keyRecord } from '../helpers/dynamo.js';

describe('key items', () => {
  it('round-trips a record with and without its optional fields', () => {
    for (const record of [
      keyRecord(),
      keyRecord({ label: 'acme', expires: '2026-12-31T00:00:00.000Z', tier: 'partner', status: 'revoked' }),
      keyRecord({ owner: 'user_42', rolledFrom: 'key_AAAAAAAAAA', rolledTo: 'key_BBBBBBBBBB' }),
    ]) {
      expect(keyRecordFromItem(keyItem(record))).toEqual(record);
    }
  });

  it('stores the expiry as an ISO 8601 string attribute `expires`', () => {
    expect(keyItem(keyRecord({ expires: '2026-12-31T00:00:00.000Z' })).expires).toEqual({
      S: '2026-12-31T00:00:00.000Z',
    });
  });

  it('refuses a record whose expiry cannot be read (rather than treat it as never expiring)', () => {
    const item = keyItem(keyRecord());
    expect(keyRecordFromItem({ ...item, expires: { S: 'soon' } })).toBeUndefined();
  });

  it('reads a record from before owners as one without an owner (the request path accepts it as before)', () => {
    const { owner: _, ...item } = keyItem(keyRecord({ owner: 'user_42' }));
    expect(keyRecordFromItem(item)?.owner).toBeUndefined();
    expect(keyRecordFromItem(item)?.status).toBe('active');
  });
});
