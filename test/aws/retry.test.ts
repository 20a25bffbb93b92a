/** aws/retry.ts: the SDK's standard retry mode, as the lean signed calls use it. */
import { describe, expect, it } from 'vitest';
import { retryTypeOf, StandardRetries } from '../../aws/retry.js';

describe('retryTypeOf: the SDK’s classification of error answers', () => {
  it.each([
    ['ThrottlingException', 400, 'THROTTLING'],
    ['ProvisionedThroughputExceededException', 400, 'THROTTLING'],
    ['SlowDown', 503, 'THROTTLING'],
    ['HTTP 429', 429, 'THROTTLING'],
    ['InternalServerError', 500, 'TRANSIENT'],
    ['HTTP 503', 503, 'TRANSIENT'],
    ['RequestTimeout', 400, 'TRANSIENT'],
    ['ConditionalCheckFailedException', 400, undefined],
    ['AccessDenied', 403, undefined],
    ['ResourceNotFoundException', 400, undefined],
  ] as const)('%s (%i) → %s', (code, status, type) => {
    expect(retryTypeOf(code, status)).toBe(type);
  });
});

describe('StandardRetries', () => {
  it('allows one retry per call (two attempts), after a backoff below its base', async () => {
    const retries = new StandardRetries(2, () => 0.5);
    const first = await retries.acquireInitialRetryToken();

    const started = performance.now();
    const second = await retries.refreshRetryTokenForRetry(first, { errorType: 'TRANSIENT' });

    expect(performance.now() - started).toBeGreaterThanOrEqual(20);
    expect(second.getRetryCount()).toBe(1);
    await expect(retries.refreshRetryTokenForRetry(second, { errorType: 'TRANSIENT' })).rejects.toThrow();
  });

  it('refuses what is not retryable, and stops retrying when its quota is spent until successes refill it', async () => {
    const retries = new StandardRetries(2, () => 0);
    const first = await retries.acquireInitialRetryToken();
    await expect(retries.refreshRetryTokenForRetry(first, { errorType: 'CLIENT_ERROR' })).rejects.toThrow();

    let granted = 0;
    for (let i = 0; i < 200; i++) {
      try {
        await retries.refreshRetryTokenForRetry(first, { errorType: 'TRANSIENT' });
        granted++;
      } catch {
        break;
      }
    }
    // The SDK's quota: 500 units, 14 per transient retry.
    expect(granted).toBe(35);
    for (let i = 0; i < 14; i++) retries.recordSuccess(first);
    await expect(retries.refreshRetryTokenForRetry(first, { errorType: 'TRANSIENT' })).resolves.toBeDefined();
  });
});
