/**
 * Key administration: issue, register, list, find, revoke, enable, change limits and expiry (usage and last
 * use, read from the counters, are in usage.ts). Used by the admin CLI and by the local stack (to seed
 * `CATALOGUE_DEV_KEYS` and keep its dev key); never on the request path. Only key hashes are written.
 */
import {
  type AttributeValue,
  type DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type Dependency, DependencyError } from '../../store/errors.js';
import { ConfigurationError } from '../errors.js';
import { API_KEY_PATTERN, generateApiKey, generateKeyId, hashApiKey } from '../keys/hash.js';
import { FREE_TIER_LIMITS, type KeyRecord, type Limits, type Tier } from '../keys/interface.js';
import { type Item, KEYS_SCHEMA, keyItem, keyRecordFromItem, type TableNames } from '../tables.js';

export interface AdminOptions extends TableNames {
  client: DynamoDBClient;
}

/** Partner limits when the operator gives none (overridable by PARTNER_LIMIT_MINUTE / PARTNER_LIMIT_MONTH). */
export const PARTNER_DEFAULT_LIMITS: Limits = { minute: 600, month: 1_000_000 };

function positiveInteger(name: string, raw: string): number {
  const value = Number(raw);
  if (!/^[1-9][0-9]*$/.test(raw) || !Number.isSafeInteger(value)) {
    throw new ConfigurationError(`${name} must be a positive integer`);
  }
  return value;
}

/**
 * Partner-tier defaults, from the environment where set.
 * @example partnerDefaults({ PARTNER_LIMIT_MINUTE: '1200' }) // { minute: 1200, month: 1000000 }
 */
export function partnerDefaults(env: Record<string, string | undefined> = process.env): Limits {
  const minute = env.PARTNER_LIMIT_MINUTE?.trim();
  const month = env.PARTNER_LIMIT_MONTH?.trim();
  return {
    minute: minute ? positiveInteger('PARTNER_LIMIT_MINUTE', minute) : PARTNER_DEFAULT_LIMITS.minute,
    month: month ? positiveInteger('PARTNER_LIMIT_MONTH', month) : PARTNER_DEFAULT_LIMITS.month,
  };
}

/** Free-tier limits are the published ones (spec §8); partner limits are the operator's choice. */
function limitsFor(tier: Tier, limits: Limits | undefined): Limits {
  if (tier === 'free') {
    if (limits && (limits.minute !== FREE_TIER_LIMITS.minute || limits.month !== FREE_TIER_LIMITS.month)) {
      throw new RangeError('free-tier limits are fixed; issue a partner key for other limits');
    }
    return { ...FREE_TIER_LIMITS };
  }
  const chosen = limits ?? PARTNER_DEFAULT_LIMITS;
  if (![chosen.minute, chosen.month].every((n) => Number.isSafeInteger(n) && n > 0)) {
    throw new RangeError('limits must be positive integers');
  }
  return { ...chosen };
}

/**
 * A DynamoDB call on one table failed. The message names the table, the service's answer and what was being
 * done, e.g. "DynamoDB table catalogue-keys: Requested resource not found (ResourceNotFoundException), while
 * listing keys"; the key CLI adds the region and endpoint, which only it knows for sure.
 */
export class TableError extends DependencyError {
  constructor(
    dependency: Dependency,
    readonly table: string,
    /** What was being done: "listing keys". */
    readonly action: string,
    /** The service's answer: "Requested resource not found (ResourceNotFoundException)". */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(dependency, `DynamoDB table ${table}: ${reason}, while ${action}`, options);
  }
}

/** A DynamoDB error as a {@link TableError} naming the table and what was being done. */
export function fault(dependency: Dependency, table: string, action: string, error: unknown): TableError {
  const { name, message } = error as { name?: string; message?: string };
  const named = name && name !== 'Error' ? ` (${name})` : '';
  return new TableError(dependency, table, action, `${message || 'failed'}${named}`, { cause: error });
}

function recordOf(item: Item | undefined): KeyRecord | undefined {
  if (!item) return undefined;
  const record = keyRecordFromItem(item);
  if (!record) throw new DependencyError('keys', 'key record is malformed');
  return record;
}

export interface IssueOptions {
  tier: Tier;
  label?: string;
  /** Partner only; defaults to PARTNER_DEFAULT_LIMITS (pass `partnerDefaults()` to honour the env). */
  limits?: Limits;
  /** When the key starts being refused (`invalid_key`); none: it never expires. */
  expires?: Date;
  now?: Date;
}

/**
 * Issue a fresh key. The returned `key` is the only copy: show it once, then forget it.
 * @example
 * const { key, record } = await issueKey(admin, { tier: 'partner', label: 'acme', limits: { minute: 600, month: 1e6 } });
 */
export async function issueKey(
  admin: AdminOptions,
  options: IssueOptions,
): Promise<{ key: string; record: KeyRecord }> {
  const key = generateApiKey();
  const record: KeyRecord = {
    keyHash: hashApiKey(key),
    keyId: generateKeyId(),
    tier: options.tier,
    status: 'active',
    limits: limitsFor(options.tier, options.limits),
    created: (options.now ?? new Date()).toISOString(),
    ...(options.label ? { label: options.label } : {}),
    ...(options.expires ? { expires: options.expires.toISOString() } : {}),
  };
  try {
    await admin.client.send(
      new PutItemCommand({
        TableName: admin.keysTable,
        Item: keyItem(record),
        // 132 random bits never collide in practice; if they did, failing beats overwriting a customer's key.
        ConditionExpression: 'attribute_not_exists(key_hash)',
      }),
    );
  } catch (error) {
    throw fault('keys', admin.keysTable, 'issuing a key', error);
  }
  return { key, record };
}

/**
 * Make sure a given key exists, is active, unexpiring, and has this tier and limits (idempotent: its key id
 * and creation time survive re-registration). For seeding known development keys, never for customers.
 * @example await registerKey(admin, devKey, { tier: 'free' });
 */
export async function registerKey(
  admin: AdminOptions,
  key: string,
  options: IssueOptions,
): Promise<KeyRecord> {
  if (!API_KEY_PATTERN.test(key))
    throw new RangeError('not a key of the form pk_live_ + 22 base64url characters');
  const limits = limitsFor(options.tier, options.limits);
  const label = options.label ? ', label = :label' : '';
  try {
    const response = await admin.client.send(
      new UpdateItemCommand({
        TableName: admin.keysTable,
        Key: { [KEYS_SCHEMA.partitionKey]: { S: hashApiKey(key) } },
        UpdateExpression: `SET key_id = if_not_exists(key_id, :id), created = if_not_exists(created, :created), tier = :tier, #status = :active, limit_minute = :minute, limit_month = :month${label} REMOVE expires`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':id': { S: generateKeyId() },
          ':created': { S: (options.now ?? new Date()).toISOString() },
          ':tier': { S: options.tier },
          ':active': { S: 'active' },
          ':minute': { N: String(limits.minute) },
          ':month': { N: String(limits.month) },
          ...(options.label ? { ':label': { S: options.label } } : {}),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return recordOf(response.Attributes)!;
  } catch (error) {
    if (error instanceof DependencyError) throw error;
    throw fault('keys', admin.keysTable, 'registering a key', error);
  }
}

/**
 * Every key record, oldest first (a Scan: for the operator, not the request path).
 * @example for (const record of await listKeys(admin)) console.log(record.keyId, record.status);
 */
export async function listKeys(admin: AdminOptions): Promise<KeyRecord[]> {
  const records: KeyRecord[] = [];
  let start: Item | undefined;
  try {
    do {
      const page = await admin.client.send(
        new ScanCommand({ TableName: admin.keysTable, ExclusiveStartKey: start }),
      );
      for (const item of page.Items ?? []) records.push(recordOf(item)!);
      start = page.LastEvaluatedKey;
    } while (start);
  } catch (error) {
    if (error instanceof DependencyError) throw error;
    throw fault('keys', admin.keysTable, 'listing keys', error);
  }
  return records.sort((a, b) => a.created.localeCompare(b.created) || a.keyId.localeCompare(b.keyId));
}

/**
 * The record of a key id, or undefined.
 * @example const record = await findKey(admin, 'key_3fG7xQ2mPa');
 */
export async function findKey(admin: AdminOptions, keyId: string): Promise<KeyRecord | undefined> {
  try {
    const response = await admin.client.send(
      new QueryCommand({
        TableName: admin.keysTable,
        IndexName: KEYS_SCHEMA.keyIdIndex,
        KeyConditionExpression: 'key_id = :id',
        ExpressionAttributeValues: { ':id': { S: keyId } },
      }),
    );
    return recordOf(response.Items?.[0]);
  } catch (error) {
    if (error instanceof DependencyError) throw error;
    throw fault('keys', admin.keysTable, 'finding a key', error);
  }
}

export type RevokeOutcome =
  | { ok: true; record: KeyRecord; alreadyRevoked: boolean }
  | { ok: false; reason: 'not-found' };

export type EnableOutcome =
  | { ok: true; record: KeyRecord; alreadyActive: boolean }
  | { ok: false; reason: 'not-found' };

export type ChangeOutcome = { ok: true; record: KeyRecord } | { ok: false; reason: 'not-found' };

export type LimitsOutcome =
  | { ok: true; record: KeyRecord; previous: Limits }
  | { ok: false; reason: 'not-found' | 'free-tier' };

/**
 * Update the record of `keyId` with `update` (a SET or REMOVE expression) and return it as stored after the
 * write. 'not-found' when there is no such key, or when it was deleted between finding it and the write.
 */
async function updateKey(
  admin: AdminOptions,
  record: KeyRecord,
  action: string,
  update: {
    expression: string;
    names?: Record<string, string>;
    values?: Record<string, AttributeValue>;
  },
): Promise<ChangeOutcome> {
  try {
    const response = await admin.client.send(
      new UpdateItemCommand({
        TableName: admin.keysTable,
        Key: { [KEYS_SCHEMA.partitionKey]: { S: record.keyHash } },
        UpdateExpression: update.expression,
        // Never create a half record if the key was deleted meanwhile.
        ConditionExpression: 'attribute_exists(key_hash)',
        ...(update.names && { ExpressionAttributeNames: update.names }),
        ...(update.values && { ExpressionAttributeValues: update.values }),
        ReturnValues: 'ALL_NEW',
      }),
    );
    return { ok: true, record: recordOf(response.Attributes)! };
  } catch (error) {
    if ((error as { name?: string }).name === 'ConditionalCheckFailedException') {
      return { ok: false, reason: 'not-found' };
    }
    if (error instanceof DependencyError) throw error;
    throw fault('keys', admin.keysTable, action, error);
  }
}

const STATUS = { '#status': 'status' };

/**
 * Revoke a key by id. The proxy refuses it once its cached lookup expires (KEY_CACHE_TTL_MS).
 * @example const outcome = await revokeKey(admin, 'key_3fG7xQ2mPa'); // { ok: true, alreadyRevoked: false, … }
 */
export async function revokeKey(admin: AdminOptions, keyId: string): Promise<RevokeOutcome> {
  const found = await findKey(admin, keyId);
  if (!found) return { ok: false, reason: 'not-found' };
  if (found.status === 'revoked') return { ok: true, record: found, alreadyRevoked: true };
  const outcome = await updateKey(admin, found, 'revoking a key', {
    expression: 'SET #status = :revoked',
    names: STATUS,
    values: { ':revoked': { S: 'revoked' } },
  });
  return outcome.ok ? { ...outcome, alreadyRevoked: false } : outcome;
}

/**
 * Make a revoked key active again (its id, limits, expiry and counters are kept). The proxy accepts it once
 * its cached refusal expires (KEY_NEGATIVE_CACHE_TTL_MS). An expired key stays refused until its expiry is
 * changed ({@link setExpiry}).
 * @example const outcome = await enableKey(admin, 'key_3fG7xQ2mPa'); // { ok: true, alreadyActive: false, … }
 */
export async function enableKey(admin: AdminOptions, keyId: string): Promise<EnableOutcome> {
  const found = await findKey(admin, keyId);
  if (!found) return { ok: false, reason: 'not-found' };
  if (found.status === 'active') return { ok: true, record: found, alreadyActive: true };
  const outcome = await updateKey(admin, found, 'enabling a key', {
    expression: 'SET #status = :active',
    names: STATUS,
    values: { ':active': { S: 'active' } },
  });
  return outcome.ok ? { ...outcome, alreadyActive: false } : outcome;
}

/**
 * Change a partner key's limits; a limit not given stays as it is. Free-tier limits are the published ones
 * (spec §8) and cannot change. The outcome carries the limits before the change.
 * @example await setLimits(admin, 'key_3fG7xQ2mPa', { minute: 1200 }); // { ok: true, record, previous: { minute: 600, … } }
 */
export async function setLimits(
  admin: AdminOptions,
  keyId: string,
  limits: Partial<Limits>,
): Promise<LimitsOutcome> {
  const found = await findKey(admin, keyId);
  if (!found) return { ok: false, reason: 'not-found' };
  if (found.tier === 'free') return { ok: false, reason: 'free-tier' };
  const chosen = limitsFor('partner', { ...found.limits, ...limits });
  const outcome = await updateKey(admin, found, 'changing limits', {
    expression: 'SET limit_minute = :minute, limit_month = :month',
    values: { ':minute': { N: String(chosen.minute) }, ':month': { N: String(chosen.month) } },
  });
  return outcome.ok ? { ...outcome, previous: found.limits } : outcome;
}

/**
 * Set the time from which a key is refused (`invalid_key`, as if revoked), or remove it (`null`: never).
 * @example await setExpiry(admin, 'key_3fG7xQ2mPa', new Date('2026-12-31T00:00:00Z')); // { ok: true, record }
 */
export async function setExpiry(
  admin: AdminOptions,
  keyId: string,
  expires: Date | null,
): Promise<ChangeOutcome> {
  const found = await findKey(admin, keyId);
  if (!found) return { ok: false, reason: 'not-found' };
  return updateKey(
    admin,
    found,
    'setting an expiry',
    expires === null
      ? { expression: 'REMOVE expires' }
      : { expression: 'SET expires = :expires', values: { ':expires': { S: expires.toISOString() } } },
  );
}
