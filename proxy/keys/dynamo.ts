/** Key records in DynamoDB: one GetItem by `sha256(key)` per uncached lookup. */
import { DependencyError } from '../../store/errors.js';
import { type KeyRecord, keyRecordFromItem } from '../../tables/keys.js';
import { KEYS_SCHEMA } from '../../tables/schema.js';
import type { CounterTransport, Item } from '../quota/dynamo-transport.js';
import type { KeyStore } from './interface.js';

export interface DynamoKeyStoreOptions {
  /** The keys table (its contract: tables/schema.ts, tables/keys.ts). */
  table: string;
  /** How GetItem reaches DynamoDB: lean signed requests (LeanCounterTransport), as on Lambda. */
  transport: Pick<CounterTransport, 'getItem'>;
}

/**
 * Looks keys up by hash. Eventually consistent reads are enough: the cache in front already delays
 * revocation by its TTL, and DynamoDB replicas converge well within it.
 * @example
 * const keys = new DynamoKeyStore({ transport: new LeanCounterTransport({ region, credentials }), table: 'catalogue-keys' });
 * const record = await keys.lookup(hashApiKey(presentedKey), { signal: AbortSignal.timeout(1000) });
 */
export class DynamoKeyStore implements KeyStore {
  readonly #transport: Pick<CounterTransport, 'getItem'>;
  readonly #table: string;

  constructor(options: DynamoKeyStoreOptions) {
    this.#transport = options.transport;
    this.#table = options.table;
  }

  async lookup(keyHash: string, options: { signal?: AbortSignal } = {}): Promise<KeyRecord | undefined> {
    let item: Item | undefined;
    try {
      item = await this.#transport.getItem(
        { TableName: this.#table, Key: { [KEYS_SCHEMA.partitionKey]: { S: keyHash } } },
        options.signal,
      );
    } catch (error) {
      const name = (error as { name?: string }).name ?? 'error';
      throw new DependencyError('keys', `key lookup failed (${name})`, { cause: error });
    }
    if (!item) return undefined;
    const record = keyRecordFromItem(item);
    // A record we cannot read is an operator fault, not an unknown key: fail closed and say so.
    if (!record) throw new DependencyError('keys', 'key record is malformed');
    return record;
  }
}
