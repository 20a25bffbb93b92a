/**
 * client/timeout.ts and the `timeout` option: each request may take so long, to its last byte (a stalled
 * connection and a body that stops halfway alike); a timed-out request is retried like a network failure, and
 * the call then throws `CatalogueApiError` with code `timeout` and a message that says so. A call's `timeout`
 * overrides the client's, and the caller's `signal` still aborts with its own reason. Timeouts here are a few
 * hundred milliseconds at most, against a scripted server that really stalls; requests are counted as the
 * client sends them (`onRequest`), since a request given up early may never reach a loaded server.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  CatalogueApiError,
  type CatalogueClientOptions,
  DEFAULT_TIMEOUT_MS,
  type RetryEvent,
} from '../../client/index.js';
import { requestSignal, timeoutOf } from '../../client/timeout.js';
import { errorMessage } from '../../store/errors.js';
import { clientOf, type ScriptedServer, type Step, startScripted } from './scripted.js';

const TAGS = {
  status: 200,
  body: { data: [{ id: 1, name: 'Analog', type: 'nature' }], page: { next_cursor: null } },
};
/** Never answers: the request hangs until the server closes. */
const STALL: Step = () => {};
/** Sends the status and half a body, then nothing more. */
const HALF_BODY: Step = (response) => {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.write('{"data": [');
};
/** Answers with TAGS after `ms`. */
const after =
  (ms: number): Step =>
  (response) => {
    setTimeout(() => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(TAGS.body));
    }, ms);
  };

let api: ScriptedServer;
beforeEach(async () => {
  api = await startScripted();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await api.close();
});

const client = (options: Partial<CatalogueClientOptions> = {}) => clientOf(api, options);

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail('the call succeeded'),
    (error: unknown) => error,
  );
}

describe('timeoutOf', () => {
  it('takes a positive number of milliseconds, Infinity for none; refuses the rest, naming the option', () => {
    expect(timeoutOf(5000, 'timeout')).toBe(5000);
    expect(timeoutOf(Number.POSITIVE_INFINITY, 'timeout')).toBe(Number.POSITIVE_INFINITY);
    for (const wrong of [0, -1, Number.NaN, '5000' as unknown as number]) {
      expect(() => timeoutOf(wrong, 'timeout')).toThrow(
        new RangeError('timeout must be a positive number of milliseconds (Infinity for none)'),
      );
    }
  });
});

describe('requestSignal', () => {
  it("aborts with the caller's reason, and is not a timeout", () => {
    const caller = new AbortController();
    const request = requestSignal(caller.signal, 60_000);
    const reason = new Error('mine');

    caller.abort(reason);

    expect(request.signal.aborted).toBe(true);
    expect(request.signal.reason).toBe(reason);
    expect(request.timedOut()).toBe(false);
    request.done();
  });

  it('aborts when the time is up, and says so', async () => {
    const request = requestSignal(undefined, 20);

    await new Promise((resolve) => request.signal.addEventListener('abort', resolve));

    expect(request.timedOut()).toBe(true);
    expect(String(request.signal.reason)).toContain('timed out after 20 ms');
  });

  it('starts aborted when the caller already has; done() stops the timer and the listening', async () => {
    const reason = new Error('before');
    expect(requestSignal(AbortSignal.abort(reason), 1000).signal.reason).toBe(reason);

    const caller = new AbortController();
    const request = requestSignal(caller.signal, 10);
    request.done();
    caller.abort();
    await new Promise((resolve) => setTimeout(resolve, 30));

    expect(request.signal.aborted).toBe(false);
    expect(request.timedOut()).toBe(false);
  });

  it('sets no timer for Infinity or a timeout past setTimeout’s range', () => {
    const timers = vi.spyOn(globalThis, 'setTimeout');

    requestSignal(undefined, Number.POSITIVE_INFINITY).done();
    requestSignal(undefined, 2 ** 31).done();

    expect(timers).not.toHaveBeenCalled();
  });
});

describe('the timeout option', () => {
  it('gives up a stalled request, retries it, then throws code timeout, saying so', async () => {
    // Prepare
    api.script(STALL, STALL);
    const retries: RetryEvent[] = [];
    let sent = 0;

    // Act
    const error = await failure(
      client({
        timeout: 150,
        maxRetries: 1,
        onRetry: (event) => retries.push(event),
        onRequest: () => {
          sent++;
        },
      }).tags.listPage(),
    );

    // Assess
    expect(error).toBeInstanceOf(CatalogueApiError);
    expect(error).toMatchObject({ status: 0, code: 'timeout', requestId: undefined });
    expect(errorMessage(error)).toBe(
      `timed out: no complete answer from ${new URL(api.baseUrl).origin} to GET /v1/tags within 150 ms (the timeout option)`,
    );
    expect(sent).toBe(2);
    expect(retries.map(({ status, code, attempt }) => ({ status, code, attempt }))).toEqual([
      { status: 0, code: 'timeout', attempt: 1 },
    ]);
  });

  it('bounds the body too: an answer that stops halfway times out', async () => {
    api.script(HALF_BODY);

    const error = await failure(client({ timeout: 150, maxRetries: 0 }).tags.listPage());

    expect(error).toMatchObject({ code: 'timeout' });
    // The request had arrived (and its status was sent); the whole answer had not.
    await expect.poll(() => api.requests.length).toBe(1);
  });

  it('a retry after a timeout can succeed', async () => {
    api.script(STALL, TAGS);

    const page = await client({ timeout: 150 }).tags.listPage();

    expect(page.data).toHaveLength(1);
    expect(api.requests).toHaveLength(2);
  });

  it("a call's timeout overrides the client's, both ways", async () => {
    api.script(after(300));
    const long = await client({ timeout: 100, maxRetries: 0 })
      .modules.get(1, { timeout: 10_000 })
      .catch((error: unknown) => error);
    api.script(STALL);
    const short = await failure(
      client({ timeout: Number.POSITIVE_INFINITY, maxRetries: 0 }).tags.listPage({ timeout: 100 }),
    );

    // 300 ms is past the client's 100 but within the call's 10 s: answered (and not a detail: invalid_response).
    expect(long).toMatchObject({ code: 'invalid_response', status: 200 });
    expect(short).toMatchObject({ code: 'timeout' });
  });

  it("composes with the caller's signal: an abort before the timeout rejects with the abort's reason", async () => {
    api.script(STALL);
    const controller = new AbortController();
    const reason = new Error('user gave up');

    const pending = client({ timeout: 60_000 }).tags.listPage({ signal: controller.signal });
    await expect.poll(() => api.requests.length).toBe(1);
    controller.abort(reason);

    await expect(pending).rejects.toBe(reason);
  });

  it("and a signal that aborts after a timeout stops the retries with the caller's reason", async () => {
    api.script(STALL, STALL, STALL);
    const controller = new AbortController();
    const reason = new Error('enough');
    let sent = 0;

    const error = await failure(
      client({
        timeout: 100,
        maxRetries: 2,
        onRequest: () => {
          sent++;
        },
        onRetry: () => controller.abort(reason),
        sleep: async (_ms, signal) => signal?.throwIfAborted(),
      }).tags.listPage({ signal: controller.signal }),
    );

    expect(error).toBe(reason);
    expect(sent).toBe(1);
  });

  it('is 30 s unless told otherwise, and is checked when the client is made and at each call', async () => {
    api.script(TAGS);
    const timers = vi.spyOn(globalThis, 'setTimeout');

    await client().tags.listPage();

    expect(DEFAULT_TIMEOUT_MS).toBe(30_000);
    expect(timers.mock.calls.map((call) => call[1])).toContain(30_000);
    expect(() => client({ timeout: 0 })).toThrow(RangeError);
    await expect(client().tags.listPage({ timeout: -5 })).rejects.toThrow(RangeError);
    expect(api.requests).toHaveLength(1);
  });
});
