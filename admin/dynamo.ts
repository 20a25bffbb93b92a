/**
 * Key administration's DynamoDB calls (AWS SDK v3), one method per thing it reads or writes: keys (by hash, by
 * id, by owner), an owner's ledger (admin/ledger.ts), idempotency records (admin/idempotency.ts) and the
 * counters the meter writes. Every fault comes out as an {@link AdminTableError} naming the table and what
 * was being done, `throttled` when DynamoDB refused for throughput (the API answers 503 with Retry-After).
 */
import {
  type AttributeValue,
  BatchGetItemCommand,
  type BatchGetItemCommandOutput,
  DeleteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { type Dependency, DependencyError } from '../store/errors.js';
import { type Item, type KeyRecord, keyItem, keyRecordFromItem } from '../tables/keys.js';
import { COUNTERS_SCHEMA, KEYS_SCHEMA, type TableNames } from '../tables/schema.js';

export interface AdminTablesOptions extends TableNames {
  client: DynamoDBClient;
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
  /** DynamoDB refused for throughput (or a 5xx / no answer): a retry after a short wait may succeed. */
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

function fault(dependency: Dependency, table: string, action: string, error: unknown): AdminTableError {
  if (error instanceof AdminTableError) return error;
  const { name, message, $metadata } = error as {
    name?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
  };
  const named = name && name !== 'Error' ? ` (${name})` : '';
  const status = $metadata?.httpStatusCode;
  const transient = THROTTLING.has(name ?? '') || status === undefined || status >= 500;
  const reason = `${message || 'failed'}${named}`;
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

/** BatchGetItem reads at most 100 items per call. */
const BATCH_ITEMS = 100;
/** Rounds of unprocessed items (throttling) before giving up. */
const BATCH_ROUNDS = 5;

export class AdminTables {
  readonly client: DynamoDBClient;
  readonly keysTable: string;
  readonly countersTable: string;

  constructor(options: AdminTablesOptions) {
    this.client = options.client;
    this.keysTable = options.keysTable;
    this.countersTable = options.countersTable;
  }

  async #keys<T>(action: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw fault('keys', this.keysTable, action, error);
    }
  }

  async #counters<T>(action: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw fault('quota', this.countersTable, action, error);
    }
  }

  /**
   * The key with this public id (the key-id index: on AWS eventually consistent, so a key issued a moment
   * ago may not be found for up to about a second).
   */
  keyById(keyId: string): Promise<KeyRecord | undefined> {
    return this.#keys('finding a key', async () => {
      const response = await this.client.send(
        new QueryCommand({
          TableName: this.keysTable,
          IndexName: KEYS_SCHEMA.keyIdIndex,
          KeyConditionExpression: '#id = :id',
          ExpressionAttributeNames: { '#id': KEYS_SCHEMA.keyIdAttribute },
          ExpressionAttributeValues: { ':id': { S: keyId } },
        }),
      );
      const item = response.Items?.[0];
      return item && recordOf(item, this.keysTable);
    });
  }

  /** The keys with these hashes, read consistently (a BatchGetItem per 100). */
  keysByHash(hashes: readonly string[]): Promise<Map<string, KeyRecord>> {
    return this.#keys('reading keys', async () => {
      const found = new Map<string, KeyRecord>();
      const keys = hashes.map((hash) => ({ [KEYS_SCHEMA.partitionKey]: { S: hash } }));
      for (const item of await this.#batchGet(this.keysTable, keys, true)) {
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
        await this.client.send(
          new PutItemCommand({
            TableName: this.keysTable,
            Item: keyItem(record),
            ConditionExpression: 'attribute_not_exists(#hash)',
            ExpressionAttributeNames: { '#hash': KEYS_SCHEMA.partitionKey },
          }),
        );
        return 'created';
      } catch (error) {
        if (!conditionFailed(error)) throw error;
        const response = await this.client.send(
          new GetItemCommand({
            TableName: this.keysTable,
            Key: { [KEYS_SCHEMA.partitionKey]: { S: record.keyHash } },
            ConsistentRead: true,
          }),
        );
        return response.Item && recordOf(response.Item, this.keysTable);
      }
    });
  }

  /**
   * Update an existing key item (never creates one) and return it as stored after the write; undefined when
   * there is no such key, or when `condition` does not hold.
   */
  updateKey(
    keyHash: string,
    action: string,
    update: {
      expression: string;
      condition?: string;
      names?: Record<string, string>;
      values?: Record<string, AttributeValue>;
    },
  ): Promise<KeyRecord | undefined> {
    return this.#keys(action, async () => {
      try {
        const response = await this.client.send(
          new UpdateItemCommand({
            TableName: this.keysTable,
            Key: { [KEYS_SCHEMA.partitionKey]: { S: keyHash } },
            UpdateExpression: update.expression,
            // Never create a half record if the key was deleted meanwhile.
            ConditionExpression: ['attribute_exists(#hash)', update.condition].filter(Boolean).join(' AND '),
            ExpressionAttributeNames: { '#hash': KEYS_SCHEMA.partitionKey, ...update.names },
            ...(update.values && { ExpressionAttributeValues: update.values }),
            ReturnValues: 'ALL_NEW',
          }),
        );
        return response.Attributes && recordOf(response.Attributes, this.keysTable);
      } catch (error) {
        if (conditionFailed(error)) return undefined;
        throw error;
      }
    });
  }

  /** Update a key item, creating it when missing (dev keys only: register), and return it as stored. */
  updateKeyOrCreate(
    keyHash: string,
    action: string,
    update: { expression: string; names?: Record<string, string>; values: Record<string, AttributeValue> },
  ): Promise<KeyRecord> {
    return this.#keys(action, async () => {
      const response = await this.client.send(
        new UpdateItemCommand({
          TableName: this.keysTable,
          Key: { [KEYS_SCHEMA.partitionKey]: { S: keyHash } },
          UpdateExpression: update.expression,
          ...(update.names && { ExpressionAttributeNames: update.names }),
          ExpressionAttributeValues: update.values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return recordOf(response.Attributes ?? {}, this.keysTable);
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
        const page = await this.client.send(
          new QueryCommand({
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
            ExclusiveStartKey: start,
          }),
        );
        for (const item of page.Items ?? []) {
          const record = recordOf(item, this.keysTable);
          if (after_(record)) records.push(record);
        }
        start = page.LastEvaluatedKey;
      } while (start && !complete());
      const sorted = sortKeys(records);
      return { records: sorted.slice(0, limit), more: sorted.length > limit };
    });
  }

  /** Every key, oldest first (a Scan: for the operator's CLI, never the API). Ledger items are skipped. */
  allKeys(): Promise<KeyRecord[]> {
    return this.#keys('listing keys', async () => {
      const records: KeyRecord[] = [];
      let start: Item | undefined;
      do {
        const page = await this.client.send(
          new ScanCommand({
            TableName: this.keysTable,
            ExclusiveStartKey: start,
            FilterExpression: 'attribute_exists(#id)',
            ExpressionAttributeNames: { '#id': KEYS_SCHEMA.keyIdAttribute },
          }),
        );
        for (const item of page.Items ?? []) records.push(recordOf(item, this.keysTable));
        start = page.LastEvaluatedKey;
      } while (start);
      return sortKeys(records);
    });
  }

  /** An owner's ledger, read consistently; version 0 and no entries when it has none yet. */
  readLedger(owner: string): Promise<StoredLedger> {
    return this.#keys("reading an owner's ledger", async () => {
      const response = await this.client.send(
        new GetItemCommand({
          TableName: this.keysTable,
          Key: { [KEYS_SCHEMA.partitionKey]: { S: `${KEYS_SCHEMA.ledgerPrefix}${owner}` } },
          ConsistentRead: true,
        }),
      );
      const item = response.Item;
      return { version: Number(item?.version?.N ?? 0), entries: item?.entries?.S ?? '{}' };
    });
  }

  /** Write an owner's ledger over the version read; false when another write came first. */
  writeLedger(owner: string, entries: string, readVersion: number): Promise<boolean> {
    return this.#keys("writing an owner's ledger", async () => {
      try {
        await this.client.send(
          new PutItemCommand({
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
          }),
        );
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
        await this.client.send(
          new PutItemCommand({
            TableName: this.countersTable,
            Item: item,
            ConditionExpression: 'attribute_not_exists(#pk)',
            ExpressionAttributeNames: { '#pk': COUNTERS_SCHEMA.partitionKey },
          }),
        );
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
      const response = await this.client.send(
        new GetItemCommand({
          TableName: this.countersTable,
          Key: { [COUNTERS_SCHEMA.partitionKey]: { S: pk } },
          ConsistentRead: true,
        }),
      );
      return response.Item;
    });
  }

  /** Remove an idempotency record, only while it still names `keyId` (a refused call frees its key). */
  deleteClaim(pk: string, keyId: string): Promise<void> {
    return this.#counters('releasing an idempotency key', async () => {
      try {
        await this.client.send(
          new DeleteItemCommand({
            TableName: this.countersTable,
            Key: { [COUNTERS_SCHEMA.partitionKey]: { S: pk } },
            ConditionExpression: 'key_id = :id',
            ExpressionAttributeValues: { ':id': { S: keyId } },
          }),
        );
      } catch (error) {
        if (!conditionFailed(error)) throw error;
      }
    });
  }

  /** Counter items by partition key (`<key id>#<YYYY-MM>`), read consistently. */
  counterItems(pks: readonly string[], projection?: string[]): Promise<Map<string, Item>> {
    return this.#counters('reading usage', async () => {
      const keys = pks.map((pk) => ({ [COUNTERS_SCHEMA.partitionKey]: { S: pk } }));
      const found = new Map<string, Item>();
      for (const item of await this.#batchGet(this.countersTable, keys, true, projection)) {
        found.set(item[COUNTERS_SCHEMA.partitionKey]?.S ?? '', item);
      }
      return found;
    });
  }

  async #batchGet(table: string, all: Item[], consistent: boolean, projection?: string[]): Promise<Item[]> {
    const items: Item[] = [];
    const names = projection && Object.fromEntries(projection.map((name, i) => [`#p${i}`, name]));
    for (let offset = 0; offset < all.length; offset += BATCH_ITEMS) {
      let keys: Item[] | undefined = all.slice(offset, offset + BATCH_ITEMS);
      for (let round = 0; keys?.length; round++) {
        if (round === BATCH_ROUNDS) {
          throw Object.assign(new Error('stayed throttled'), { name: 'ThrottlingException' });
        }
        const response: BatchGetItemCommandOutput = await this.client.send(
          new BatchGetItemCommand({
            RequestItems: {
              [table]: {
                Keys: keys,
                ConsistentRead: consistent,
                ...(names && {
                  ProjectionExpression: Object.keys(names).join(', '),
                  ExpressionAttributeNames: names,
                }),
              },
            },
          }),
        );
        items.push(...(response.Responses?.[table] ?? []));
        keys = response.UnprocessedKeys?.[table]?.Keys;
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
