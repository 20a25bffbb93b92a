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
 * An UpdateItem that failed without telling whether it was applied (no answer: the connection closed or
 * timed out after the request was sent; or a 5xx, which DynamoDB documents as "may have succeeded"). Named
 * so that the SDK's retry strategy does not send it again (it would count the request twice if the first had
 * landed); `status` is the HTTP status when there was an answer. The failure it stands for is `sent`, not a
 * `cause`: the SDK classifies an error by its causes too.
 */
export class UnansweredWriteError extends Error {
  override name = 'UnansweredWriteError';
  constructor(
    readonly sent: unknown,
    readonly status: number | undefined,
  ) {
    super(`the write's outcome is unknown (${(sent as Error)?.name ?? 'error'})`);
  }
}

/**
 * The SDK client as a transport. UpdateItem is resent by the SDK only when DynamoDB refused it (throttling:
 * not applied); any failure that leaves its outcome unknown reaches the meter at once, as
 * {@link UnansweredWriteError} — the meter then looks for its own write (dynamo.ts).
 * @example new DynamoQuotaMeter({ transport: new SdkCounterTransport(dynamoClient()), table: 'counters' })
 */
export class SdkCounterTransport implements CounterTransport {
  readonly #client: DynamoDBClient;

  constructor(client: DynamoDBClient) {
    this.#client = client;
  }

  async updateItem(input: UpdateItemCommandInput, signal?: AbortSignal): Promise<UpdateOutcome> {
    const { UpdateItemCommand } = await commands();
    const command = new UpdateItemCommand(input);
    // Inside the retry middleware (finalizeRequest), outside the deserializer: it sees network failures and
    // service errors before the retry strategy decides, and hides from it those that may have landed.
    command.middlewareStack.add(
      (next) => async (args) => {
        try {
          return await next(args);
        } catch (error) {
          const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
          if (status !== undefined && status < 500) throw error;
          throw new UnansweredWriteError(error, status);
        }
      },
      { step: 'deserialize', priority: 'high', name: 'meterWriteNotResent' },
    );
    try {
      const response = await this.#client.send(command, { abortSignal: signal });
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
