/**
 * When a signed call (aws/signed.ts) sends an answer once more: the AWS SDK's standard retry mode, its
 * classification of error answers and its 2026 settings (`@smithy/core/retry`), kept here as values so the
 * Lambda function carries no SDK retry machinery. The numbers are the SDK's, so a lean call and an SDK call
 * retry alike: the fault suites run both.
 */
import type { RetryErrorType, RetryStrategyV2, RetryToken } from '@smithy/types';

/** Attempts per call, as the proxy's SDK clients (aws/sdk.ts: maxAttempts 2). */
export const MAX_ATTEMPTS = 2;
/** The SDK's retry quota: a container retries at most this many cost units before successes refill it. */
const INITIAL_RETRY_TOKENS = 500;
const TRANSIENT_RETRY_COST = 14;
const THROTTLING_RETRY_COST = 5;
/** Refilled by a success that needed no retry. */
const NO_RETRY_INCREMENT = 1;
/** Full-jitter exponential backoff: random × base × 2^retries, at most 20 s. */
const TRANSIENT_DELAY_BASE_MS = 50;
const THROTTLING_DELAY_BASE_MS = 1_000;
const MAXIMUM_RETRY_DELAY_MS = 20_000;

/** The SDK's throttling codes (service-error-classification). */
const THROTTLING_CODES = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);
const TRANSIENT_CODES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const TRANSIENT_STATUSES = new Set([500, 502, 503, 504]);

/**
 * How the SDK classifies an error answer: retried as throttling, as transient, or not at all.
 * @example retryTypeOf('SlowDown', 503) // → 'THROTTLING'
 * @example retryTypeOf('AccessDenied', 403) // → undefined
 */
export function retryTypeOf(code: string, status: number): RetryErrorType | undefined {
  if (status === 429 || THROTTLING_CODES.has(code)) return 'THROTTLING';
  if (TRANSIENT_CODES.has(code) || TRANSIENT_STATUSES.has(status)) return 'TRANSIENT';
  return undefined;
}

class Token implements RetryToken {
  constructor(
    readonly retries: number,
    readonly cost: number | undefined,
  ) {}
  getRetryCount(): number {
    return this.retries;
  }
  getRetryDelay(): number {
    return 0;
  }
}

const FIRST = new Token(0, undefined);

/**
 * The SDK's standard strategy: a retry waits out its backoff inside `refreshRetryTokenForRetry` and spends
 * from the quota; a success gives back what its retries cost (or one unit). Rejects when no attempt or
 * quota is left: the answer then stands.
 * @example const retries = new StandardRetries(); // one per signed client, as the SDK keeps one per client
 */
export class StandardRetries implements RetryStrategyV2 {
  #capacity = INITIAL_RETRY_TOKENS;

  constructor(
    private readonly maxAttempts = MAX_ATTEMPTS,
    private readonly random: () => number = Math.random,
  ) {}

  async acquireInitialRetryToken(): Promise<RetryToken> {
    return FIRST;
  }

  async refreshRetryTokenForRetry(
    token: RetryToken,
    errorInfo: { errorType: RetryErrorType },
  ): Promise<RetryToken> {
    const { errorType } = errorInfo;
    const cost = errorType === 'THROTTLING' ? THROTTLING_RETRY_COST : TRANSIENT_RETRY_COST;
    const retries = token.getRetryCount();
    const retryable = errorType === 'THROTTLING' || errorType === 'TRANSIENT';
    if (!retryable || retries + 1 >= this.maxAttempts || this.#capacity < cost)
      throw new Error('No retry token available');
    this.#capacity -= cost;
    const base = errorType === 'THROTTLING' ? THROTTLING_DELAY_BASE_MS : TRANSIENT_DELAY_BASE_MS;
    const delay = Math.floor(this.random() * Math.min(base * 2 ** retries, MAXIMUM_RETRY_DELAY_MS));
    await new Promise((resolve) => setTimeout(resolve, delay));
    return new Token(retries + 1, cost);
  }

  recordSuccess(token: RetryToken): void {
    const cost = token instanceof Token ? token.cost : undefined;
    this.#capacity = Math.min(INITIAL_RETRY_TOKENS, this.#capacity + (cost ?? NO_RETRY_INCREMENT));
  }
}
