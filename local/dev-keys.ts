import type { Tier } from '../proxy/keys/interface.js';

/** Parse `CATALOGUE_DEV_KEYS="free:pk_live_…,partner:pk_live_…"`. */
export function parseDevKeys(value: string | undefined): { tier: Tier; key: string }[] {
  if (!value?.trim()) return [];
  return value.split(',').map((entry) => {
    const match = /^\s*(free|partner):(pk_live_[A-Za-z0-9_-]{22})\s*$/.exec(entry);
    if (!match) {
      // Never echo the entry: it may be a real key with a typo.
      throw new Error(
        'CATALOGUE_DEV_KEYS: each entry must be free:<key> or partner:<key> (pk_live_ + 22 chars)',
      );
    }
    return { tier: match[1] as Tier, key: match[2]! };
  });
}
