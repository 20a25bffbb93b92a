/**
 * Key administration for the suites that need keys in a table (the request path's, the client's, the
 * proofs'): the admin core's actions (admin/actions.ts) with the tables and settings of a fixture, in the
 * shape those suites use — `{ dynamo, keysTable, countersTable }` (a DynamoFixture is one) and plain options.
 */

import * as actions from '../../admin/actions.js';
import { AdminTables, sortKeys } from '../../admin/dynamo.js';
import { adminSettings, PARTNER_DEFAULT_LIMITS } from '../../admin/settings.js';
import type { LeanDynamo } from '../../aws/dynamodb.js';
import { FREE_TIER_LIMITS, type Item, type KeyRecord, type Limits, type Tier } from '../../tables/keys.js';
import type { TableNames } from '../../tables/schema.js';

export interface AdminOptions extends TableNames {
  /** Key administration's client (a fixture's `dynamo`, or aws/sdk.ts leanDynamo). */
  dynamo: LeanDynamo;
}

/** The admin core's context over a fixture's tables, the clock `now` (default: the real one). */
export function adminContext(
  admin: AdminOptions,
  now?: () => Date,
  env: Record<string, string> = {},
): actions.AdminContext {
  return {
    tables: new AdminTables(admin),
    settings: adminSettings({ KEYS_TABLE: admin.keysTable, COUNTERS_TABLE: admin.countersTable, ...env }),
    now: now ?? (() => new Date()),
  };
}

export interface IssueOptions {
  tier: Tier;
  owner?: string;
  label?: string;
  limits?: Limits;
  expires?: Date;
  now?: Date;
}

/** Issue a key (the core's `issue`); throws if it is refused. */
export async function issueKey(
  admin: AdminOptions,
  options: IssueOptions,
): Promise<{ key: string; record: KeyRecord }> {
  const outcome = await actions.issue(adminContext(admin, options.now && (() => options.now!)), {
    tier: options.tier,
    limits:
      options.limits ?? (options.tier === 'free' ? { ...FREE_TIER_LIMITS } : { ...PARTNER_DEFAULT_LIMITS }),
    ...(options.owner !== undefined && { owner: options.owner }),
    ...(options.label !== undefined && { label: options.label }),
    ...(options.expires && { expires: options.expires }),
  });
  if (!outcome.ok) throw new Error(outcome.error.message);
  return { key: outcome.key!, record: outcome.record };
}

/** Register a known key (the core's `register`, as npm start seeds CATALOGUE_DEV_KEYS). */
export function registerKey(
  admin: AdminOptions,
  key: string,
  options: { tier: Tier; limits?: Limits; label?: string },
): Promise<KeyRecord> {
  return actions.register(new AdminTables(admin), key, {
    tier: options.tier,
    limits: options.limits ?? (options.tier === 'free' ? FREE_TIER_LIMITS : PARTNER_DEFAULT_LIMITS),
    ...(options.label !== undefined && { label: options.label }),
  });
}

/** Revoke a key by id; throws if there is none. */
export async function revokeKey(admin: AdminOptions, keyId: string): Promise<KeyRecord> {
  const outcome = await actions.revoke(adminContext(admin), keyId);
  if (!outcome.ok) throw new Error(outcome.error.message);
  return outcome.record;
}

/** Set or remove a key's expiry, whatever the time (the core refuses a past one: tests set it directly). */
export async function setExpiry(
  admin: AdminOptions,
  keyId: string,
  expires: Date | null,
): Promise<KeyRecord> {
  const tables = new AdminTables(admin);
  const found = await tables.keyById(keyId);
  if (!found) throw new Error(`no key ${keyId}`);
  // No guard: the test decides, not the ledger.
  return (await tables.setKeyExpiry(found.keyHash, expires, []))!;
}

/** The record of a key id, or undefined. */
export function findKey(admin: AdminOptions, keyId: string): Promise<KeyRecord | undefined> {
  return new AdminTables(admin).keyById(keyId);
}

/** Every key, oldest first. */
export async function listKeys(admin: AdminOptions): Promise<KeyRecord[]> {
  const tables = new AdminTables(admin);
  const records: KeyRecord[] = [];
  let start: Item | undefined;
  do {
    const page = await tables.scanKeys(start);
    records.push(...page.records);
    start = page.next;
  } while (start);
  return sortKeys(records);
}
