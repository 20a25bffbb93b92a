/**
 * Shared wiring of the proof tests: a rendered catalogue in a memory store, the proxy core over it with a
 * partner-like key, and the comparison of one proxy answer with the oracle's.
 */
import fc from 'fast-check';
import { renderCatalogue } from '../../builder/render/full.js';
import type { Snapshot } from '../../builder/snapshot/snapshot.js';
import { loadConfig } from '../../proxy/config.js';
import { createHandler } from '../../proxy/core/handler.js';
import type { ProxyHandler, ProxyResponse, RequestLogLine } from '../../proxy/core/types.js';
import type { KeyStore } from '../../proxy/keys/interface.js';
import { MemoryKeyStore } from '../../proxy/keys/memory.js';
import type { QuotaMeter } from '../../proxy/quota/interface.js';
import { MemoryQuotaMeter } from '../../proxy/quota/memory.js';
import { objectKeyFor, POINTER_KEY } from '../../store/layout.js';
import type { ObjectStore, WritableObjectStore } from '../../store/objects/interface.js';
import { newRequestId } from '../../store/request-id.js';
import { type CursorBook, normaliseCursor, type OracleResponse } from './oracle.js';

export const PARTNER_KEY = 'pk_live_Pr00fPr00fPr00fPr00fPr';
export const CURSOR_SECRET = 'proof-cursor-secret-0123456789abcdef';

/** Whether the large run was asked for (`PROOF_RUNS` set). */
export const LARGE = Boolean(process.env.PROOF_RUNS);
/** `PROOF_RUNS=<factor>` multiplies every default number of runs; a bare `PROOF_RUNS=1`… means 10. */
export const FACTOR = LARGE ? Math.max(10, Number(process.env.PROOF_RUNS) || 10) : 1;

/** The number of runs of a property: its default, scaled in the large run (at least `largeMinimum`). */
export function scaled(defaultRuns: number, largeMinimum = 0): number {
  return LARGE ? Math.max(largeMinimum, defaultRuns * FACTOR) : defaultRuns;
}

/**
 * fast-check run settings for `numRuns` runs (see {@link scaled}); `PROOF_SEED` and `PROOF_PATH` replay.
 * The whole run, shrinking included, is bounded by `timeLimitMs` (below the test's timeout, so fast-check
 * still prints the seed and the best counterexample so far); running out of time counts as a failure,
 * never as a quietly shorter proof.
 */
export function runSettings<T = never>(numRuns: number, timeLimitMs: number): fc.Parameters<T> {
  const seed = process.env.PROOF_SEED ? Number(process.env.PROOF_SEED) : undefined;
  const path = process.env.PROOF_PATH;
  return {
    numRuns,
    ...(seed === undefined ? {} : { seed }),
    ...(path === undefined ? {} : { path }),
    interruptAfterTimeLimit: timeLimitMs,
    markInterruptAsFailure: true,
  };
}

function clip(text: string, max = 1_500): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

/**
 * `fc.assert` with a report that stays readable when generated values are huge: the seed and path to
 * replay (`PROOF_SEED`, `PROOF_PATH`), the clipped counterexample and the failure.
 */
export async function assertProperty<T extends unknown[]>(
  property: fc.IAsyncProperty<T>,
  settings: fc.Parameters<T>,
): Promise<void> {
  const details = await fc.check(property, settings);
  if (!details.failed) return;
  const replay = `PROOF_SEED=${details.seed} PROOF_PATH=${details.counterexamplePath ?? ''}`;
  const failure =
    details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(
    [
      details.interrupted
        ? `interrupted after ${details.numRuns} runs (time limit)`
        : `failed after ${details.numRuns} runs, ${details.numShrinks} shrinks`,
      `replay: ${replay}`,
      `counterexample: ${clip(JSON.stringify(details.counterexample) ?? 'none')}`,
      `failure: ${clip(failure, 4_000)}`,
    ].join('\n'),
  );
}

/** Test timeout for a property bounded by `timeLimitMs`: room to report after the interrupt. */
export const testTimeout = (timeLimitMs: number) => timeLimitMs + 20_000;

/** Put a rendered snapshot into `store` the way a publish leaves it: objects, then the pointer. */
export async function putCatalogue(
  store: WritableObjectStore,
  snapshot: Snapshot,
  prefix = '',
): Promise<void> {
  const { pointerBytes, objects } = renderCatalogue(snapshot);
  for (const [objectId, bytes] of objects) await store.put(objectKeyFor(prefix, objectId), bytes);
  await store.put(`${prefix}${POINTER_KEY}`, pointerBytes);
}

export interface TestProxyOptions {
  objects: ObjectStore;
  prefix?: string;
  keys?: KeyStore;
  quota?: QuotaMeter;
  env?: Record<string, string>;
  log?: (line: RequestLogLine) => void;
}

/** A key store holding {@link PARTNER_KEY} with limits no test reaches. */
export function partnerKeys(): MemoryKeyStore {
  const keys = new MemoryKeyStore();
  keys.add(PARTNER_KEY, { tier: 'partner', limits: { minute: 1e12, month: 1e12 }, keyId: 'key_proof' });
  return keys;
}

/** The proxy core over `objects`, with in-memory keys and meter unless given. */
export function testProxy(options: TestProxyOptions): ProxyHandler {
  return createHandler({
    objects: options.objects,
    keys: options.keys ?? partnerKeys(),
    quota: options.quota ?? new MemoryQuotaMeter(),
    config: loadConfig({
      CATALOGUE_BUCKET: 'proof',
      CATALOGUE_PREFIX: options.prefix ?? '',
      KEYS_TABLE: 'keys',
      COUNTERS_TABLE: 'counters',
      CURSOR_SECRET,
      ...options.env,
    }),
    now: () => new Date(),
    requestId: newRequestId,
    log: options.log ?? (() => {}),
  });
}

/** What went wrong, or undefined when `actual` is an error envelope with a request id. */
export function envelopeProblem(actual: ProxyResponse): string | undefined {
  if (actual.body === undefined) return 'an error without a body';
  let parsed: { error?: { code?: unknown; message?: unknown; request_id?: unknown } };
  try {
    parsed = JSON.parse(actual.body.toString('utf8'));
  } catch {
    return `an error body that is not JSON: ${actual.body.toString('utf8').slice(0, 200)}`;
  }
  const error = parsed.error;
  if (!error || typeof error.code !== 'string' || typeof error.message !== 'string') return 'not an envelope';
  if (typeof error.request_id !== 'string' || !/^req_[A-Za-z0-9_-]+$/.test(error.request_id)) {
    return `request_id ${String(error.request_id)}`;
  }
  if (actual.headers['x-request-id'] !== error.request_id) return 'X-Request-Id differs from request_id';
  return undefined;
}

export function errorCodeOf(actual: ProxyResponse): string | undefined {
  try {
    return JSON.parse(actual.body?.toString('utf8') ?? '').error?.code;
  } catch {
    return undefined;
  }
}

/**
 * Compare one GET answer with the oracle's: status, error code, body bytes (cursor as null / non-null), and
 * the headers the design defines. Records the proxy's cursor in `book`. Returns the cursor, if any.
 * Throws with a description on any difference.
 */
export function expectSame(
  label: string,
  actual: ProxyResponse,
  expected: OracleResponse,
  book: CursorBook,
): string | null {
  const fail = (what: string): never => {
    throw new Error(
      `${label}: ${what}\n  proxy:  ${actual.status} ${actual.body?.toString('utf8').slice(0, 600)}\n  oracle: ${expected.status} ${expected.code ?? expected.body?.slice(0, 600)}`,
    );
  };
  if (actual.status !== expected.status) fail('status differs');
  if (expected.status !== 200) {
    const problem = envelopeProblem(actual);
    if (problem) fail(problem);
    if (errorCodeOf(actual) !== expected.code) fail('error code differs');
    // Authenticated and metered: a 400 or 404 counts and says so (docs/api.md#rate-limits).
    if ((actual.status === 400 || actual.status === 404) && !actual.headers['x-ratelimit-remaining-month']) {
      fail('rate-limit headers missing on an authenticated error');
    }
    return null;
  }
  if (!actual.body) return fail('no body');
  const { body, cursor } = normaliseCursor(actual.body.toString('utf8'));
  if (body !== expected.body) fail('body differs');
  if ((cursor === null) !== (expected.next === undefined)) fail('next_cursor null-ness differs');
  if (cursor !== null) book.remember(cursor, expected.next!);
  const h = actual.headers;
  if (!/^"[^"]+"$/.test(h.etag ?? '')) fail(`etag ${h.etag}`);
  if (h['content-type'] !== 'application/json; charset=utf-8') fail(`content-type ${h['content-type']}`);
  if (h.link !== '<https://creativecommons.org/licenses/by/4.0/>; rel="license"') fail(`link ${h.link}`);
  if (h['content-length'] !== String(actual.body.byteLength)) fail('content-length');
  if (!h['x-ratelimit-remaining-minute'] || !h['x-ratelimit-reset']) fail('rate-limit headers missing');
  if (!/^req_/.test(h['x-request-id'] ?? '')) fail('x-request-id');
  return cursor;
}
