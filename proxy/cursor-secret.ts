/**
 * The cursor secret, read from Secrets Manager instead of the function's configuration (where anyone with
 * `lambda:GetFunctionConfiguration` could read it). Wiring only: the core still gets a complete
 * configuration; this builds it once the secret is known.
 *
 * Right under Lambda's life cycle (the runtime freezes the process between invocations, so nothing may wait
 * for a timer or a background read to run in between):
 * - Cold start: the first request starts the one GetSecretValue (shared by concurrent requests). A request
 *   that needs the secret (a list page, a cursor) waits for it, while the dependency calls it will make
 *   anyway are started beside it (`prefetch`); one that needs none (405, 401, 400, 404, OPTIONS without a
 *   cursor, a detail) is answered at once, and the read goes on until the invocation ends.
 * - Rotation: once the held secret is `maxAgeMs` old, the next request starts the re-read and is answered
 *   with the held secret; the invocation does not end before the re-read has settled (`settle`, which the
 *   Lambda adapter awaits after the answer is sent), bounded by the read's deadline. A new value builds a new
 *   handler; a failed re-read keeps the held secret.
 * - Failure: requests that need the secret are answered `503 configuration_error` (after 405 and 401, as
 *   the core orders them), never a crash; the read is tried again by a later request, at most once per
 *   `retryAfterMs`, so an outage does not turn every request into an API call.
 */

import { getSecretString, secretsClient } from '../aws/secrets.js';
import type { CredentialSource } from '../aws/signed.js';
import { errorMessage } from '../store/errors.js';
import { callWithDeadline } from './core/deadline.js';
import type { ProblemLogLine, ProxyHandler, ProxyRequest } from './core/types.js';

/** The shortest cursor key the proxy accepts (as `CURSOR_SECRET`). */
export const MIN_SECRET_LENGTH = 32;

export interface SecretProxyOptions {
  /** Reads the secret's current value. */
  fetchSecret: () => Promise<string>;
  /** The proxy for a known secret. */
  build: (secret: string) => ProxyHandler;
  /** The proxy while the secret is unknown: answers 503 configuration_error (after 405 and 401). */
  unavailable: (problem: string) => ProxyHandler;
  /**
   * Whether a request's answer depends on the cursor secret (it makes or checks a cursor).
   * @default every request does
   */
  needsSecret?: (request: ProxyRequest) => boolean;
  /** Builds the proxy that answers requests needing no secret while none is held (released once one is). */
  withoutSecret?: () => ProxyHandler;
  /** Starts the calls a request waiting for the secret will make next (its key lookup, the pointer). */
  prefetch?: (request: ProxyRequest) => void;
  /** Age after which the secret is read again (the rotation bound). */
  maxAgeMs: number;
  /** After a failed read, requests wait at least this long before trying again. @default 1000 */
  retryAfterMs?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
  /** Where a failed read is reported (one line per failure, never the value). */
  log?: (line: ProblemLogLine) => void;
}

interface Held {
  secret: string;
  handler: ProxyHandler;
  readAt: number;
}

/**
 * A proxy whose cursor secret comes from `fetchSecret`; its `settle()` resolves once no read is in flight.
 * @example
 * const handle = createSecretProxy({ fetchSecret: secretReader(arn, { timeoutMs: 2000 }),
 *   build: (secret) => createHandler({ ...deps, config: withSecret(secret) }),
 *   unavailable: (problem) => createHandler({ ...deps, config: { ok: false, problems: [problem] } }),
 *   maxAgeMs: 300_000 });
 */
export function createSecretProxy(options: SecretProxyOptions): ProxyHandler {
  const holder = new SecretHolder(options);
  const handle: ProxyHandler = (request) => holder.handle(request);
  handle.settle = () => holder.settled();
  return handle;
}

/** The secret as last read, the read in flight, and the handlers for each state (known, unknown, unread). */
class SecretHolder {
  readonly #options: SecretProxyOptions;
  readonly #now: () => number;
  #held: Held | undefined;
  #flight: Promise<void> | undefined;
  #failedAt: number | undefined;
  #unavailable: { problem: string; handler: ProxyHandler } | undefined;
  #withoutSecret: ProxyHandler | undefined;

  constructor(options: SecretProxyOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Resolves once no read is in flight. */
  settled(): Promise<void> {
    return this.#flight ?? Promise.resolve();
  }

  async handle(given: ProxyRequest): ReturnType<ProxyHandler> {
    // A request may wait here for a read another request started: its log line counts that wait too, from
    // its arrival (the adapter's time; this call's, for a caller that gave none).
    const request = given.receivedAt === undefined ? { ...given, receivedAt: performance.now() } : given;
    const options = this.#options;
    const at = this.#now();
    const due = !this.#held || at - this.#held.readAt >= options.maxAgeMs;
    const mayTry = this.#failedAt === undefined || at - this.#failedAt >= (options.retryAfterMs ?? 1_000);
    if (due && mayTry && !this.#flight) this.#flight = this.#refresh();
    // A held secret keeps serving while a newer one is read (settle() waits for that read).
    if (this.#held) return this.#held.handler(request);
    if (options.withoutSecret && !(options.needsSecret ?? (() => true))(request)) {
      this.#withoutSecret ??= options.withoutSecret();
      return this.#withoutSecret(request);
    }
    if (this.#flight) {
      options.prefetch?.(request);
      await this.#flight;
    }
    if (this.#held) return (this.#held as Held).handler(request);
    // Not read yet, and not to be tried again yet: no reason is known but that.
    return this.#unavailableFor('cursor secret could not be read yet', false)(request);
  }

  /** Read the secret: a new value builds a new handler, a failure keeps what is held and is logged. */
  async #refresh(): Promise<void> {
    const startedAt = this.#now();
    try {
      const secret = await this.#options.fetchSecret();
      if (secret.length < MIN_SECRET_LENGTH)
        throw new Error(`the secret is shorter than ${MIN_SECRET_LENGTH} characters`);
      const held = this.#held;
      this.#held =
        held?.secret === secret
          ? { ...held, readAt: startedAt }
          : { secret, handler: this.#options.build(secret), readAt: startedAt };
      this.#failedAt = undefined;
      this.#withoutSecret = undefined;
    } catch (error) {
      this.#failedAt = this.#now();
      const problem = `cursor secret could not be read: ${errorMessage(error)}`;
      this.#unavailableFor(problem, true);
      try {
        this.#options.log?.({ time: new Date(this.#now()).toISOString(), level: 'error', message: problem });
      } catch {
        // A failing logger changes nothing here.
      }
    } finally {
      this.#flight = undefined;
    }
  }

  /**
   * The handler answering 503 for `problem`: the one built for it already, else a new one. A known reason is
   * never replaced by the generic one (`replace` false).
   */
  #unavailableFor(problem: string, replace: boolean): ProxyHandler {
    if (!this.#unavailable || (replace && this.#unavailable.problem !== problem)) {
      this.#unavailable = { problem, handler: this.#options.unavailable(problem) };
    }
    return this.#unavailable.handler;
  }
}

export interface ReadSecretOptions {
  /** Bound on one GetSecretValue call (a throttled or transient answer is sent once more within it). */
  timeoutMs: number;
  /** Secrets Manager endpoint (tests, local stand-ins); AWS's regional one when absent. */
  endpoint?: string | undefined;
  /** The region of the endpoint; the ARN's own region when absent. */
  region?: string | undefined;
  /** How the call is signed: the environment's credentials on Lambda, fixed ones for a loopback endpoint. */
  credentials?: CredentialSource;
}

/** Fixed credentials for a loopback stand-in without a `credentials` option (it checks no signature). */
const STAND_IN_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/**
 * A reader of a secret's string value: each call is one GetSecretValue, a lean signed request (aws/secrets.ts),
 * since {@link createSecretProxy} holds the value and bounds its age itself (single flight, stale while
 * re-reading, the last good value kept on failure).
 * @example const read = secretReader('arn:aws:secretsmanager:eu-west-1:123456789012:secret:cursor-AbCdEf', { timeoutMs: 2000 });
 * const secret = await read();
 */
export function secretReader(arn: string, options: ReadSecretOptions): () => Promise<string> {
  const client = secretsClient(arn, {
    endpoint: options.endpoint,
    region: options.region,
    credentials: options.credentials ?? (() => STAND_IN_CREDENTIALS),
  });
  return () =>
    callWithDeadline('configuration', options.timeoutMs, (signal) => getSecretString(client, arn, signal));
}
