/**
 * DynamoDB calls as lean signed requests (DynamoJsonProtocol, aws/dynamodb.ts), for the meter and the key
 * lookups: DynamoDB's JSON protocol takes the SDK's input shape as it is (AttributeValue maps are JSON already), so
 * a call is one JSON.stringify, one signature, one POST and one JSON.parse. What is sent again is this
 * transport's own: a read after a reset or a 500, a write only after throttling.
 */
import type { GetItemCommandInput, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import {
  type DynamoEndpointOptions,
  DynamoJsonProtocol,
  dynamoErrorCode,
  dynamoErrorOf,
} from '../../aws/dynamodb.js';
import type { AwsCallError, SignedRequest, SignedResponse } from '../../aws/signed.js';
import type { CounterTransport, Item, UpdateOutcome } from './dynamo-transport.js';

export interface LeanCounterTransportOptions extends DynamoEndpointOptions {
  /** Connections kept open to DynamoDB (default 50). */
  connections?: number;
}

type Operation = 'UpdateItem' | 'GetItem';

/** DynamoDB's answers for a request it refused for throughput: nothing was applied. */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

/** The error code of a write's answer when it is a throttling one (the only kind a write is resent after). */
const throttlingErrorCode = (response: SignedResponse) => {
  const code = dynamoErrorCode(response);
  return code !== undefined && THROTTLING.has(code) ? code : undefined;
};

/**
 * What is sent again. A read after a reset or a 500, as the SDK does. A write only after throttling (not
 * applied): after a reset or a 500 it may have landed, and sent again it would count twice; the meter looks for
 * its own write instead (dynamo.ts).
 */
const RESEND: Record<Operation, Pick<SignedRequest, 'retryOnReset' | 'errorCode'>> = {
  GetItem: { retryOnReset: true, errorCode: dynamoErrorCode },
  UpdateItem: { retryOnReset: false, errorCode: throttlingErrorCode },
};

/**
 * @example
 * const transport = new LeanCounterTransport({ region: 'eu-west-1', credentials: () => environmentCredentials()! });
 * const meter = new DynamoQuotaMeter({ transport, table: 'catalogue-counters' });
 */
export class LeanCounterTransport implements CounterTransport {
  readonly #protocol: DynamoJsonProtocol;

  constructor(options: LeanCounterTransportOptions) {
    this.#protocol = new DynamoJsonProtocol(options);
  }

  async updateItem(input: UpdateItemCommandInput, signal?: AbortSignal): Promise<UpdateOutcome> {
    const answer = await this.#call('UpdateItem', input, signal);
    if ('error' in answer) {
      if (answer.error.name === 'ConditionalCheckFailedException') return { ok: false, item: answer.item };
      throw answer.error;
    }
    return { ok: true, attributes: (answer.body.Attributes as Item | undefined) ?? {} };
  }

  async getItem(input: GetItemCommandInput, signal?: AbortSignal): Promise<Item | undefined> {
    const answer = await this.#call('GetItem', input, signal);
    if ('error' in answer) throw answer.error;
    return answer.body.Item as Item | undefined;
  }

  async #call(
    operation: Operation,
    input: object,
    signal: AbortSignal | undefined,
  ): Promise<{ body: Record<string, unknown> } | { error: AwsCallError; item: Item | undefined }> {
    const response = await this.#protocol.send(operation, input, signal, RESEND[operation]);
    if (response.status === 200) {
      return { body: JSON.parse(response.body.toString('utf8')) as Record<string, unknown> };
    }
    const { error, item } = dynamoErrorOf(response);
    return { error, item: item as Item | undefined };
  }

  /** Close the connections (tests, benchmarks). */
  close(): Promise<void> {
    return this.#protocol.close();
  }
}
