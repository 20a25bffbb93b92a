/**
 * The dev keys of `npm start`: the ones named in CATALOGUE_DEV_KEYS, and the free-tier key it issues once per
 * data directory and re-uses while it is accepted.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { issue } from '../admin/actions.js';
import type { AdminTables } from '../admin/dynamo.js';
import { adminSettings } from '../admin/settings.js';
import {
  API_KEY_PATTERN,
  FREE_TIER_LIMITS,
  hashApiKey,
  type KeyRecord,
  keyAccepted,
  type Tier,
} from '../tables/keys.js';

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

/** The owner of the dev keys `npm start` issues (one usable at a time: it replaces one only once refused). */
export const DEV_KEY_OWNER = 'npm-start';

/** Where `npm start` keeps its free-tier dev key: a local development key, so the key itself (mode 0600). */
export const DEV_KEY_FILE = 'dev-key.json';

interface RememberedKey {
  key_id: string;
  key: string;
}

function readRemembered(directory: string): RememberedKey | undefined {
  try {
    const remembered = JSON.parse(
      readFileSync(join(directory, DEV_KEY_FILE), 'utf8'),
    ) as Partial<RememberedKey>;
    return typeof remembered.key_id === 'string' && API_KEY_PATTERN.test(remembered.key ?? '')
      ? (remembered as RememberedKey)
      : undefined;
  } catch {
    return undefined;
  }
}

function remember(directory: string, remembered: RememberedKey): void {
  const file = join(directory, DEV_KEY_FILE);
  rmSync(`${file}.next`, { force: true });
  writeFileSync(`${file}.next`, `${JSON.stringify(remembered)}\n`, { mode: 0o600 });
  renameSync(`${file}.next`, file);
}

export type DevKeyOutcome = { key: string; record: KeyRecord; reused: boolean; replaced?: string };

/**
 * The free-tier dev key `npm start` prints: the one it issued before into this data directory while that is
 * still accepted (active, unexpired, and in this keys table), else a fresh one, remembered for next time. So
 * restarts do not pile up keys, and a key pasted into another shell keeps working across restarts.
 * @example const { key, reused } = await devKeyFor(admin, '.local');
 */
export async function devKeyFor(
  tables: AdminTables,
  directory: string,
  now = new Date(),
): Promise<DevKeyOutcome> {
  const remembered = readRemembered(directory);
  if (remembered) {
    const record = await tables.keyById(remembered.key_id);
    if (record && record.keyHash === hashApiKey(remembered.key) && keyAccepted(record, now.getTime())) {
      return { key: remembered.key, record, reused: true };
    }
  }
  const settings = adminSettings({ KEYS_TABLE: tables.keysTable, COUNTERS_TABLE: tables.countersTable });
  const issued = await issue(
    { tables, settings, now: () => now },
    { owner: DEV_KEY_OWNER, tier: 'free', label: 'npm start', limits: { ...FREE_TIER_LIMITS } },
  );
  if (!issued.ok) throw new Error(`the dev key could not be issued: ${issued.error.message}`);
  const { key, record } = issued as { key: string; record: KeyRecord };
  remember(directory, { key_id: record.keyId, key });
  return { key, record, reused: false, ...(remembered && { replaced: remembered.key_id }) };
}
