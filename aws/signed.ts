/**
 * Signed AWS requests without the SDK client, for the proxy's two hot calls only (the ranged S3 GET and the
 * metering UpdateItem): a keep-alive undici pool per endpoint, and each request signed by the SDK's own
 * SigV4 signer (`@smithy/signature-v4`, with the SHA-256 the SDK uses on Node), never by code of ours.
 * The SDK client spends most of its CPU per call in its middleware stack, endpoint rules and schema-driven
 * (de)serialisation; a call here is one signature and one request (bench section 6 measures both).
 * Everything else (builder, key CLI, key lookups, table setup) stays on the SDK.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Sha256 } from '@smithy/core/checksum';
import { isThrottlingError, isTransientError, StandardRetryStrategy } from '@smithy/core/retry';
import { SignatureV4 } from '@smithy/signature-v4';
import type {
  AwsCredentialIdentityProvider,
  RetryErrorType,
  RetryStrategyV2,
  RetryToken,
  SdkError,
} from '@smithy/types';
import { Pool } from 'undici';

/** Attempts per call for throttling and transient answers, as the proxy's SDK clients (aws/sdk.ts). */
const MAX_ATTEMPTS = 2;
/** Connections kept per endpoint, as the SDK's Node HTTP handler (maxSockets 50). */
const DEFAULT_CONNECTIONS = 50;
/**
 * Backstop for a caller without a signal: the proxy always passes one (its dependency deadline), so these
 * only bound a forgotten call. undici's own defaults are five minutes.
 */
const BACKSTOP_TIMEOUT_MS = 60_000;

export interface SignedClientOptions {
  /** Where requests go, e.g. `https://dynamodb.eu-west-1.amazonaws.com` or `http://127.0.0.1:4569`. */
  origin: string;
  /** The SigV4 signing name: `s3` or `dynamodb`. */
  service: string;
  region: string;
  credentials: AwsCredentialIdentityProvider;
  /** Connections kept open to the origin (default 50). */
  connections?: number;
  /** S3 signs the path as sent (already encoded); other services normalise and encode it again. */
  uriEscapePath?: boolean;
  /** The retry strategy (default: the SDK's standard one with MAX_ATTEMPTS; tests pass others). */
  retryStrategy?: RetryStrategyV2;
}

export interface SignedRequest {
  method: 'GET' | 'POST';
  /** Path, already percent-encoded (`/bucket/key`); no query string. */
  path: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal | undefined;
  /**
   * Send once more when the connection turns out closed before any answer: a kept-alive connection the
   * server dropped while idle (or while a Lambda container was frozen). The SDK retries these too.
   */
  retryOnReset?: boolean;
  /**
   * The AWS error code an answer carries (`ThrottlingException`, `SlowDown`, `InternalError`, `HTTP 503`…),
   * undefined for an answer the caller takes as it is. A throttling or transient one is sent again after the
   * SDK's backoff, within the SDK's retry quota and MAX_ATTEMPTS, as the SDK's standard retry strategy does
   * (the same strategy object decides).
   */
  errorCode?: (response: SignedResponse) => string | undefined;
}

export interface SignedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/**
 * A failure with no HTTP answer (connection refused or reset, aborted, timed out), or an AWS error answer.
 * `name` is the AWS error code (`ConditionalCheckFailedException`, `NoSuchKey`, `ThrottlingException`) or
 * the network code (`ECONNREFUSED`, `UND_ERR_SOCKET`, `AbortError`), as the SDK names its errors.
 */
export class AwsCallError extends Error {
  constructor(
    name: string,
    message: string,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = name;
  }
}

/** Reset by the peer: a kept-alive connection the server closed just as we reused it. */
function isStaleConnection(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE';
}

/**
 * One endpoint, one signer, one connection pool.
 * @example
 * const client = new SignedClient({ origin: 'https://dynamodb.us-east-1.amazonaws.com', service: 'dynamodb',
 *   region: 'us-east-1', credentials: credentialProvider(undefined) });
 * const answer = await client.request({ method: 'POST', path: '/', headers, body, signal });
 */
export class SignedClient {
  readonly #pool: Pool;
  readonly #signer: SignatureV4;
  readonly #protocol: string;
  readonly #hostname: string;
  readonly #port: number | undefined;
  /** The Host header: signed, so it must be exactly what the server receives. */
  readonly #host: string;
  /** The SDK's own standard retry strategy: attempts, backoff with jitter, and its retry quota. */
  readonly #retries: RetryStrategyV2;
  #firstToken: RetryToken | undefined;

  constructor(options: SignedClientOptions) {
    const url = new URL(options.origin);
    this.#protocol = url.protocol;
    this.#hostname = url.hostname;
    this.#port = url.port ? Number(url.port) : undefined;
    this.#host = url.host;
    this.#pool = new Pool(url.origin, {
      connections: options.connections ?? DEFAULT_CONNECTIONS,
      headersTimeout: BACKSTOP_TIMEOUT_MS,
      bodyTimeout: BACKSTOP_TIMEOUT_MS,
    });
    this.#retries = options.retryStrategy ?? new StandardRetryStrategy(MAX_ATTEMPTS);
    this.#signer = new SignatureV4({
      service: options.service,
      region: options.region,
      credentials: options.credentials,
      sha256: Sha256,
      uriEscapePath: options.uriEscapePath ?? true,
    });
  }

  /**
   * Sign and send; any HTTP status is an answer (a throttling or transient one after a retry, when
   * `errorCode` names it). Throws AwsCallError when there is no answer, or when the signal ends the call.
   */
  async request(request: SignedRequest): Promise<SignedResponse> {
    const { signal } = request;
    // A first attempt's token carries no state (no retries, no cost): one serves every call.
    this.#firstToken ??= await this.#retries.acquireInitialRetryToken(this.#host);
    let token = this.#firstToken;
    for (;;) {
      const response = await this.#attempt(request);
      const code = request.errorCode?.(response);
      if (code === undefined) {
        this.#retries.recordSuccess(token);
        return response;
      }
      const errorType = retryTypeOf(code, response.status);
      if (errorType === undefined) return response;
      // The strategy waits out its backoff itself; the caller's deadline must not wait with it.
      const refreshed = this.#retries.refreshRetryTokenForRetry(token, { errorType }).then(
        (next) => ({ next }),
        () => undefined, // no attempt or quota left: the answer stands
      );
      const next = signal ? await untilAborted(refreshed, signal) : await refreshed;
      if (signal?.aborted) throw networkError(signal.reason, signal);
      if (!next) return response;
      token = next.next;
    }
  }

  /** One attempt, and one more at once when a kept-alive connection turns out to be closed. */
  async #attempt(request: SignedRequest): Promise<SignedResponse> {
    try {
      return await this.#send(request);
    } catch (error) {
      if (request.retryOnReset && isStaleConnection(error) && !request.signal?.aborted) {
        try {
          return await this.#send(request);
        } catch (again) {
          throw networkError(again, request.signal);
        }
      }
      throw networkError(error, request.signal);
    }
  }

  async #send(request: SignedRequest): Promise<SignedResponse> {
    // Signed per attempt: the signature carries the time.
    const signed = await this.#signer.sign({
      method: request.method,
      protocol: this.#protocol,
      hostname: this.#hostname,
      ...(this.#port === undefined ? {} : { port: this.#port }),
      path: request.path,
      query: {},
      headers: { ...request.headers, host: this.#host },
      body: request.body,
    });
    const response = await this.#pool.request({
      method: request.method,
      path: request.path,
      headers: signed.headers,
      body: request.body ?? null,
      signal: request.signal ?? null,
    });
    // The whole body in one buffer: the callers need all of it, and reading it frees the connection.
    const body = Buffer.from(await response.body.arrayBuffer());
    return { status: response.statusCode, headers: response.headers, body };
  }

  /** Close the pool's connections (tests, benchmarks; a Lambda container keeps its pool). */
  close(): Promise<void> {
    return this.#pool.close();
  }
}

/** How the SDK's classification sees an error answer: retried as throttling, as transient, or not at all. */
function retryTypeOf(code: string, status: number): RetryErrorType | undefined {
  const error: SdkError = { name: code, message: code, $metadata: { httpStatusCode: status } };
  if (isThrottlingError(error)) return 'THROTTLING';
  if (isTransientError(error)) return 'TRANSIENT';
  return undefined;
}

/** `promise`'s value, or undefined as soon as `signal` aborts (its listener removed either way). */
async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return undefined;
  let stop: (() => void) | undefined;
  const abort = new Promise<undefined>((resolve) => {
    stop = () => resolve(undefined);
    signal.addEventListener('abort', stop, { once: true });
  });
  try {
    return await Promise.race([promise, abort]);
  } finally {
    signal.removeEventListener('abort', stop!);
  }
}

/** Named as the SDK names them: `AbortError` when the caller's signal ended the call, else the socket's code. */
function networkError(error: unknown, signal: AbortSignal | undefined): AwsCallError {
  const shape = error as { name?: unknown; code?: unknown; message?: unknown };
  const name = signal?.aborted
    ? 'AbortError'
    : typeof shape.code === 'string'
      ? shape.code
      : typeof shape.name === 'string'
        ? shape.name
        : 'Error';
  const message = typeof shape.message === 'string' ? shape.message : String(error);
  return new AwsCallError(name, message, undefined, { cause: error });
}
