/**
 * Signed AWS requests without the SDK: the Lambda functions' every call (the proxy's ranged S3 GET, metering
 * UpdateItem/GetItem, key lookups and cursor secret's GetSecretValue; the admin function's DynamoDB calls) is
 * one request signed by `aws4` (a
 * small, synchronous SigV4 signer on node:crypto, never code of ours) and sent over Node's own HTTP client
 * with a keep-alive agent. Measured against the alternatives (bench/README.md, section 10): undici was
 * half the asset (537 KB) and no cheaper per round trip than node:http; the built-in fetch's first call costs
 * 70–190 ms; the SDK's signer is twice aws4's size and asynchronous. node:http and node:https are loaded when
 * the first request is sent, not when the function is imported. Key administration's DynamoDB calls are these
 * too, everywhere (aws/dynamodb.ts); the builder, table setup and the tests' own set-up stay on the SDK
 * (aws/sdk.ts).
 */
import { createHash } from 'node:crypto';
import type { Agent, ClientRequest, IncomingHttpHeaders, IncomingMessage, RequestOptions } from 'node:http';
import type { RetryStrategyV2, RetryToken } from '@smithy/types';
import aws4 from 'aws4';
import type { AwsCredentials } from './env.js';
import { retryTypeOf, StandardRetries } from './retry.js';

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const EMPTY_SHA256 = sha256Hex('');

/** Connections kept per endpoint, as the SDK's Node HTTP handler (maxSockets 50). */
const DEFAULT_CONNECTIONS = 50;
/**
 * Backstop for a caller without a signal: the proxy always passes one (its dependency deadline), so this
 * only bounds a forgotten call (an idle socket for this long is given up).
 */
const BACKSTOP_TIMEOUT_MS = 60_000;

/** Credentials, at once or as a promise (the SDK's provider shape, so its credential chain fits too). */
export type CredentialSource = () => AwsCredentials | Promise<AwsCredentials>;

export interface SignedClientOptions {
  /** Where requests go, e.g. `https://dynamodb.eu-west-1.amazonaws.com` or `http://127.0.0.1:4569`. */
  origin: string;
  /** The SigV4 signing name: `s3`, `dynamodb` or `secretsmanager`. */
  service: string;
  region: string;
  credentials: CredentialSource;
  /** Connections kept open to the origin (default 50). */
  connections?: number;
  /** The retry strategy (default: the SDK's standard one, aws/retry.ts; tests pass others). */
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
   * Send once more when a kept-alive connection turns out closed before any answer: one the server dropped
   * while idle (or while a Lambda container was frozen). The SDK retries these too.
   */
  retryOnReset?: boolean;
  /**
   * The AWS error code an answer carries (`ThrottlingException`, `SlowDown`, `InternalError`, `HTTP 503`…),
   * undefined for an answer the caller takes as it is. A throttling or transient one is sent again after the
   * SDK's backoff, within the SDK's retry quota and attempts (aws/retry.ts).
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
 * the network code (`ECONNREFUSED`, `ECONNRESET`, `AbortError`), as the SDK names its errors.
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

/** The part of node:http / node:https a client uses; loaded with the first request. */
interface Transport {
  request(options: RequestOptions, callback: (response: IncomingMessage) => void): ClientRequest;
  Agent: new (options: { keepAlive: boolean; maxSockets: number }) => Agent;
}

/**
 * node:https for `https:`, node:http otherwise. Taken with process.getBuiltinModule when the first request is
 * sent: synchronous, and nearly free once the runtime interface client has loaded node:http itself, where an
 * `import()` builds an ES module facade of the built-in first (40–77 ms in a fresh process here).
 */
function transportFor(protocol: string): Transport {
  return process.getBuiltinModule(protocol === 'https:' ? 'node:https' : 'node:http') as Transport;
}

/** What a failed send carries: the error, and whether it was a reused connection that died unanswered. */
class SendError extends Error {
  constructor(
    readonly error: unknown,
    readonly staleConnection: boolean,
  ) {
    super('send failed');
  }
}

/**
 * One endpoint, one keep-alive agent, one retry strategy.
 * @example
 * const client = new SignedClient({ origin: 'https://dynamodb.us-east-1.amazonaws.com', service: 'dynamodb',
 *   region: 'us-east-1', credentials: () => environmentCredentials()! });
 * const answer = await client.request({ method: 'POST', path: '/', headers, body, signal });
 */
export class SignedClient {
  readonly #service: string;
  readonly #region: string;
  readonly #credentials: CredentialSource;
  readonly #protocol: string;
  readonly #hostname: string;
  readonly #port: number | undefined;
  /** The Host header: signed, so it must be exactly what the server receives. */
  readonly #host: string;
  readonly #connections: number;
  readonly #retries: RetryStrategyV2;
  #transport: { module: Transport; agent: Agent } | undefined;
  #firstToken: RetryToken | undefined;

  constructor(options: SignedClientOptions) {
    const url = new URL(options.origin);
    this.#service = options.service;
    this.#region = options.region;
    this.#credentials = options.credentials;
    this.#protocol = url.protocol;
    this.#hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    this.#port = url.port ? Number(url.port) : undefined;
    this.#host = url.host;
    this.#connections = options.connections ?? DEFAULT_CONNECTIONS;
    this.#retries = options.retryStrategy ?? new StandardRetries();
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
    } catch (failure) {
      const { error, staleConnection } = failure as SendError;
      if (request.retryOnReset && staleConnection && !request.signal?.aborted) {
        try {
          return await this.#send(request);
        } catch (again) {
          throw networkError((again as SendError).error, request.signal);
        }
      }
      throw networkError(error, request.signal);
    }
  }

  /** The request with its signature: X-Amz-Date, the session token, Content-Length and Authorization added. */
  #sign(request: SignedRequest, credentials: AwsCredentials): ReturnType<typeof aws4.sign> {
    // Signed per attempt: the signature carries the time. aws4 adds X-Amz-Date, the session token,
    // Content-Length and Authorization to these headers. The payload's hash is sent to every service, as
    // the SDK does (S3 requires it; aws4 then signs with it instead of hashing the body again).
    return aws4.sign(
      {
        service: this.#service,
        region: this.#region,
        method: request.method,
        host: this.#hostname,
        path: request.path,
        headers: {
          ...request.headers,
          Host: this.#host,
          'X-Amz-Content-Sha256': request.body === undefined ? EMPTY_SHA256 : sha256Hex(request.body),
        },
        ...(request.body === undefined ? {} : { body: request.body }),
      },
      credentials,
    );
  }

  async #send(request: SignedRequest): Promise<SignedResponse> {
    const { signal } = request;
    if (signal?.aborted) throw new SendError(signal.reason, false);
    let credentials: AwsCredentials;
    let transport: { module: Transport; agent: Agent };
    try {
      credentials = await this.#credentials();
      transport = this.#transport ?? this.#openTransport();
    } catch (error) {
      throw new SendError(error, false);
    }
    return this.#exchange(request, this.#sign(request, credentials), transport);
  }

  /**
   * One HTTP exchange of a signed request: its whole answer, or a SendError that says whether a reused
   * connection died before any answer (stale: worth one more try).
   */
  #exchange(
    request: SignedRequest,
    signed: ReturnType<typeof aws4.sign>,
    transport: { module: Transport; agent: Agent },
  ): Promise<SignedResponse> {
    const { signal } = request;
    return new Promise<SignedResponse>((resolve, reject) => {
      let settled = false;
      let answered = false;
      let outgoing: ClientRequest | undefined;
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        // A reused connection that died before any answer: the server closed it while it was idle.
        const stale = outgoing?.reusedSocket === true && !answered && isStaleConnection(error);
        reject(new SendError(error, stale));
      };
      const receive = (response: IncomingMessage) => {
        answered = true;
        const chunks: Buffer[] = [];
        let length = 0;
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          length += chunk.byteLength;
        });
        response.on('error', fail);
        response.on('aborted', () => fail(new Error('the answer was cut short')));
        response.on('end', () => {
          if (settled) return;
          settled = true;
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: own(chunks, length) });
        });
      };
      try {
        outgoing = transport.module.request(
          {
            protocol: this.#protocol,
            hostname: this.#hostname,
            ...(this.#port === undefined ? {} : { port: this.#port }),
            method: request.method,
            path: signed.path,
            headers: signed.headers as Record<string, string>,
            agent: transport.agent,
            // A socket timeout re-arms a timer on every read and write: only for a call without a deadline.
            ...(signal ? { signal } : { timeout: BACKSTOP_TIMEOUT_MS }),
          },
          receive,
        );
      } catch (error) {
        fail(error);
        return;
      }
      const sent = outgoing;
      sent.on('error', fail);
      sent.on('timeout', () => sent.destroy(new Error(`no answer for ${BACKSTOP_TIMEOUT_MS} ms`)));
      sent.end(request.body);
    });
  }

  #openTransport(): { module: Transport; agent: Agent } {
    const module = transportFor(this.#protocol);
    this.#transport ??= {
      module,
      agent: new module.Agent({ keepAlive: true, maxSockets: this.#connections }),
    };
    return this.#transport;
  }

  /** Close the kept-alive connections (tests, benchmarks; a Lambda container keeps its agent). */
  async close(): Promise<void> {
    this.#transport?.agent.destroy();
    this.#transport = undefined;
  }
}

/**
 * The body in a buffer of its own, of exactly its length: the callers keep some answers in the byte cache,
 * and a view into a larger buffer (a socket read, the shared allocation pool) would keep all of it alive.
 */
function own(chunks: Buffer[], length: number): Buffer {
  const body = Buffer.allocUnsafeSlow(length);
  let offset = 0;
  for (const chunk of chunks) offset += chunk.copy(body, offset);
  return body;
}

/** Reset by the peer: a kept-alive connection the server closed just as we reused it. */
function isStaleConnection(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
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
  const shape = (error ?? {}) as { name?: unknown; code?: unknown; message?: unknown };
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
