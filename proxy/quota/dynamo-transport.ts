/**
 * How the quota meter and the key store reach DynamoDB: two calls, one answer shape, two implementations —
 * the SDK client (here) and lean signed requests (dynamo-lean.ts). The meter's logic (dynamo.ts) and the key
 * lookups (keys/dynamo.ts) are written once against this interface, so both transports answer alike.
 */
import type {
  AttributeValue,
  DynamoDBClient,
  GetItemCommandInput,
  UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';

export type Item = Record<string, AttributeValue>;

/**
 * What an UpdateItem came to. A failed condition is an answer, not a fault: `item` is the item as it was
 * (`ReturnValuesOnConditionCheckFailure: ALL_OLD`), when the server returned it (AWS does, dynalite does not).
 */
export type UpdateOutcome = { ok: true; attributes: Item } | { ok: false; item: Item | undefined };

export interface CounterTransport {
  /** One UpdateItem. Throws an error named after the AWS error code (or network failure) otherwise. */
  updateItem(input: UpdateItemCommandInput, signal?: AbortSignal): Promise<UpdateOutcome>;
  /** One GetItem: the item, or undefined when there is none. Throws as `updateItem` does. */
  getItem(input: GetItemCommandInput, signal?: AbortSignal): Promise<Item | undefined>;
}

/**
 * The SDK's command classes, loaded on the first SDK call. The Lambda function meters and looks keys up
 * through the lean transport, and its bundle leaves `@aws-sdk/*` out (infra/proxy-function.ts): the
 * meter's and key store's `client` option, which builds this transport, must not pull the SDK in with it.
 */
const commands = () => import('@aws-sdk/client-dynamodb');

/**
 * The SDK client as a transport.
 * @example new DynamoQuotaMeter({ transport: new SdkCounterTransport(dynamoClient()), table: 'counters' })
 */
export class SdkCounterTransport implements CounterTransport {
  readonly #client: DynamoDBClient;

  constructor(client: DynamoDBClient) {
    this.#client = client;
  }

  async updateItem(input: UpdateItemCommandInput, signal?: AbortSignal): Promise<UpdateOutcome> {
    const { UpdateItemCommand } = await commands();
    try {
      const response = await this.#client.send(new UpdateItemCommand(input), { abortSignal: signal });
      return { ok: true, attributes: response.Attributes ?? {} };
    } catch (error) {
      const { name, Item } = error as { name?: string; Item?: Item };
      if (name === 'ConditionalCheckFailedException') return { ok: false, item: Item };
      throw error;
    }
  }

  async getItem(input: GetItemCommandInput, signal?: AbortSignal): Promise<Item | undefined> {
    const { GetItemCommand } = await commands();
    const response = await this.#client.send(new GetItemCommand(input), { abortSignal: signal });
    return response.Item;
  }
}
