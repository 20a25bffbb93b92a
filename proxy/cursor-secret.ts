/**
 * The cursor secret, read from Secrets Manager instead of the function's configuration (where anyone with
 * `lambda:GetFunctionConfiguration` could read it). Wiring only: the core still gets a complete
 * configuration; this builds it once the secret is known, and stands in with `503 configuration_error`
 * (after 405 and 401, as the core orders them) while it is not.
 *
 * - Cold start: the first request waits for one GetSecretValue round trip (shared by concurrent requests).
 * - Failure: answered with `503 configuration_error`, never a crash; the read is tried again by a later
 *   request, at most once per `retryAfterMs`, so an outage does not turn every request into an API call.
 * - Rotation: the secret is read again once it is `maxAgeMs` old, in the background (requests keep being
 *   served with the one held); a new value builds a new handler. A failed re-read keeps the held secret.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { callWithDeadline } from './core/deadline.js';
import type { ProxyHandler } from './core/types.js';

/** The shortest cursor key the proxy accepts (as `CURSOR_SECRET`). */
export const MIN_SECRET_LENGTH = 32;

export interface SecretProxyOptions {
  /** Reads the secret's current value. */
  fetchSecret: () => Promise<string>;
  /** The proxy for a known secret. */
  build: (secret: string) => ProxyHandler;
  /** The proxy while the secret is unknown: answers 503 configuration_error (after 405 and 401). */
  unavailable: (problem: string) => ProxyHandler;
  /** Age after which the secret is read again (the rotation bound). */
  maxAgeMs: number;
  /** After a failed read, requests wait at least this long before trying again. @default 1000 */
  retryAfterMs?: number;
  /** Clock in milliseconds, for tests. */
  now?: () => number;
  /** Where a failed read is reported (one line per failure, never the value). */
  log?: (line: object) => void;
}

interface Held {
  secret: string;
  handler: ProxyHandler;
  readAt: number;
}

/**
 * A proxy whose cursor secret comes from `fetchSecret`.
 * @example
 * const handle = createSecretProxy({ fetchSecret: secretReader(arn, { timeoutMs: 2000 }),
 *   build: (secret) => createHandler({ ...deps, config: withSecret(secret) }),
 *   unavailable: (problem) => createHandler({ ...deps, config: { ok: false, problems: [problem] } }),
 *   maxAgeMs: 300_000 });
 */
export function createSecretProxy(options: SecretProxyOptions): ProxyHandler {
  const now = options.now ?? Date.now;
  const retryAfterMs = options.retryAfterMs ?? 1_000;
  let held: Held | undefined;
  let flight: Promise<void> | undefined;
  let failedAt: number | undefined;
  let unavailable: { problem: string; handler: ProxyHandler } | undefined;

  const refresh = async () => {
    const startedAt = now();
    try {
      const secret = await options.fetchSecret();
      if (secret.length < MIN_SECRET_LENGTH)
        throw new Error(`the secret is shorter than ${MIN_SECRET_LENGTH} characters`);
      held =
        held?.secret === secret
          ? { ...held, readAt: startedAt }
          : { secret, handler: options.build(secret), readAt: startedAt };
      failedAt = undefined;
    } catch (error) {
      failedAt = now();
      const problem = `cursor secret could not be read: ${(error as Error)?.message ?? String(error)}`;
      if (unavailable?.problem !== problem) unavailable = { problem, handler: options.unavailable(problem) };
      try {
        options.log?.({ time: new Date().toISOString(), level: 'error', message: problem });
      } catch {
        // A failing logger changes nothing here.
      }
    } finally {
      flight = undefined;
    }
  };

  return async (request) => {
    const at = now();
    const due = !held || at - held.readAt >= options.maxAgeMs;
    const mayTry = failedAt === undefined || at - failedAt >= retryAfterMs;
    if (due && mayTry && !flight) flight = refresh();
    // A held secret keeps serving while a newer one is read.
    if (held) return held.handler(request);
    if (flight) await flight;
    if (held) return (held as Held).handler(request);
    return (unavailable as { handler: ProxyHandler }).handler(request);
  };
}

export interface ReadSecretOptions {
  /** Bound on one GetSecretValue call (the SDK retries once within it). */
  timeoutMs: number;
  /** Secrets Manager endpoint (tests); AWS when absent. */
  endpoint?: string | undefined;
  region?: string | undefined;
}

/**
 * A reader of a secret's string value through Powertools' parameters utility: each call is one
 * GetSecretValue (`forceFetch`), since {@link createSecretProxy} holds the value and bounds its age itself
 * (single flight, stale while re-reading, the last good value kept on failure, which Powertools' own
 * `maxAge` cache does not do).
 * @example const read = secretReader('arn:aws:secretsmanager:eu-west-1:123456789012:secret:cursor-AbCdEf', { timeoutMs: 2000 });
 * const secret = await read();
 */
export function secretReader(arn: string, options: ReadSecretOptions): () => Promise<string> {
  const client = new SecretsManagerClient({
    region: options.region ?? process.env.AWS_REGION ?? 'us-east-1',
    maxAttempts: 2,
    requestHandler: {
      connectionTimeout: options.timeoutMs,
      requestTimeout: options.timeoutMs,
      throwOnRequestTimeout: true,
    },
    ...(options.endpoint
      ? {
          endpoint: options.endpoint,
          ...(process.env.AWS_ACCESS_KEY_ID
            ? {}
            : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
        }
      : {}),
  });
  const provider = new SecretsProvider({ awsSdkV3Client: client });
  return () =>
    callWithDeadline('configuration', options.timeoutMs, async () => {
      const value = await provider.get(arn, { forceFetch: true });
      if (typeof value !== 'string') throw new Error('the secret has no string value');
      return value;
    });
}
