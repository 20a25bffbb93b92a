/**
 * Exact quota metering in DynamoDB: one counter item per key per calendar month holds the month count and
 * the count of the current minute window. Each admission is one conditional UpdateItem that checks both
 * windows and increments both counters atomically, so concurrent requests can never overshoot a limit.
 * The calls go through a CounterTransport (lean signed requests, dynamo-lean.ts).
 *
 * At most once, whatever the network does: a write is never sent again once it may have landed (the
 * transport resends a write only after throttling, which DynamoDB did not apply). Each write also records
 * the request's own token in the item, among the last writes and in a slot of its own; when a write's answer
 * is lost (a reset, a cut or mis-sized body, a 5xx, or no answer by the write's own deadline), one consistent
 * read tells whether that write landed (its token is still there): then the request is admitted, counted
 * once. Otherwise — it did not land, or later writes replaced its token before the read, or the read failed —
 * the request is answered `503 quota_unavailable`, counted at most once (once if its write landed unseen).
 * Cost: the item stays under 1 KB with a month of day counts (one WCU per write), the write's answer carries only what it
 * changed; one read only after a lost answer.
 *
 * A request metered while its object is read (proxy/core/handler.ts) whose read then fails is answered 503 and
 * must not stay counted: {@link DynamoQuotaMeter.refund} takes its count back, one more write only on that path.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type { UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { DependencyError } from '../../store/errors.js';
import {
  COUNTER_ATTRIBUTES,
  counterExpiresAt,
  counterKey,
  countersOf,
  dayAttribute,
} from '../../tables/counters.js';
import type { KeyRecord, Limits } from '../../tables/keys.js';
import { COUNTERS_SCHEMA } from '../../tables/schema.js';
import { deadlineSignal } from '../core/deadline.js';
import type { CounterTransport, Item } from './dynamo-transport.js';
import type { Admission, MeterOutcome, QuotaMeter } from './interface.js';
import { minuteWindowStart, retryAfterSeconds } from './windows.js';

export interface DynamoQuotaMeterOptions {
  /** The counters table (its contract: tables/schema.ts, tables/counters.ts). */
  table: string;
  /** How calls reach DynamoDB: lean signed requests (LeanCounterTransport), as on Lambda. */
  transport: CounterTransport;
  /**
   * How long a request's writes wait for their answers before one counts as lost, and the item is read to tell
   * whether it landed: DEPENDENCY_TIMEOUT_MS, like every call. The caller's signal must leave time for that
   * read after it (the handler's metering deadline is a quarter longer: core/deadline.ts, meteringDeadlineMs).
   * @default - none: the writes run until the caller's signal ends them, and a timeout leaves no time to read
   */
  writeTimeoutMs?: number;
}

/** The counter item of one key and month, as far as metering needs it. */
interface Counters {
  /** Unix seconds of the start of the minute window that `minuteCount` counts. */
  minute: number;
  minuteCount: number;
  monthCount: number;
}

/**
 * What the item looked like: known counters, known absent (or holding only a stop that has passed), the key
 * stopped (revoked: {@link stopClause}), or not told (the server did not say).
 */
type State = Counters | 'absent' | 'stopped' | 'unknown';

type Step =
  | { write: 'count' | 'open'; minute: number }
  | { refuse: 'minute' | 'month'; counters: Counters | undefined }
  | { refuse: 'stopped' };

/**
 * A revoked key's stop (tables/counters.ts `stopped_until`), part of both writes' conditions: no request is
 * admitted while the item's stop has not passed. Key administration writes it into the key's counter items
 * when it revokes the key, so every proxy container refuses the key from that moment, whatever its key cache
 * still holds; the same one write per request, a few bytes longer. It only ever refuses more, so what the
 * conditions below prove (never over a limit, a window opened once) holds as before.
 */
const STOP_CLAUSE = ' AND (attribute_not_exists(#stop) OR #stop <= :now)';

/** Writes per request before giving up; only clocks far apart could use more than three. */
const MAX_WRITES = 5;

/**
 * Where the counter item keeps the tokens of recent writes, two ways (each write records its token in both):
 * - the last {@link RECENT_WRITES} writes of the key, newest first (`w0` … `w7`), shifted by every write: a lost
 *   answer is recognised for certain while fewer than 8 writes followed it — enough when every request has a
 *   connection of its own (Lambda: one request per container);
 * - one of {@link TOKEN_SLOTS} slots (`s0` … `s39`) per write, which a meter takes in turn from a random start:
 *   a container's own writes take a slot again only 40 writes later, so a burst that queues behind one
 *   process's connections (npm start) is still recognised, and other containers' writes take it only by chance.
 * Both keep the tokens within 700 bytes, and the item under 1 KB with 31 day counts (one WCU). Recognition in a
 * burst is measured in test/proxy/quota/dynamo.faults.test.ts and quoted in docs/keys.md.
 */
export const RECENT_WRITES = 8;
export const TOKEN_SLOTS = 40;
const RECENT = Array.from({ length: RECENT_WRITES }, (_, i) => `w${i}`);
const SLOT_NAMES = Array.from({ length: TOKEN_SLOTS }, (_, i) => `s${i}`);
/**
 * Records the request's token: shifts the recent writes by one and puts it first (each right side reads the
 * item as it was), and puts it in its slot.
 */
const RECORD_WRITE = [
  ...RECENT.slice(1)
    .map((name, i) => `${name} = if_not_exists(${RECENT[i]}, :none)`)
    .reverse(),
  'w0 = :token',
  '#slot = :token',
].join(', ');

/** Random bits per token: a write that did not land is taken for another's once in 2^48 lost answers. */
const TOKEN_BYTES = 6;
let tokenPool = Buffer.alloc(0);
let tokenAt = 0;

/**
 * A token naming one request's writes (recorded in its slot); at most one of them is ever applied. Random,
 * drawn from a pool (one `randomBytes` call per 512 requests).
 * @example requestToken() // → 'hR3xq_K0' (8 base64url characters: 48 random bits)
 */
function requestToken(): string {
  if (tokenAt + TOKEN_BYTES > tokenPool.byteLength) {
    tokenPool = randomBytes(512 * TOKEN_BYTES);
    tokenAt = 0;
  }
  tokenAt += TOKEN_BYTES;
  return tokenPool.toString('base64url', tokenAt - TOKEN_BYTES, tokenAt);
}

/** A request's mark in the item: its token, in its slot. */
interface Mark {
  token: string;
  slot: string;
}

/** One request as its writes and reads see it. */
interface MeteredRequest {
  /** The counter item: `<key id>#<YYYY-MM>` (tables/counters.ts). */
  pk: string;
  /** The attribute counting the request's day of the month (`d01` … `d31`). */
  day: string;
  /** The request's time, Unix milliseconds: a stop until then or later refuses it. */
  nowMs: number;
  mark: Mark;
  limits: Limits;
  expiresAt: number;
  /** Ends the writes: their own deadline (before the caller's), or the caller's. */
  writeSignal: AbortSignal | undefined;
  /** The caller's: ends everything, the read after a lost answer included. */
  signal: AbortSignal | undefined;
}

/**
 * Whether a failed call may have been applied: no answer at all (network, timeout), or a 5xx, which
 * DynamoDB documents as "may have succeeded". A 4xx answer (throttling, validation, access) was not applied.
 */
function outcomeUnknown(error: unknown): boolean {
  const status = (error as { status?: number }).status;
  return status === undefined || status >= 500;
}

/**
 * What a whole item (a refused write's, or one read) says: stopped while its stop has not passed (one that
 * cannot be read stops too: fail closed); absent when it holds no counters (an item key administration made to
 * hold a stop); else its counters.
 */
function stateOf(item: Item, nowMs: number): Counters | 'absent' | 'stopped' {
  const stored = countersOf(item);
  if (stored.stoppedUntil !== undefined && !(stored.stoppedUntil <= nowMs)) return 'stopped';
  const counted = [stored.minute, stored.minuteCount, stored.monthCount];
  if (counted.every((value) => value === undefined)) return 'absent';
  return countersFrom(item);
}

/** The counters in `item`; `minute` when the item does not carry it (an answer with only what a write updated). */
function countersFrom(item: Item, minute?: number): Counters {
  const stored = countersOf(item);
  const counters: Counters = {
    minute: stored.minute ?? minute ?? Number.NaN,
    minuteCount: stored.minuteCount ?? Number.NaN,
    monthCount: stored.monthCount ?? Number.NaN,
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
function nextStep(state: Counters | 'absent' | 'stopped', minute: number, limits: Limits): Step {
  if (state === 'stopped') return { refuse: 'stopped' };
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
 * The conditional write of one metered request (DynamoQuotaMeter's #write says why its conditions hold): `count`
 * increments both windows, `open` starts the request's minute window at 1.
 */
function meterWrite(
  table: string,
  request: MeteredRequest,
  step: { write: 'count' | 'open'; minute: number },
): UpdateItemCommandInput {
  const { pk, mark, limits } = request;
  const common = {
    TableName: table,
    Key: { [COUNTERS_SCHEMA.partitionKey]: { S: pk } },
    // Only what the write changed: the counters and the tokens it moved (the other slots stay unread).
    ReturnValues: 'UPDATED_NEW',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    // The day's count (d01…d31) rides on the same write: per-day usage costs the request path nothing more.
    ExpressionAttributeNames: {
      '#minute': 'minute',
      '#slot': mark.slot,
      '#day': request.day,
      '#stop': COUNTER_ATTRIBUTES.stoppedUntil,
    },
  } satisfies Partial<UpdateItemCommandInput>;
  const now = { ':now': { N: String(request.nowMs) } };
  // Every write names its request (its token first among the recent writes, and in its slot): when its
  // answer is lost, the item tells whether it landed.
  return step.write === 'count'
    ? {
        ...common,
        UpdateExpression: `SET month_count = month_count + :one, minute_count = minute_count + :one, #day = if_not_exists(#day, :zero) + :one, ${RECORD_WRITE}`,
        ConditionExpression: `#minute = :m AND minute_count < :minuteLimit AND month_count < :monthLimit${STOP_CLAUSE}`,
        ExpressionAttributeValues: {
          ...now,
          ':one': { N: '1' },
          ':zero': { N: '0' },
          ':m': { N: String(step.minute) },
          ':minuteLimit': { N: String(limits.minute) },
          ':monthLimit': { N: String(limits.month) },
          ':token': { S: mark.token },
          ':none': { S: '-' },
        },
      }
    : {
        ...common,
        UpdateExpression: `SET #minute = :m, minute_count = :one, month_count = if_not_exists(month_count, :zero) + :one, #day = if_not_exists(#day, :zero) + :one, expires_at = :expires, ${RECORD_WRITE}`,
        ConditionExpression: `(attribute_not_exists(#minute) OR #minute < :m) AND (attribute_not_exists(month_count) OR month_count < :monthLimit)${STOP_CLAUSE}`,
        ExpressionAttributeValues: {
          ...now,
          ':one': { N: '1' },
          ':zero': { N: '0' },
          ':m': { N: String(step.minute) },
          ':monthLimit': { N: String(limits.month) },
          ':expires': { N: String(request.expiresAt) },
          ':token': { S: mark.token },
          ':none': { S: '-' },
        },
      };
}

/**
 * @example
 * const meter = new DynamoQuotaMeter({ transport: new LeanCounterTransport({ endpoint, region, credentials }),
 *   table: 'catalogue-counters' });
 * const result = await meter.meter(keyRecord, new Date(), { signal: AbortSignal.timeout(1000) });
 * if (!result.ok) console.log(`429, Retry-After: ${result.retryAfterSeconds}`);
 */
export class DynamoQuotaMeter implements QuotaMeter {
  readonly #transport: CounterTransport;
  readonly #table: string;
  readonly #writeTimeoutMs: number | undefined;
  /** The slot of this meter's next request: its requests take the slots in turn, from a random start. */
  #nextSlot = randomInt(TOKEN_SLOTS);

  constructor(options: DynamoQuotaMeterOptions) {
    this.#transport = options.transport;
    this.#table = options.table;
    this.#writeTimeoutMs = options.writeTimeoutMs;
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

    const { signal } = options;
    const slot = this.#nextSlot;
    this.#nextSlot = (slot + 1) % TOKEN_SLOTS;
    const request: MeteredRequest = {
      pk: counterKey(key.keyId, now),
      day: dayAttribute(now),
      nowMs: now.getTime(),
      mark: { token: requestToken(), slot: SLOT_NAMES[slot]! },
      limits,
      expiresAt: counterExpiresAt(now),
      // The writes end at their own deadline, before the caller's: a lost answer then leaves time to read.
      writeSignal:
        this.#writeTimeoutMs === undefined || signal?.aborted ? signal : deadlineSignal(this.#writeTimeoutMs),
      signal,
    };
    // Optimistic first step: almost every request lands in a minute window that is already open.
    let step: Step = { write: 'count', minute };
    for (let writes = 1; writes <= MAX_WRITES && 'write' in step; writes++) {
      const outcome = await this.#write(request, step);
      if (outcome.ok) {
        return { ok: true, countedIn: step.minute, ...rateLimitState(outcome.counters, minute, limits) };
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
        state = await this.#read(request.pk, request.nowMs, signal);
      }
      step = nextStep(state, minute, limits);
    }
    if ('refuse' in step) {
      return step.refuse === 'stopped'
        ? { ok: false, reason: 'stopped' }
        : refuse(step.refuse, step.counters);
    }
    throw new DependencyError('quota', 'quota counter did not settle');
  }

  /**
   * Take back the count of a request this meter admitted at `now` (counted in the minute window `countedIn`):
   * one conditional UpdateItem decrements the month's and the day's counts, and the minute's while the item's
   * window is still the one the request was counted in; when a later window has opened since, the minute it was
   * counted in is over and a second write decrements only the month and the day. Never below zero (the
   * conditions), and each write is sent once (the transport never resends a write that may have landed): a
   * refund whose answer is lost is not tried again, so the request is counted at most once, perhaps not at all.
   * Throws DependencyError when the count could not be taken back, or may not have been.
   */
  async refund(
    key: KeyRecord,
    now: Date,
    admission: Admission,
    options: { signal?: AbortSignal } = {},
  ): Promise<void> {
    for (const window of ['counted', 'later'] as const) {
      const input: UpdateItemCommandInput = {
        TableName: this.#table,
        Key: { [COUNTERS_SCHEMA.partitionKey]: { S: counterKey(key.keyId, now) } },
        UpdateExpression:
          window === 'counted'
            ? 'SET month_count = month_count - :one, minute_count = minute_count - :one, #day = #day - :one'
            : 'SET month_count = month_count - :one, #day = #day - :one',
        ConditionExpression:
          window === 'counted'
            ? '#minute = :m AND minute_count >= :one AND month_count >= :one AND #day >= :one'
            : '#minute <> :m AND month_count >= :one AND #day >= :one',
        ExpressionAttributeNames: { '#minute': 'minute', '#day': dayAttribute(now) },
        ExpressionAttributeValues: { ':one': { N: '1' }, ':m': { N: String(admission.countedIn) } },
      };
      let outcome: Awaited<ReturnType<CounterTransport['updateItem']>>;
      try {
        outcome = await this.#transport.updateItem(input, options.signal);
      } catch (error) {
        if (error instanceof DependencyError) throw error;
        const name = (error as { name?: string }).name ?? 'error';
        throw new DependencyError('quota', `quota refund failed (${name})`, { cause: error });
      }
      if (outcome.ok) return;
    }
    throw new DependencyError('quota', 'quota refund found no count to take back');
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
    request: MeteredRequest,
    step: { write: 'count' | 'open'; minute: number },
  ): Promise<{ ok: true; counters: Counters } | { ok: false; state: State }> {
    const { pk, mark } = request;
    const input = meterWrite(this.#table, request, step);
    let outcome: Awaited<ReturnType<CounterTransport['updateItem']>>;
    try {
      outcome = await this.#transport.updateItem(input, request.writeSignal);
    } catch (error) {
      if (error instanceof DependencyError) throw error;
      const name = (error as { name?: string }).name ?? 'error';
      if (outcomeUnknown(error)) {
        // It may have landed, so it is not sent again: recognise our own write, or give up.
        const landed = await this.#landed(pk, mark, request.signal);
        if (landed) return { ok: true, counters: landed };
      }
      throw new DependencyError('quota', `quota write failed (${name})`, { cause: error });
    }
    if (outcome.ok) return { ok: true, counters: countersFrom(outcome.attributes, step.minute) };
    return { ok: false, state: outcome.item ? stateOf(outcome.item, request.nowMs) : 'unknown' };
  }

  /**
   * After a write whose answer was lost: the counters, when the item still holds the request's token among
   * the recent writes or in its slot (it landed); undefined when it does not or the item cannot be read (not
   * landed; landed and its token replaced by later writes before the read; or not known: the request is then
   * refused with 503, counted at most once).
   * The counters are the item's now, perhaps a few requests later than ours: its rate-limit headers may
   * promise a little less than its own answer would have.
   */
  async #landed(pk: string, mark: Mark, signal: AbortSignal | undefined): Promise<Counters | undefined> {
    if (signal?.aborted) return undefined;
    try {
      const item = await this.#transport.getItem(
        {
          TableName: this.#table,
          Key: { [COUNTERS_SCHEMA.partitionKey]: { S: pk } },
          ConsistentRead: true,
          ProjectionExpression: `#minute, minute_count, month_count, ${RECENT.join(', ')}, #slot`,
          ExpressionAttributeNames: { '#minute': 'minute', '#slot': mark.slot },
        },
        signal,
      );
      const holds = (name: string) => item?.[name]?.S === mark.token;
      return item && (holds(mark.slot) || RECENT.some(holds)) ? countersFrom(item) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Why a write failed, when the server did not say: a consistent read sees every earlier write. */
  async #read(
    pk: string,
    nowMs: number,
    signal: AbortSignal | undefined,
  ): Promise<Counters | 'absent' | 'stopped'> {
    let item: Item | undefined;
    try {
      item = await this.#transport.getItem(
        {
          TableName: this.#table,
          Key: { [COUNTERS_SCHEMA.partitionKey]: { S: pk } },
          ConsistentRead: true,
          ProjectionExpression: '#minute, minute_count, month_count, #stop',
          ExpressionAttributeNames: { '#minute': 'minute', '#stop': COUNTER_ATTRIBUTES.stoppedUntil },
        },
        signal,
      );
    } catch (error) {
      if (error instanceof DependencyError) throw error;
      const name = (error as { name?: string }).name ?? 'error';
      throw new DependencyError('quota', `quota read failed (${name})`, { cause: error });
    }
    return item ? stateOf(item, nowMs) : 'absent';
  }
}
