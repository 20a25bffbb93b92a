/** How a key record is stored in the keys table (proxy/tables.ts): every field round-trips, expiry included. */
import { describe, expect, it } from 'vitest';
import { keyItem, keyRecordFromItem } from '../../proxy/tables.js';
import { keyRecord } from '../helpers/dynamo.js';

describe('key items', () => {
  it('round-trips a record with and without its optional fields', () => {
    for (const record of [
      keyRecord(),
      keyRecord({ label: 'acme', expires: '2026-12-31T00:00:00.000Z', tier: 'partner', status: 'revoked' }),
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
});
