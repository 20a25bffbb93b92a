/**
 * Exact quota metering in DynamoDB: one counter item per key per calendar month holds the month count and
 * the count of the current minute window. Each admission is one conditional UpdateItem that checks both
 * windows and increments both counters atomically, so concurrent requests can never overshoot a limit.
 * The calls go through a CounterTransport (the SDK client, or lean signed requests: HOT_PATH_CLIENT), so
 * this logic exists once for both.
 *
 * At most once, whatever the network does: a write is never sent again once it may have landed (the
 * transports resend a write only after throttling, which DynamoDB did not apply). Each write also records
 * the request's own token in the item, in a ring of the last {@link RECENT_WRITES} writes (`w0` newest);
 * when a write's answer is lost (a reset, a timeout, a 5xx), one consistent read tells whether that write
 * landed (its token is in the ring): then the request is admitted, counted once. Otherwise — it did not
 * land, or more than RECENT_WRITES writes of the key followed it before the read, or the read failed — the
 * request is answered `503 quota_unavailable`, counted at most once (once if its write landed unseen). Cost:
 * ~170 bytes more per item (still one WCU per write: the item stays under 1 KB), nothing on the request
 * path; one read only after a lost answer.
 */
import { randomBytes } from 'node:crypto';
import type { DynamoDBClient, UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { DependencyError } from '../../store/errors.js';
import { counterKey, dayAttribute } from '../../tables/counters.js';
import type { KeyRecord, Limits } from '../../tables/keys.js';
import { COUNTER_RETENTION_SECONDS, COUNTERS_SCHEMA } from '../../tables/schema.js';
import {
  type CounterTransport,
  type Item,
  SdkCounterTransport,
  UnansweredWriteError,
} from './dynamo-transport.js';
import type { MeterOutcome, QuotaMeter } from './interface.js';
import { minuteWindowStart, nextMonthStart, retryAfterSeconds } from './windows.js';

export type DynamoQuotaMeterOptions = {
  /** The counters table (its contract: tables/schema.ts, tables/counters.ts). */
  table: string;
} & (
  | {
      /** An SDK client: the same as `transport: new SdkCounterTransport(client)`. */
      client: DynamoDBClient;
    }
  | {
      /** How calls reach DynamoDB: the SDK (SdkCounterTransport) or lean signed requests (LeanCounterTransport). */
      transport: CounterTransport;
    }
);

/** The counter item of one key and month, as far as metering needs it. */
interface Counters {
  /** Unix seconds of the start of the minute window that `minuteCount` counts. */
  minute: number;
  minuteCount: number;
  monthCount: number;
}

/** What the item looked like: known counters, known absent, or not told (the server did not say). */
type State = Counters | 'absent' | 'unknown';

type Step =
  | { write: 'count' | 'open'; minute: number }
  | { refuse: 'minute' | 'month'; counters: Counters | undefined };

/** Writes per request before giving up; only clocks far apart could use more than three. */
const MAX_WRITES = 5;

/** Writes whose tokens the item keeps (`w0` … `w7`): a lost answer is recognised up to this many writes late. */
const RECENT_WRITES = 8;
const RECENT = Array.from({ length: RECENT_WRITES }, (_, i) => `w${i}`);
/** Shifts the ring by one and puts the request's token first (each right side reads the item as it was). */
const RECORD_WRITE = [
  ...RECENT.slice(1)
    .map((name, i) => `${name} = if_not_exists(${RECENT[i]}, :none)`)
    .reverse(),
  'w0 = :token',
].join(', ');

/** Random per process: with a counter, it makes every request's token unique across all containers. */
const PROCESS_TOKEN = randomBytes(9).toString('base64url');
let requestCounter = 0;

/**
 * A token naming one request's writes (recorded in the item's ring); at most one of them is ever applied.
 * @example requestToken() // → 'hR3x…Kq0' (12 random characters, then a base-36 counter)
 */
function requestToken(): string {
  requestCounter = (requestCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `${PROCESS_TOKEN}${requestCounter.toString(36)}`;
}

/**
 * Whether a failed call may have been applied: no answer at all (network, timeout), or a 5xx, which
 * DynamoDB documents as "may have succeeded". A 4xx answer (throttling, validation, access) was not applied.
 */
function outcomeUnknown(error: unknown): boolean {
  const shape = error as { status?: number; $metadata?: { httpStatusCode?: number } };
  const status = shape.status ?? shape.$metadata?.httpStatusCode;
  return status === undefined || status >= 500;
}

function countersFrom(item: Item): Counters {
  const counters: Counters = {
    minute: Number(item.minute?.N),
    minuteCount: Number(item.minute_count?.N),
    monthCount: Number(item.month_count?.N),
  };
  if (!Object.values(counters).every(Number.isSafeInteger)) {
    throw new DependencyError('quota', 'counter item is malformed');
  }
  return counters;
}

/**
 * The next step from a known state of the item. A window later than ours means another instance's clock
 * is ahead: count into that window rather than refuse a request for a minute that has already closed.
 */
function nextStep(state: Counters | 'absent', minute: number, limits: Limits): Step {
  if (state === 'absent') return { write: 'open', minute };
  if (state.monthCount >= limits.month) return { refuse: 'month', counters: state };
  if (state.minute < minute) return { write: 'open', minute };
  if (state.minuteCount >= limits.minute) return { refuse: 'minute', counters: state };
  return { write: 'count', minute: state.minute };
}

/** Headers' view of `counters` (undefined: nothing known, so promise nothing) for window `minute`. */
function rateLimitState(counters: Counters | undefined, minute: number, limits: Limits) {
  const current = counters && counters.minute >= minute ? counters : undefined;
  const remainingMonth = Math.max(0, limits.month - (counters?.monthCount ?? limits.month));
  const minuteRoom = Math.max(0, limits.minute - (current?.minuteCount ?? 0));
  return {
    limitMonth: limits.month,
    remainingMonth,
    limitMinute: limits.minute,
    // Never promise more this minute than the month has left.
    remainingMinute: Math.min(minuteRoom, remainingMonth),
    reset: current?.minute ?? minute,
  };
}

/**
 * @example
 * const meter = new DynamoQuotaMeter({ client: dynamoClient({ endpoint }), table: 'catalogue-counters' });
 * const lean = new DynamoQuotaMeter({ transport: new LeanCounterTransport({ endpoint, region, credentials }),
 *   table: 'catalogue-counters' });
 * const result = await meter.meter(keyRecord, new Date(), { signal: AbortSignal.timeout(1000) });
 * if (!result.ok) console.log(`429, Retry-After: ${result.retryAfterSeconds}`);
 */
export class DynamoQuotaMeter implements QuotaMeter {
  readonly #transport: CounterTransport;
  readonly #table: string;

  constructor(options: DynamoQuotaMeterOptions) {
    this.#transport = 'transport' in options ? options.transport : new SdkCounterTransport(options.client);
    this.#table = options.table;
  }

  async meter(key: KeyRecord, now: Date, options: { signal?: AbortSignal } = {}): Promise<MeterOutcome> {
    const { limits } = key;
    const minute = minuteWindowStart(now);
    const refuse = (reason: 'minute' | 'month', counters: Counters | undefined): MeterOutcome => {
      const state = rateLimitState(counters, minute, limits);
      // A window ahead of our clock resets later than ours would.
      const at = reason === 'minute' ? new Date(Math.max(now.getTime(), state.reset * 1000)) : now;
      return { ok: false, reason, retryAfterSeconds: retryAfterSeconds(reason, at), ...state };
    };
    if (limits.month < 1) return refuse('month', undefined);
    if (limits.minute < 1) return refuse('minute', undefined);

    const pk = counterKey(key.keyId, now);
    const day = dayAttribute(now);
    const expiresAt = nextMonthStart(now) + COUNTER_RETENTION_SECONDS;
    const token = requestToken();
    // Optimistic first step: almost every request lands in a minute window that is already open.
    let step: Step = { write: 'count', minute };
    for (let writes = 1; writes <= MAX_WRITES && 'write' in step; writes++) {
      const outcome = await this.#write(pk, day, token, step, limits, expiresAt, options.signal);
      if (outcome.ok) {
        return { ok: true, ...rateLimitState(outcome.counters, minute, limits) };
      }
      let state = outcome.state;
      if (state === 'unknown') {
        // AWS returns the item that failed the condition; when it is absent (new item, or a server such as
        // dynalite that does not return it), a failed first count most likely means a new window: open it.
        // Only after that fails too is the item read to learn why.
        if (writes === 1 && step.write === 'count') {
          step = { write: 'open', minute };
          continue;
        }
        state = await this.#read(pk, options.signal);
      }
      step = nextStep(state, minute, limits);
    }
    if ('refuse' in step) return refuse(step.refuse, step.counters);
    throw new DependencyError('quota', 'quota counter did not settle');
  }

  /**
   * One conditional write. DynamoDB applies writes to one item one at a time, and each condition is
   * evaluated against the item as it is at that moment, so the check and the increment cannot interleave
   * with another request's: whatever the concurrency, at most `limit` writes succeed per window.
   *
   * `count`: the item's minute window is ours and both windows have room → increment both counters.
   * `open`: the item has no window yet or an older one, and the month has room → start our window at 1.
   * Once a request opens window m, `minute < :m` is false for every other request of window m, so a window
   * is opened once and every later request of it must pass the `count` condition. Windows only move
   * forward (`open` requires `minute < :m`), so a late request can never reset a newer window.
   */
  async #write(
    pk: string,
    day: string,
    token: string,
    step: { write: 'count' | 'open'; minute: number },
    limits: Limits,
    expiresAt: number,
    signal: AbortSignal | undefined,
  ): Promise<{ ok: true; counters: Counters } | { ok: false; state: State }> {
    const common = {
      TableName: this.#table,
      Key: { [COUNTERS_SCHEMA.partitionKey]: { S: pk } },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      // The day's count (d01…d31) rides on the same write: per-day usage costs the request path nothing more.
      ExpressionAttributeNames: { '#minute': 'minute', '#day': day },
    } satisfies Partial<UpdateItemCommandInput>;
    // Every write names its request (the ring w0…): when its answer is lost, the item tells whether it landed.
    const input: UpdateItemCommandInput =
      step.write === 'count'
        ? {
            ...common,
            UpdateExpression: `SET month_count = month_count + :one, minute_count = minute_count + :one, #day = if_not_exists(#day, :zero) + :one, ${RECORD_WRITE}`,
            ConditionExpression: '#minute = :m AND minute_count < :minuteLimit AND month_count < :monthLimit',
            ExpressionAttributeValues: {
              ':one': { N: '1' },
              ':zero': { N: '0' },
              ':m': { N: String(step.minute) },
              ':minuteLimit': { N: String(limits.minute) },
              ':monthLimit': { N: String(limits.month) },
              ':token': { S: token },
              ':none': { S: '-' },
            },
          }
        : {
            ...common,
            UpdateExpression: `SET #minute = :m, minute_count = :one, month_count = if_not_exists(month_count, :zero) + :one, #day = if_not_exists(#day, :zero) + :one, expires_at = :expires, ${RECORD_WRITE}`,
            ConditionExpression:
              '(attribute_not_exists(#minute) OR #minute < :m) AND (attribute_not_exists(month_count) OR month_count < :monthLimit)',
            ExpressionAttributeValues: {
              ':one': { N: '1' },
              ':zero': { N: '0' },
              ':m': { N: String(step.minute) },
              ':monthLimit': { N: String(limits.month) },
              ':expires': { N: String(expiresAt) },
              ':token': { S: token },
              ':none': { S: '-' },
            },
          };
    let outcome: Awaited<ReturnType<CounterTransport['updateItem']>>;
    try {
      outcome = await this.#transport.updateItem(input, signal);
    } catch (error) {
      if (error instanceof DependencyError) throw error;
      const failure = error instanceof UnansweredWriteError ? error.sent : error;
      const name = (failure as { name?: string }).name ?? 'error';
      if (outcomeUnknown(error)) {
        // It may have landed, so it is not sent again: recognise our own write, or give up.
        const landed = await this.#landed(pk, token, signal);
        if (landed) return { ok: true, counters: landed };
      }
      throw new DependencyError('quota', `quota write failed (${name})`, { cause: error });
    }
    if (outcome.ok) return { ok: true, counters: countersFrom(outcome.attributes) };
    return { ok: false, state: outcome.item ? countersFrom(outcome.item) : 'unknown' };
  }

  /**
   * After a write whose answer was lost: the counters, when the item's ring of recent writes holds ours (it
   * landed); undefined when it does not or the item cannot be read (not landed, landed and followed by more
   * than RECENT_WRITES others, or not known: the request is then refused with 503, counted at most once).
   * The counters are the item's now, at most RECENT_WRITES − 1 requests later than ours: its rate-limit
   * headers may promise a little less than its own answer would have.
   */
  async #landed(pk: string, token: string, signal: AbortSignal | undefined): Promise<Counters | undefined> {
    if (signal?.aborted) return undefined;
    try {
      const item = await this.#transport.getItem(
        { TableName: this.#table, Key: { [COUNTERS_SCHEMA.partitionKey]: { S: pk } }, ConsistentRead: true },
        signal,
      );
      return item && RECENT.some((name) => item[name]?.S === token) ? countersFrom(item) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Why a write failed, when the server did not say: a consistent read sees every earlier write. */
  async #read(pk: string, signal: AbortSignal | undefined): Promise<Counters | 'absent'> {
    let item: Item | undefined;
    try {
      item = await this.#transport.getItem(
        {
          TableName: this.#table,
          Key: { [COUNTERS_SCHEMA.partitionKey]: { S: pk } },
          ConsistentRead: true,
        },
        signal,
      );
    } catch (error) {
      if (error instanceof DependencyError) throw error;
      const name = (error as { name?: string }).name ?? 'error';
      throw new DependencyError('quota', `quota read failed (${name})`, { cause: error });
    }
    return item ? countersFrom(item) : 'absent';
  }
}
