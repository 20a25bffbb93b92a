/**
 * Key administration's DynamoDB calls, one typed method per thing it reads or writes: keys (by hash, by id, by
 * owner), each change of a key with the conditions that keep the owner's cap exact (admin/ledger.ts), an
 * owner's ledger, idempotency records and the counters the meter writes. No update expression is written
 * outside this file. Every call is a lean signed request (aws/dynamodb.ts, no SDK), sent again after a
 * throttling or transient answer — every write here is conditional or idempotent, so one that lands twice
 * changes nothing more — and ends by the deadline of the admin call it serves ({@link AdminTables.within}).
 * Every fault comes out as an {@link AdminTableError} naming the table and what was being done, `transient`
 * when a retry soon may succeed (the API answers 503 with Retry-After).
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { LeanDynamo } from '../aws/dynamodb.js';
import { AwsCallError } from '../aws/signed.js';
import { type Dependency, DependencyError } from '../store/errors.js';
import { COUNTER_ATTRIBUTES } from '../tables/counters.js';
import {
  type Item,
  KEY_ATTRIBUTES,
  type KeyRecord,
  keyItem,
  keyRecordFromItem,
  type Limits,
} from '../tables/keys.js';
import { COUNTERS_SCHEMA, KEYS_SCHEMA, type TableNames } from '../tables/schema.js';

export interface AdminTablesOptions extends TableNames {
  /** How calls reach DynamoDB: lean signed requests. */
  dynamo: LeanDynamo;
  /** Ends every call (an admin call's deadline); none: each call ends by the client's own bounds. */
  signal?: AbortSignal | undefined;
}

/** DynamoDB's answers for a request refused for throughput (nothing was applied): worth a retry soon. */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'LimitExceededException',
]);

/**
 * A DynamoDB call on one table failed: "DynamoDB table catalogue-keys: Requested resource not found
 * (ResourceNotFoundException), while listing keys".
 */
export class AdminTableError extends DependencyError {
  override name = 'AdminTableError';
  readonly table: string;
  /** What was being done: "listing keys". */
  readonly action: string;
  /** The service's answer: "Requested resource not found (ResourceNotFoundException)". */
  readonly reason: string;
  /** DynamoDB refused for throughput (or a 5xx / no answer in time): a retry after a short wait may succeed. */
  readonly transient: boolean;
  constructor(
    dependency: Dependency,
    failure: { table: string; action: string; reason: string; transient: boolean },
    options?: { cause?: unknown },
  ) {
    const { table, action, reason } = failure;
    super(dependency, `DynamoDB table ${table}: ${reason}, while ${action}`, options);
    this.table = table;
    this.action = action;
    this.reason = reason;
    this.transient = failure.transient;
  }
}

function fault(
  on: { dependency: Dependency; table: string; action: string; signal: AbortSignal | undefined },
  error: unknown,
): AdminTableError {
  if (error instanceof AdminTableError) return error;
  const { name, message } = error as { name?: string; message?: string };
  const status = error instanceof AwsCallError ? error.status : undefined;
  const transient = THROTTLING.has(name ?? '') || status === undefined || status >= 500;
  const reason = on.signal?.aborted
    ? "no answer before the call's deadline"
    : `${message || 'failed'}${name && name !== 'Error' ? ` (${name})` : ''}`;
  const { dependency, table, action } = on;
  return new AdminTableError(dependency, { table, action, reason, transient }, { cause: error });
}

const conditionFailed = (error: unknown) =>
  (error as { name?: string }).name === 'ConditionalCheckFailedException';

function recordOf(item: Item, table: string): KeyRecord {
  const record = keyRecordFromItem(item);
  if (!record) {
    const malformed = {
      table,
      action: 'reading a key',
      reason: 'a key record is malformed',
      transient: false,
    };
    throw new AdminTableError('keys', malformed);
  }
  return record;
}

/** Where an owner's listing goes on: after this key (created, key id). */
export interface OwnerPosition {
  created: string;
  keyId: string;
}

/** An owner's ledger as stored: its version (for conditional writes) and its entries as written. */
export interface StoredLedger {
  version: number;
  entries: string;
}

/**
 * What must still hold of a key item when a write that may make it usable lands (admin/ledger.ts says why):
 * - `ledger`: its ledger entry is there from this ledger version on (no prune has fenced the key since);
 * - `expiredAt`: its expiry has passed at this time (made active, it stays refused);
 * - `unusableAt`: it is revoked, or its expiry has passed at this time;
 * - `revoked`: it is revoked (a new expiry leaves it refused);
 * - `unowned`: it has no owner (no ledger counts it);
 * - `expiresFrom`: it has no expiry, or one not before this time (a new expiry only brings it forward);
 * - `notRolled`: it names no successor (a key rolled away ends at its roll's expiry).
 */
export type KeyGuard =
  | { ledger: number }
  | { expiredAt: Date }
  | { unusableAt: Date }
  | { revoked: true }
  | { unowned: true }
  | { expiresFrom: string }
  | { notRolled: true };

/** A condition expression with the names and values it uses (DynamoDB refuses unused ones). */
interface Condition {
  expression: string;
  names: Record<string, string>;
  values: Record<string, AttributeValue>;
}

const REVOKED: AttributeValue = { S: 'revoked' };
const EXPIRED_AT = (now: Date): Condition => ({
  expression: '(attribute_exists(#expires) AND #expires <= :now)',
  names: { '#expires': KEY_ATTRIBUTES.expires },
  values: { ':now': { S: now.toISOString() } },
});

/** The condition a guard stands for. Expiries are stored in UTC (toISOString), so they compare as text. */
function conditionOf(guard: KeyGuard): Condition {
  if ('ledger' in guard) {
    return {
      expression: '(attribute_not_exists(#fence) OR #fence < :ledger)',
      names: { '#fence': KEYS_SCHEMA.fenceAttribute },
      values: { ':ledger': { N: String(guard.ledger) } },
    };
  }
  if ('expiredAt' in guard) return EXPIRED_AT(guard.expiredAt);
  if ('unusableAt' in guard) {
    const expired = EXPIRED_AT(guard.unusableAt);
    return {
      expression: `(#status = :revoked OR ${expired.expression})`,
      names: { '#status': KEY_ATTRIBUTES.status, ...expired.names },
      values: { ':revoked': REVOKED, ...expired.values },
    };
  }
  if ('revoked' in guard) {
    return {
      expression: '#status = :revoked',
      names: { '#status': KEY_ATTRIBUTES.status },
      values: { ':revoked': REVOKED },
    };
  }
  if ('unowned' in guard)
    return {
      expression: 'attribute_not_exists(#owner)',
      names: { '#owner': KEY_ATTRIBUTES.owner },
      values: {},
    };
  if ('notRolled' in guard) {
    const names = { '#rolled': KEY_ATTRIBUTES.rolledTo };
    return { expression: 'attribute_not_exists(#rolled)', names, values: {} };
  }
  return {
    expression: '(attribute_not_exists(#expires) OR #expires >= :from)',
    names: { '#expires': KEY_ATTRIBUTES.expires },
    values: { ':from': { S: guard.expiresFrom } },
  };
}

/** A change of a key item: attributes set, attributes removed, and what must hold for it to land. */
interface KeyChange {
  set?: Record<string, AttributeValue>;
  remove?: string[];
  conditions?: Condition[];
}

/** BatchGetItem reads at most 100 items per call. */
const BATCH_ITEMS = 100;
/** Rounds of unprocessed items (throttling) before giving up. */
const BATCH_ROUNDS = 5;

export class AdminTables {
  readonly keysTable: string;
  readonly countersTable: string;
  readonly #dynamo: LeanDynamo;
  readonly #signal: AbortSignal | undefined;

  constructor(options: AdminTablesOptions) {
    this.#dynamo = options.dynamo;
    this.keysTable = options.keysTable;
    this.countersTable = options.countersTable;
    this.#signal = options.signal;
  }

  /**
   * The same tables, every call of which ends by `signal`: an admin call's deadline (AbortSignal.timeout),
   * after which nothing more of the call is sent.
   * @example const bounded = tables.within(AbortSignal.timeout(ADMIN_DEADLINE_MS));
   */
  within(signal: AbortSignal): AdminTables {
    const { keysTable, countersTable } = this;
    return new AdminTables({ dynamo: this.#dynamo, keysTable, countersTable, signal });
  }

  #call(operation: Parameters<LeanDynamo['call']>[0], input: object) {
    return this.#dynamo.call(operation, input, this.#signal);
  }

  async #keys<T>(action: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw fault({ dependency: 'keys', table: this.keysTable, action, signal: this.#signal }, error);
    }
  }

  async #counters<T>(action: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw fault({ dependency: 'quota', table: this.countersTable, action, signal: this.#signal }, error);
    }
  }

  /**
   * The key with this public id (the key-id index: on AWS eventually consistent, so a key issued a moment
   * ago may not be found for up to about a second).
   */
  keyById(keyId: string): Promise<KeyRecord | undefined> {
    return this.#keys('finding a key', async () => {
      const response = await this.#call('Query', {
        TableName: this.keysTable,
        IndexName: KEYS_SCHEMA.keyIdIndex,
        KeyConditionExpression: '#id = :id',
        ExpressionAttributeNames: { '#id': KEYS_SCHEMA.keyIdAttribute },
        ExpressionAttributeValues: { ':id': { S: keyId } },
      });
      const item = (response.Items as Item[] | undefined)?.[0];
      return item && recordOf(item, this.keysTable);
    });
  }

  /** The keys with these hashes, read consistently (a BatchGetItem per 100). */
  keysByHash(hashes: readonly string[]): Promise<Map<string, KeyRecord>> {
    return this.#keys('reading keys', async () => {
      const found = new Map<string, KeyRecord>();
      const keys = [...new Set(hashes)].map((hash) => ({ [KEYS_SCHEMA.partitionKey]: { S: hash } }));
      for (const item of await this.#batchGet(this.keysTable, keys)) {
        const record = recordOf(item, this.keysTable);
        found.set(record.keyHash, record);
      }
      return found;
    });
  }

  /**
   * Write a new key item; nothing is overwritten. `created` when it was written, else the key already stored
   * under that hash (a second write of the same planned key: its id tells).
   */
  createKey(record: KeyRecord): Promise<'created' | KeyRecord | undefined> {
    return this.#keys('issuing a key', async () => {
      try {
        await this.#call('PutItem', {
          TableName: this.keysTable,
          Item: keyItem(record),
          ConditionExpression: 'attribute_not_exists(#hash)',
          ExpressionAttributeNames: { '#hash': KEYS_SCHEMA.partitionKey },
        });
        return 'created';
      } catch (error) {
        if (!conditionFailed(error)) throw error;
        const response = await this.#call('GetItem', {
          TableName: this.keysTable,
          Key: { [KEYS_SCHEMA.partitionKey]: { S: record.keyHash } },
          ConsistentRead: true,
        });
        const item = response.Item as Item | undefined;
        return item && recordOf(item, this.keysTable);
      }
    });
  }

  /** Revoke a key: the key as stored after, or undefined when there is no such key. */
  revokeKey(keyHash: string): Promise<KeyRecord | undefined> {
    return this.#change(keyHash, 'revoking a key', { set: { [KEY_ATTRIBUTES.status]: REVOKED } });
  }

  /** Make a key active again, where `guard` holds: the key after, or undefined (no key, or the guard failed). */
  activateKey(keyHash: string, guard: KeyGuard): Promise<KeyRecord | undefined> {
    return this.#change(keyHash, 'enabling a key', {
      set: { [KEY_ATTRIBUTES.status]: { S: 'active' } },
      conditions: [conditionOf(guard)],
    });
  }

  /** Set a key's expiry (null: never), where every guard holds: the key after, or undefined. */
  setKeyExpiry(
    keyHash: string,
    expires: Date | null,
    guards: readonly KeyGuard[],
  ): Promise<KeyRecord | undefined> {
    return this.#change(keyHash, 'setting an expiry', {
      ...(expires === null
        ? { remove: [KEY_ATTRIBUTES.expires] }
        : { set: { [KEY_ATTRIBUTES.expires]: { S: expires.toISOString() } } }),
      conditions: guards.map(conditionOf),
    });
  }

  /** Change a key's limits: the key after, or undefined when there is no such key. */
  setKeyLimits(keyHash: string, limits: Limits): Promise<KeyRecord | undefined> {
    return this.#change(keyHash, 'changing limits', {
      set: {
        [KEY_ATTRIBUTES.limitMinute]: { N: String(limits.minute) },
        [KEY_ATTRIBUTES.limitMonth]: { N: String(limits.month) },
      },
    });
  }

  /** Give a key without an owner its owner, where `guard` holds too: the key after, or undefined. */
  setKeyOwner(keyHash: string, owner: string, guard: KeyGuard): Promise<KeyRecord | undefined> {
    return this.#change(keyHash, 'setting an owner', {
      set: { [KEY_ATTRIBUTES.owner]: { S: owner } },
      conditions: [conditionOf({ unowned: true }), conditionOf(guard)],
    });
  }

  /**
   * Record that a key was rolled to `next` and expires at `expires`, or earlier if it was to expire earlier:
   * the key after, or undefined when it was rolled to another key first (or there is no such key). Marking it
   * again for the same `next` is harmless.
   */
  async markRolled(keyHash: string, next: string, expires: string): Promise<KeyRecord | undefined> {
    const rolledToNext: Condition = {
      expression: '(attribute_not_exists(#rolled) OR #rolled = :next)',
      names: { '#rolled': KEY_ATTRIBUTES.rolledTo },
      values: { ':next': { S: next } },
    };
    const marked = await this.#change(keyHash, 'rolling a key', {
      set: { [KEY_ATTRIBUTES.rolledTo]: { S: next }, [KEY_ATTRIBUTES.expires]: { S: expires } },
      conditions: [rolledToNext, conditionOf({ expiresFrom: expires })],
    });
    // It was to expire earlier (its expiry brought forward since the roll read it): that expiry stays.
    return (
      marked ??
      this.#change(keyHash, 'rolling a key', {
        set: { [KEY_ATTRIBUTES.rolledTo]: { S: next } },
        conditions: [rolledToNext],
      })
    );
  }

  /**
   * Fence a key before its owner's ledger drops its entry (admin/ledger.ts): only while it is refused at `now`
   * (revoked, or expired), and never back to an older ledger version. True when the fence is in place.
   */
  async fenceKey(keyHash: string, ledgerVersion: number, now: Date): Promise<boolean> {
    const fence = KEYS_SCHEMA.fenceAttribute;
    const record = await this.#change(keyHash, 'fencing a key', {
      set: { [fence]: { N: String(ledgerVersion) } },
      conditions: [
        conditionOf({ unusableAt: now }),
        {
          expression: '(attribute_not_exists(#fenced) OR #fenced <= :version)',
          names: { '#fenced': fence },
          values: { ':version': { N: String(ledgerVersion) } },
        },
      ],
    });
    return record !== undefined;
  }

  /**
   * Make sure a known key exists, active, unexpiring, with this tier and limits; its key id and creation time
   * survive re-registration (dev keys: npm start, benchmarks).
   */
  registerKey(
    keyHash: string,
    fields: { keyId: string; created: string; tier: KeyRecord['tier']; limits: Limits; label?: string },
  ): Promise<KeyRecord> {
    return this.#keys('registering a key', async () => {
      const label = fields.label ? ', #label = :label' : '';
      const response = await this.#call('UpdateItem', {
        TableName: this.keysTable,
        Key: { [KEYS_SCHEMA.partitionKey]: { S: keyHash } },
        UpdateExpression: `SET #id = if_not_exists(#id, :id), #created = if_not_exists(#created, :created), #tier = :tier, #status = :active, #minute = :minute, #month = :month${label} REMOVE #expires`,
        ExpressionAttributeNames: {
          '#id': KEY_ATTRIBUTES.keyId,
          '#created': KEY_ATTRIBUTES.created,
          '#tier': KEY_ATTRIBUTES.tier,
          '#status': KEY_ATTRIBUTES.status,
          '#minute': KEY_ATTRIBUTES.limitMinute,
          '#month': KEY_ATTRIBUTES.limitMonth,
          '#expires': KEY_ATTRIBUTES.expires,
          ...(fields.label ? { '#label': KEY_ATTRIBUTES.label } : {}),
        },
        ExpressionAttributeValues: {
          ':id': { S: fields.keyId },
          ':created': { S: fields.created },
          ':tier': { S: fields.tier },
          ':active': { S: 'active' },
          ':minute': { N: String(fields.limits.minute) },
          ':month': { N: String(fields.limits.month) },
          ...(fields.label ? { ':label': { S: fields.label } } : {}),
        },
        ReturnValues: 'ALL_NEW',
      });
      return recordOf((response.Attributes as Item | undefined) ?? {}, this.keysTable);
    });
  }

  /**
   * One conditional UpdateItem of an existing key item (never creates one): the key after it, or undefined
   * when there is no such key or a condition does not hold.
   */
  #change(keyHash: string, action: string, change: KeyChange): Promise<KeyRecord | undefined> {
    return this.#keys(action, async () => {
      const names: Record<string, string> = { '#hash': KEYS_SCHEMA.partitionKey };
      const values: Record<string, AttributeValue> = {};
      const set = Object.entries(change.set ?? {}).map(([attribute, value], i) => {
        names[`#s${i}`] = attribute;
        values[`:s${i}`] = value;
        return `#s${i} = :s${i}`;
      });
      const remove = (change.remove ?? []).map((attribute, i) => {
        names[`#r${i}`] = attribute;
        return `#r${i}`;
      });
      for (const condition of change.conditions ?? []) {
        Object.assign(names, condition.names);
        Object.assign(values, condition.values);
      }
      try {
        const response = await this.#call('UpdateItem', {
          TableName: this.keysTable,
          Key: { [KEYS_SCHEMA.partitionKey]: { S: keyHash } },
          UpdateExpression: [
            set.length ? `SET ${set.join(', ')}` : '',
            remove.length ? `REMOVE ${remove.join(', ')}` : '',
          ]
            .filter(Boolean)
            .join(' '),
          // Never create a half record if the key was deleted meanwhile.
          ConditionExpression: [
            'attribute_exists(#hash)',
            ...(change.conditions ?? []).map((c) => c.expression),
          ].join(' AND '),
          ExpressionAttributeNames: names,
          ...(Object.keys(values).length > 0 && { ExpressionAttributeValues: values }),
          ReturnValues: 'ALL_NEW',
        });
        const item = response.Attributes as Item | undefined;
        return item && recordOf(item, this.keysTable);
      } catch (error) {
        if (conditionFailed(error)) return undefined;
        throw error;
      }
    });
  }

  /**
   * One page of an owner's keys, oldest first (the owner index), after `after` when given. `more` tells
   * whether keys follow. Reads until the page is complete: keys created in the same millisecond are ordered
   * by key id, so a page never splits them.
   */
  ownerKeys(
    owner: string,
    limit: number,
    after?: OwnerPosition,
  ): Promise<{ records: KeyRecord[]; more: boolean }> {
    return this.#keys("listing an owner's keys", async () => {
      const records: KeyRecord[] = [];
      let start: Item | undefined;
      const after_ = (record: KeyRecord) =>
        !after ||
        record.created > after.created ||
        (record.created === after.created && record.keyId > after.keyId);
      // Keys come in `created` order; a page is complete once a key newer than its last one has been read.
      const complete = () => {
        if (records.length <= limit) return false;
        const sorted = sortKeys(records);
        return sorted[sorted.length - 1]!.created > sorted[limit - 1]!.created;
      };
      do {
        const page = await this.#call('Query', {
          TableName: this.keysTable,
          IndexName: KEYS_SCHEMA.ownerIndex,
          KeyConditionExpression: after ? '#owner = :owner AND #created >= :after' : '#owner = :owner',
          ExpressionAttributeNames: {
            '#owner': KEYS_SCHEMA.ownerAttribute,
            ...(after && { '#created': KEYS_SCHEMA.ownerSortAttribute }),
          },
          ExpressionAttributeValues: {
            ':owner': { S: owner },
            ...(after && { ':after': { S: after.created } }),
          },
          Limit: limit + 1,
          ...(start && { ExclusiveStartKey: start }),
        });
        for (const item of (page.Items as Item[] | undefined) ?? []) {
          const record = recordOf(item, this.keysTable);
          if (after_(record)) records.push(record);
        }
        start = page.LastEvaluatedKey as Item | undefined;
      } while (start && !complete());
      const sorted = sortKeys(records);
      return { records: sorted.slice(0, limit), more: sorted.length > limit };
    });
  }

  /**
   * One page of every key (a Scan: for the operator's CLI, never the API), ledger items skipped; `next`
   * positions the following page, undefined after the last.
   */
  scanKeys(start?: Item): Promise<{ records: KeyRecord[]; next: Item | undefined }> {
    return this.#keys('listing keys', async () => {
      const page = await this.#call('Scan', {
        TableName: this.keysTable,
        ...(start && { ExclusiveStartKey: start }),
        FilterExpression: 'attribute_exists(#id)',
        ExpressionAttributeNames: { '#id': KEYS_SCHEMA.keyIdAttribute },
      });
      const records = ((page.Items as Item[] | undefined) ?? []).map((item) =>
        recordOf(item, this.keysTable),
      );
      return { records, next: page.LastEvaluatedKey as Item | undefined };
    });
  }

  /** An owner's ledger, read consistently; version 0 and no entries when it has none yet. */
  readLedger(owner: string): Promise<StoredLedger> {
    return this.#keys("reading an owner's ledger", async () => {
      const response = await this.#call('GetItem', {
        TableName: this.keysTable,
        Key: { [KEYS_SCHEMA.partitionKey]: { S: `${KEYS_SCHEMA.ledgerPrefix}${owner}` } },
        ConsistentRead: true,
      });
      const item = response.Item as Item | undefined;
      return { version: Number(item?.version?.N ?? 0), entries: item?.entries?.S ?? '{}' };
    });
  }

  /**
   * Write an owner's ledger over the version read; false when another write came first. A write whose answer
   * was lost and that is sent again finds its own version there, and reports false: the caller reads again.
   */
  writeLedger(owner: string, entries: string, readVersion: number): Promise<boolean> {
    return this.#keys("writing an owner's ledger", async () => {
      try {
        await this.#call('PutItem', {
          TableName: this.keysTable,
          Item: {
            [KEYS_SCHEMA.partitionKey]: { S: `${KEYS_SCHEMA.ledgerPrefix}${owner}` },
            ledger_owner: { S: owner },
            version: { N: String(readVersion + 1) },
            entries: { S: entries },
          },
          ConditionExpression: readVersion === 0 ? 'attribute_not_exists(version)' : 'version = :read',
          ...(readVersion === 0
            ? {}
            : { ExpressionAttributeValues: { ':read': { N: String(readVersion) } } }),
        });
        return true;
      } catch (error) {
        if (conditionFailed(error)) return false;
        throw error;
      }
    });
  }

  /** Write an idempotency record unless one exists under its partition key: true when this one was written. */
  putClaim(item: Item): Promise<boolean> {
    return this.#counters('recording an idempotency key', async () => {
      try {
        await this.#call('PutItem', {
          TableName: this.countersTable,
          Item: item,
          ConditionExpression: 'attribute_not_exists(#pk)',
          ExpressionAttributeNames: { '#pk': COUNTERS_SCHEMA.partitionKey },
        });
        return true;
      } catch (error) {
        if (conditionFailed(error)) return false;
        throw error;
      }
    });
  }

  /** An idempotency record, read consistently. */
  readClaim(pk: string): Promise<Item | undefined> {
    return this.#counters('reading an idempotency key', async () => {
      const response = await this.#call('GetItem', {
        TableName: this.countersTable,
        Key: { [COUNTERS_SCHEMA.partitionKey]: { S: pk } },
        ConsistentRead: true,
      });
      return response.Item as Item | undefined;
    });
  }

  /** Remove an idempotency record, only while it still names `keyId` (a refused call frees its key). */
  deleteClaim(pk: string, keyId: string): Promise<void> {
    return this.#counters('releasing an idempotency key', async () => {
      try {
        await this.#call('DeleteItem', {
          TableName: this.countersTable,
          Key: { [COUNTERS_SCHEMA.partitionKey]: { S: pk } },
          ConditionExpression: 'key_id = :id',
          ExpressionAttributeValues: { ':id': { S: keyId } },
        });
      } catch (error) {
        if (!conditionFailed(error)) throw error;
      }
    });
  }

  /**
   * Stop a key's counter items until `until` (Unix ms; tables/counters.ts `stopped_until`): from this write on
   * the meter admits none of the key's requests. A later stop already there stays; an item not there yet
   * (next month's) is made with the stop and its TTL only.
   */
  stopCounters(items: readonly { pk: string; expiresAt: number }[], until: number): Promise<void> {
    return this.#counters("stopping a revoked key's counters", async () => {
      for (const { pk, expiresAt } of items) {
        try {
          await this.#call('UpdateItem', {
            TableName: this.countersTable,
            Key: { [COUNTERS_SCHEMA.partitionKey]: { S: pk } },
            UpdateExpression: 'SET #stop = :until, #ttl = if_not_exists(#ttl, :expires)',
            ConditionExpression: 'attribute_not_exists(#stop) OR #stop < :until',
            ExpressionAttributeNames: {
              '#stop': COUNTER_ATTRIBUTES.stoppedUntil,
              '#ttl': COUNTERS_SCHEMA.ttlAttribute,
            },
            ExpressionAttributeValues: {
              ':until': { N: String(until) },
              ':expires': { N: String(expiresAt) },
            },
          });
        } catch (error) {
          if (!conditionFailed(error)) throw error;
        }
      }
    });
  }

  /** Remove the stops of a key's counter items (enable); an item that is not there is not made. */
  removeStops(pks: readonly string[]): Promise<void> {
    return this.#counters("lifting a key's stop", async () => {
      for (const pk of pks) {
        try {
          await this.#call('UpdateItem', {
            TableName: this.countersTable,
            Key: { [COUNTERS_SCHEMA.partitionKey]: { S: pk } },
            UpdateExpression: 'REMOVE #stop',
            ConditionExpression: 'attribute_exists(#stop)',
            ExpressionAttributeNames: { '#stop': COUNTER_ATTRIBUTES.stoppedUntil },
          });
        } catch (error) {
          if (!conditionFailed(error)) throw error;
        }
      }
    });
  }

  /** Owners' ledgers by owner, read consistently (a BatchGetItem per 100); an owner without one is absent. */
  ledgers(owners: readonly string[]): Promise<Map<string, StoredLedger>> {
    return this.#keys("reading owners' ledgers", async () => {
      const keys = [...new Set(owners)].map((owner) => ({
        [KEYS_SCHEMA.partitionKey]: { S: `${KEYS_SCHEMA.ledgerPrefix}${owner}` },
      }));
      const found = new Map<string, StoredLedger>();
      for (const item of await this.#batchGet(this.keysTable, keys)) {
        const owner = item.ledger_owner?.S;
        if (owner !== undefined) {
          found.set(owner, { version: Number(item.version?.N ?? 0), entries: item.entries?.S ?? '{}' });
        }
      }
      return found;
    });
  }

  /** Counter items by partition key (`<key id>#<YYYY-MM>`), read consistently. */
  counterItems(pks: readonly string[], projection?: readonly string[]): Promise<Map<string, Item>> {
    return this.#counters('reading usage', async () => {
      const keys = pks.map((pk) => ({ [COUNTERS_SCHEMA.partitionKey]: { S: pk } }));
      const found = new Map<string, Item>();
      for (const item of await this.#batchGet(this.countersTable, keys, projection)) {
        found.set(item[COUNTERS_SCHEMA.partitionKey]?.S ?? '', item);
      }
      return found;
    });
  }

  async #batchGet(table: string, all: Item[], projection?: readonly string[]): Promise<Item[]> {
    const items: Item[] = [];
    const names = projection && Object.fromEntries(projection.map((name, i) => [`#p${i}`, name]));
    for (let offset = 0; offset < all.length; offset += BATCH_ITEMS) {
      let keys: Item[] | undefined = all.slice(offset, offset + BATCH_ITEMS);
      for (let round = 0; keys?.length; round++) {
        if (round === BATCH_ROUNDS) {
          throw new AwsCallError('ProvisionedThroughputExceededException', 'items stayed unprocessed', 400);
        }
        const response = await this.#call('BatchGetItem', {
          RequestItems: {
            [table]: {
              Keys: keys,
              ConsistentRead: true,
              ...(names && {
                ProjectionExpression: Object.keys(names).join(', '),
                ExpressionAttributeNames: names,
              }),
            },
          },
        });
        items.push(...((response.Responses as Record<string, Item[]> | undefined)?.[table] ?? []));
        keys = (response.UnprocessedKeys as Record<string, { Keys?: Item[] }> | undefined)?.[table]?.Keys;
        if (keys?.length) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** round));
      }
    }
    return items;
  }
}

/** Keys oldest first; keys created in the same millisecond by key id. */
export function sortKeys(records: KeyRecord[]): KeyRecord[] {
  return [...records].sort((a, b) => a.created.localeCompare(b.created) || a.keyId.localeCompare(b.keyId));
}
