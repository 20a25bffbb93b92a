/**
 * DynamoDB's JSON protocol over the lean signed calls (aws/signed.ts), for key administration (admin/dynamo.ts):
 * any operation is one JSON.stringify, one signature, one POST and one JSON.parse, with no SDK loaded (the
 * admin function's bundle carries aws4 and this, not the SDK's client and credential chain). A call is sent
 * again as the SDK sends one again: after a throttling or transient answer (the SDK's standard retry mode,
 * aws/retry.ts) and after a reset of a reused connection. That suits a caller whose writes are conditional
 * and may land twice (key administration's are: admin/dynamo.ts); the request path's meter must never resend
 * a write that may have landed, and has its own transport (proxy/quota/dynamo-lean.ts) over the same protocol
 * (DynamoJsonProtocol below): one place reads the endpoint, names the operation and reads a refusal.
 */

import { StandardRetries } from './retry.js';
import {
  AwsCallError,
  type CredentialSource,
  SignedClient,
  type SignedClientOptions,
  type SignedRequest,
  type SignedResponse,
} from './signed.js';

/** The operations key administration uses. */
export type DynamoOperation =
  | 'GetItem'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'Query'
  | 'Scan'
  | 'BatchGetItem';

/** Where DynamoDB is reached, and as whom. */
export interface DynamoEndpointOptions {
  /** A DynamoDB-compatible endpoint such as dynalite; AWS when absent. */
  endpoint?: string | undefined;
  region: string;
  credentials: CredentialSource;
}

export interface LeanDynamoOptions extends DynamoEndpointOptions {
  /** Attempts per call, as an SDK client's `maxAttempts` (default 3). */
  maxAttempts?: number;
}

/**
 * A refused DynamoDB call: the AWS error code of its answer, JSON with a `__type` such as
 * `com.amazonaws.dynamodb.v20120810#ThrottlingException` (a proxy or load balancer in between may answer something
 * else entirely, named after its status), and the item a refused conditional write returns when asked to.
 */
export function dynamoErrorOf(response: SignedResponse): { error: AwsCallError; item: unknown } {
  let parsed: { __type?: string; message?: string; Message?: string; Item?: unknown } = {};
  try {
    parsed = JSON.parse(response.body.toString('utf8'));
  } catch {
    // Not JSON: named after the status.
  }
  const code = parsed.__type?.split('#').pop() || `HTTP ${response.status}`;
  const message = parsed.message ?? parsed.Message ?? `DynamoDB answered ${response.status}`;
  return { error: new AwsCallError(code, message, response.status), item: parsed.Item };
}

/** The error code of a DynamoDB answer; none for a success. */
export const dynamoErrorCode = (response: SignedResponse): string | undefined =>
  response.status === 200 ? undefined : dynamoErrorOf(response).error.name;

/**
 * DynamoDB's JSON protocol over one signed client: each operation is one POST of its input as JSON, named by its
 * `x-amz-target`. Both lean clients send through it (LeanDynamo below, and the request path's meter,
 * proxy/quota/dynamo-lean.ts); each decides what is sent again.
 */
export class DynamoJsonProtocol {
  readonly #client: SignedClient;
  readonly #path: string;

  constructor(options: DynamoEndpointOptions & Pick<SignedClientOptions, 'connections' | 'retryStrategy'>) {
    const url = new URL(options.endpoint ?? `https://dynamodb.${options.region}.amazonaws.com/`);
    this.#path = url.pathname || '/';
    this.#client = new SignedClient({
      origin: url.origin,
      service: 'dynamodb',
      region: options.region,
      credentials: options.credentials,
      ...(options.connections === undefined ? {} : { connections: options.connections }),
      ...(options.retryStrategy === undefined ? {} : { retryStrategy: options.retryStrategy }),
    });
  }

  /** One operation's answer, whatever its status. */
  send(
    operation: string,
    input: object,
    signal: AbortSignal | undefined,
    resend: Pick<SignedRequest, 'retryOnReset' | 'errorCode'>,
  ): Promise<SignedResponse> {
    return this.#client.request({
      method: 'POST',
      path: this.#path,
      headers: {
        'content-type': 'application/x-amz-json-1.0',
        'x-amz-target': `DynamoDB_20120810.${operation}`,
      },
      body: JSON.stringify(input),
      signal,
      retryOnReset: resend.retryOnReset,
      errorCode: resend.errorCode,
    });
  }

  /** Close the kept-alive connections. */
  close(): Promise<void> {
    return this.#client.close();
  }
}

/** Key administration's calls are sent again as the SDK sends one again (its writes are conditional). */
const SDK_RESEND = { retryOnReset: true, errorCode: dynamoErrorCode };

/**
 * @example
 * const dynamo = new LeanDynamo({ region: 'eu-west-1', credentials: () => environmentCredentials()! });
 * const { Item } = await dynamo.call('GetItem', { TableName: 'keys', Key: { key_hash: { S: hash } } }, signal);
 */
export class LeanDynamo {
  readonly #protocol: DynamoJsonProtocol;

  constructor(options: LeanDynamoOptions) {
    this.#protocol = new DynamoJsonProtocol({
      ...options,
      retryStrategy: new StandardRetries(options.maxAttempts ?? 3),
    });
  }

  /**
   * One operation: the answer's JSON. Throws an AwsCallError named after the AWS error code
   * (`ConditionalCheckFailedException`, `ThrottlingException`, `HTTP 502`…) with its status, or after the
   * network failure (`ECONNRESET`, `AbortError` when `signal` ended the call) without one; an answer that
   * cannot be read (cut short, not JSON) is `SerializationException` without a status: it may have landed.
   */
  async call(
    operation: DynamoOperation,
    input: object,
    signal?: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const response = await this.#protocol.send(operation, input, signal, SDK_RESEND);
    if (response.status !== 200) throw dynamoErrorOf(response).error;
    try {
      return JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
    } catch (error) {
      throw new AwsCallError(
        'SerializationException',
        `DynamoDB's answer to ${operation} could not be read (${response.body.byteLength} bytes)`,
        undefined,
        { cause: error },
      );
    }
  }

  /** Close the kept-alive connections (tests, the CLI when it is done). */
  close(): Promise<void> {
    return this.#protocol.close();
  }
}
