/**
 * DynamoDB calls as lean signed requests (aws/signed.ts), for the meter and the key lookups: DynamoDB's JSON
 * protocol takes the SDK's input shape as it is (AttributeValue maps are JSON already), so a call is one
 * JSON.stringify, one signature, one POST and one JSON.parse.
 */
import type { GetItemCommandInput, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { AwsCallError, type CredentialSource, SignedClient, type SignedResponse } from '../../aws/signed.js';
import type { CounterTransport, Item, UpdateOutcome } from './dynamo-transport.js';

export interface LeanCounterTransportOptions {
  /** A DynamoDB-compatible endpoint such as dynalite; AWS when absent. */
  endpoint?: string | undefined;
  region: string;
  credentials: CredentialSource;
  /** Connections kept open to DynamoDB (default 50). */
  connections?: number;
}

type Operation = 'UpdateItem' | 'GetItem';

interface ErrorBody {
  __type?: string;
  message?: string;
  Message?: string;
  Item?: Item;
}

/**
 * The error of a DynamoDB answer: JSON with a `__type` such as
 * `com.amazonaws.dynamodb.v20120810#ThrottlingException`; a proxy or load balancer in between may answer
 * something else entirely, named after its status.
 */
function errorOf(body: Buffer, status: number): { code: string; parsed: ErrorBody } {
  let parsed: ErrorBody = {};
  try {
    parsed = JSON.parse(body.toString('utf8')) as ErrorBody;
  } catch {
    // Not JSON: named after the status.
  }
  return { code: parsed.__type?.split('#').pop() || `HTTP ${status}`, parsed };
}

/** The error code of a call's answer; none for a success. */
const callErrorCode = ({ status, body }: SignedResponse) =>
  status === 200 ? undefined : errorOf(body, status).code;

/** DynamoDB's answers for a request it refused for throughput: nothing was applied. */
const THROTTLING = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

/** The error code of a write's answer when it is a throttling one (the only kind a write is resent after). */
const throttlingErrorCode = (response: SignedResponse) => {
  const code = callErrorCode(response);
  return code !== undefined && THROTTLING.has(code) ? code : undefined;
};

/**
 * @example
 * const transport = new LeanCounterTransport({ region: 'eu-west-1', credentials: () => environmentCredentials()! });
 * const meter = new DynamoQuotaMeter({ transport, table: 'catalogue-counters' });
 */
export class LeanCounterTransport implements CounterTransport {
  readonly #client: SignedClient;
  readonly #path: string;

  constructor(options: LeanCounterTransportOptions) {
    const url = new URL(options.endpoint ?? `https://dynamodb.${options.region}.amazonaws.com/`);
    this.#path = url.pathname || '/';
    this.#client = new SignedClient({
      origin: url.origin,
      service: 'dynamodb',
      region: options.region,
      credentials: options.credentials,
      ...(options.connections === undefined ? {} : { connections: options.connections }),
    });
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
    const response = await this.#client.request({
      method: 'POST',
      path: this.#path,
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${operation}`,
      },
      body: JSON.stringify(input),
      signal,
      // A read is sent again after a reset or a 500, as the SDK does. A write only after throttling (not
      // applied): after a reset or a 500 it may have landed, and sent again it would count twice; the meter
      // looks for its own write instead (dynamo.ts).
      retryOnReset: operation === 'GetItem',
      errorCode: operation === 'GetItem' ? callErrorCode : throttlingErrorCode,
    });
    if (response.status === 200) {
      return { body: JSON.parse(response.body.toString('utf8')) as Record<string, unknown> };
    }
    const { code, parsed } = errorOf(response.body, response.status);
    const message = parsed.message ?? parsed.Message ?? `DynamoDB answered ${response.status}`;
    return { error: new AwsCallError(code, message, response.status), item: parsed.Item };
  }

  /** Close the connections (tests, benchmarks). */
  close(): Promise<void> {
    return this.#client.close();
  }
}
