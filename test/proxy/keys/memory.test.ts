import { describe, expect, it } from 'vitest';
import { MemoryKeyStore } from '../../../proxy/keys/memory.js';
import { hashApiKey } from '../../../tables/keys.js';

const KEY = `pk_live_${'k'.repeat(22)}`;

describe('MemoryKeyStore', () => {
  it('looks keys up by hash only, and sees revocation', async () => {
    const keys = new MemoryKeyStore();
    const record = keys.add(KEY, { tier: 'partner' });
    expect(record.keyHash).toBe(hashApiKey(KEY));
    expect(JSON.stringify(record)).not.toContain(KEY);
    expect(await keys.lookup(hashApiKey(KEY))).toMatchObject({ tier: 'partner', status: 'active' });
    expect(await keys.lookup(KEY)).toBeUndefined();
    keys.revoke(record.keyId);
    expect(await keys.lookup(hashApiKey(KEY))).toMatchObject({ status: 'revoked' });
  });
});
