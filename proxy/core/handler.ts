/**
 * The proxy core: `request + dependencies → response`. Steps, in the order docs/api.md#errors ranks their answers:
 * method (405) → Authorization header (401) → configuration (503) → key lookup (503/401) → the answer itself
 * (404 route, 400, 404 resource, 304, 200 in the negotiated content coding, 503 origin) → metering (503/429).
 *
 * The answer is worked out first and sent only once the meter admits it; a 429 outranks a 404 or a 400, and a
 * request the origin could not serve is not counted (docs/api.md#rate-limits: 503s do not count).
 *
 * Latency: an answer the warm container holds (the byte cache) is there at once and then metered: one DynamoDB
 * round trip. An answer that needs a read (a miss) is read and metered at the same time, and waits for both:
 * one round trip, the slower of S3 and DynamoDB, instead of their sum. What is sent is what reading first and
 * metering second would send: a 429 or the meter's 503 replace the answer, whose bytes are never sent; a read
 * that fails is its 503, and its count, when the meter admitted it, is taken back (QuotaMeter.refund: one more
 * write, on that path only); should that fail too, the 503 stays counted once and its log line says so.
 */
import { DependencyError, errorText } from '../../store/errors.js';
import { type KeyRecord, keyAccepted } from '../../tables/keys.js';
import { ByteCache } from '../cache/bytes.js';
import { cursorError } from '../catalogue/cursor.js';
import { Catalogue, type ReadOutcome } from '../catalogue/reader.js';
import type { ConfigOutcome, ProxyConfig } from '../config.js';
import {
  type AcceptedCodings,
  acceptedCodings,
  chooseCoding,
  codedEtag,
  encodeBody,
  ifNoneMatchFor,
} from '../http/coding.js';
import { apiError } from '../http/errors.js';
import {
  errorResponse,
  notModifiedResponse,
  okResponse,
  optionsResponse,
  setRateLimitHeaders,
  withoutBody,
} from '../http/responses.js';
import { type Credentials, credentialsReader } from '../keys/hash.js';
import { isoTime, latencySince } from '../log/time.js';
import type { MeterOutcome } from '../quota/interface.js';
import { type ParseOutcome, requestParser } from '../request/plan.js';
import { callWithDeadline, meteringDeadlineMs } from './deadline.js';
import type {
  ProxyDependencies,
  ProxyHandler,
  ProxyRequest,
  ProxyResponse,
  RequestLogLine,
} from './types.js';

/** Timeout of dependency calls when the configuration itself could not be read. */
const FALLBACK_TIMEOUT_MS = 2_000;

/** What every request's stages share: the dependencies and what the handler built from the configuration. */
interface Core {
  deps: ProxyDependencies;
  /** The configuration, when it is complete (otherwise every authenticated request is a 503). */
  config: ProxyConfig | undefined;
  catalogue: Catalogue | undefined;
  byteCache: ByteCache;
  timeoutMs: number;
  /** The `Authorization` header's key hash (remembered for recent keys), or its refusal. */
  credentialsOf: (header: string | undefined) => Credentials;
}

/** One request as the stages see it: what was asked, its id, and its time (the clock read once). */
interface RequestContext {
  request: ProxyRequest;
  parsed: ParseOutcome;
  requestId: string;
  at: Date;
}

/** How a stage ended a request: the response, and for the log line what failed (503s only). */
interface Settled {
  response: ProxyResponse;
  error?: string | undefined;
}

/** A request answered: the response and what its log line reports besides it. */
interface Handled extends Settled {
  /** The key's id once the key is known, also when it is refused (revoked, expired). */
  keyId: string | null;
}

/** The key a lookup found (`null`: none), or how the lookup failed. */
type KeyLookup = KeyRecord | null | { failed: Settled };

/**
 * Build the request handler. It keeps the catalogue index in memory between requests.
 * @example
 * const handle = createHandler({ objects, keys, quota, config: loadConfig(), now: () => new Date(),
 *   requestId: newRequestId, log: (line) => console.log(JSON.stringify(line)) });
 * const response = await handle({ method: 'GET', path: '/v1/tags', query: '', headers: { authorization } });
 */
export function createHandler(deps: ProxyDependencies): ProxyHandler {
  const core = coreOf(deps);
  const parse = requestParser();
  return async (request) => {
    const started = request.receivedAt ?? performance.now();
    const context: RequestContext = {
      request,
      parsed: parse(request.method, request.path, request.query),
      requestId: deps.requestId(),
      at: deps.now(),
    };
    let handled: Handled;
    try {
      handled = await respond(core, context);
    } catch (error) {
      // Only a bug gets here; answer within the documented codes and say what happened in the log.
      const failed = originUnavailable(error, context.requestId);
      handled = { response: failed.response, error: `unexpected: ${failed.error}`, keyId: null };
    }
    const response = request.method === 'HEAD' ? withoutBody(handled.response) : handled.response;
    writeLog(deps, logLine(context, handled, response, started));
    return response;
  };
}

/** What the handler builds once from its dependencies: the catalogue reader and its byte cache. */
function coreOf(deps: ProxyDependencies): Core {
  const config = deps.config.ok ? deps.config.config : undefined;
  const byteCache = deps.byteCache ?? new ByteCache({ maxBytes: config?.byteCacheBytes ?? 0 });
  const catalogue =
    config &&
    new Catalogue({
      objects: deps.objects,
      prefix: config.prefix,
      cursorSecret: config.cursorSecret,
      pointerTtlMs: config.pointerTtlMs,
      dependencyTimeoutMs: config.dependencyTimeoutMs,
      now: () => deps.now().getTime(),
      cache: byteCache,
    });
  const timeoutMs = config?.dependencyTimeoutMs ?? FALLBACK_TIMEOUT_MS;
  return { deps, config, catalogue, byteCache, timeoutMs, credentialsOf: credentialsReader() };
}

/** The stages in the order their answers rank: method, Authorization, configuration, key, answer, metering. */
async function respond(core: Core, context: RequestContext): Promise<Handled> {
  const { request, parsed, requestId } = context;
  if (!parsed.ok && parsed.error.code === 'method_not_allowed')
    return { response: errorResponse(parsed.error, requestId), keyId: null };
  const credentials = core.credentialsOf(request.headers.authorization);
  if (!credentials.ok) return { response: errorResponse(credentials.error, requestId), keyId: null };
  if (!core.config || !core.catalogue) return { ...unconfigured(core.deps.config, requestId), keyId: null };

  const lookup = lookUpKey(core, credentials.keyHash, requestId);
  // A warm container knows most keys already: the lookup is there at once, no promise to wait for.
  const key = lookup instanceof Promise ? await lookup : lookup;
  if (key !== null && 'failed' in key) return { ...key.failed, keyId: null };
  // A known key is logged by its id even when refused (revoked, expired): the operator sees who still tries.
  const keyId = key ? key.keyId : null;
  if (!key || !keyAccepted(key, context.at.getTime()))
    return {
      response: errorResponse(apiError('invalid_key', 'This API key is not accepted.'), requestId),
      keyId,
    };

  const answering = answer(core, context);
  // A warm container's hot answer is there at once: no turn of the event loop spent waiting for it.
  if (!(answering instanceof Promise)) {
    if (answering.response.status === 503) return { ...answering, keyId };
    return admit(answering, await meter(core, key, context), requestId, keyId);
  }
  // The answer needs a read: the metering write runs beside it, one round trip instead of two, and the answer
  // waits for both. Which one is sent is decided as if they had run one after the other.
  const [answered, metered] = await Promise.all([answering, meter(core, key, context)]);
  if (answered.response.status === 503)
    return { ...(await refund(core, key, answered, metered, context)), keyId };
  return admit(answered, metered, requestId, keyId);
}

/** The key of this key hash: from the warm container's cache at once, else looked up within the deadline. */
function lookUpKey(core: Core, keyHash: string, requestId: string): KeyLookup | Promise<KeyLookup> {
  const { keys } = core.deps;
  // A warm container knows most keys already: no dependency call, no deadline to arm.
  const known = keys.known?.(keyHash);
  if (known !== undefined) return known;
  return callWithDeadline('keys', core.timeoutMs, (signal) => keys.lookup(keyHash, { signal })).then(
    (found) => found ?? null,
    (error: unknown) => ({
      failed: {
        response: errorResponse(
          apiError('authentication_unavailable', 'Keys cannot be checked right now.'),
          requestId,
        ),
        error: describe(error),
      },
    }),
  );
}

/** The answer itself, before metering: 404, 400, OPTIONS' 204, 304, 200, or 503 when the origin fails. */
function answer(core: Core, context: RequestContext): Settled | Promise<Settled> {
  const { request, parsed, requestId } = context;
  if (!parsed.ok) return { response: errorResponse(parsed.error, requestId) };
  if (parsed.method === 'OPTIONS') {
    // OPTIONS reads nothing, but refuses a tampered cursor as GET and HEAD do.
    const cursor = cursorError(parsed.plan, core.config!.cursorSecret);
    return { response: cursor ? errorResponse(cursor, requestId) : optionsResponse(requestId) };
  }
  try {
    const accepted = acceptedCodings(request.headers['accept-encoding']);
    const ifNoneMatch = ifNoneMatchFor(request.headers['if-none-match'], accepted);
    const reading = core.catalogue!.read(parsed.plan, ifNoneMatch);
    if (!(reading instanceof Promise)) return compose(core, reading, accepted, requestId);
    return reading
      .then((outcome) => compose(core, outcome, accepted, requestId))
      .catch((error: unknown) => originUnavailable(error, requestId));
  } catch (error) {
    return originUnavailable(error, requestId);
  }
}

/** The response to what the catalogue read gave: the 200 in the preferred coding, a 304, or its refusal. */
function compose(core: Core, outcome: ReadOutcome, accepted: AcceptedCodings, requestId: string): Settled {
  if (outcome.ok) return { response: codedResponse(core, outcome, accepted, requestId) };
  if (outcome.reason === 'not-modified') return { response: notModifiedResponse(outcome.etag, requestId) };
  const response = errorResponse(outcome.error, requestId);
  if (outcome.reason === 'refused' && outcome.error.code === 'configuration_error')
    return { response, error: outcome.error.message };
  return { response };
}

/** The 200 in the coding the request prefers (HEAD too: its Content-Length is the coded length). */
function codedResponse(
  core: Core,
  { body, etag }: { body: Buffer; etag: string },
  accepted: AcceptedCodings,
  requestId: string,
): ProxyResponse {
  const coding = chooseCoding(accepted, body.byteLength);
  if (coding === 'identity') return okResponse(body, etag, requestId);
  const coded = encodeBody(body, etag, coding, core.byteCache);
  return okResponse(coded, codedEtag(etag, coding), requestId, coding);
}

/** What metering a request came to: the meter's outcome, or the 503 of a meter that failed. */
type Metered = { outcome: MeterOutcome } | { failed: Settled };

/** Count the request at its time; never rejects (a fault is the 503 it answers). */
function meter(core: Core, key: KeyRecord, context: RequestContext): Promise<Metered> {
  return callWithDeadline('quota', meteringDeadlineMs(core.timeoutMs), (signal) =>
    core.deps.quota.meter(key, context.at, { signal }),
  ).then(
    (outcome) => ({ outcome }),
    (error: unknown) => {
      const refusal = apiError('quota_unavailable', 'Quota cannot be checked right now.');
      return { failed: { response: errorResponse(refusal, context.requestId), error: describe(error) } };
    },
  );
}

/**
 * The answer metering allows: the answer with the rate-limit headers when the request was admitted; else the
 * 429 or the meter's 503 instead, and the answer's bytes are dropped unsent.
 */
function admit(answered: Settled, metered: Metered, requestId: string, keyId: string | null): Handled {
  if ('failed' in metered) return { response: metered.failed.response, error: metered.failed.error, keyId };
  const { outcome } = metered;
  if (outcome.ok) {
    return { response: setRateLimitHeaders(answered.response, outcome), error: answered.error, keyId };
  }
  if (outcome.reason === 'stopped') return { ...stoppedKey(requestId), keyId };
  const which = outcome.reason === 'month' ? 'monthly' : 'per-minute';
  const refusal = errorResponse(
    apiError('rate_limit_exceeded', `The ${which} request quota of this key is used up.`),
    requestId,
  );
  return { response: setRateLimitHeaders(refusal, outcome, outcome.retryAfterSeconds), keyId };
}

/**
 * A key whose counters key administration stopped when it revoked it (tables/counters.ts): refused as the key
 * cache refuses it once it reads the key again, not counted; the answer's bytes are dropped unsent.
 */
function stoppedKey(requestId: string): Settled {
  return { response: errorResponse(apiError('invalid_key', 'This API key is not accepted.'), requestId) };
}

/**
 * A 503 of the read, metered at the same time: answered as if the read had come first, so not counted — an
 * admitted request's count is taken back (refused and failed meters counted nothing, or at most once unseen).
 * A refund that fails leaves the request counted once, and the log line says so; so does a meter that failed
 * (its count may have landed unseen).
 */
async function refund(
  core: Core,
  key: KeyRecord,
  answered: Settled,
  metered: Metered,
  context: RequestContext,
): Promise<Settled> {
  // A meter whose outcome is unknown (its answer lost, and not recovered within the deadline) may have counted
  // the request; nothing can be taken back that is not known to have landed.
  if ('failed' in metered) {
    return {
      response: answered.response,
      error: `${answered.error}; may be counted once, metering failed: ${metered.failed.error}`,
    };
  }
  // The key's own refusal ranks before the read's 503 (the key step comes first), as it would have from its cache.
  if (!metered.outcome.ok)
    return metered.outcome.reason === 'stopped' ? stoppedKey(context.requestId) : answered;
  const admission = metered.outcome;
  try {
    await callWithDeadline('quota', core.timeoutMs, (signal) =>
      core.deps.quota.refund(key, context.at, admission, { signal }),
    );
    return answered;
  } catch (error) {
    return {
      response: answered.response,
      error: `${answered.error}; counted, refund failed: ${describe(error)}`,
    };
  }
}

/** The 503 of a configuration that is incomplete or could not be used, and what the log line says of it. */
function unconfigured(outcome: ConfigOutcome, requestId: string): Settled {
  const refusal = apiError('configuration_error', 'The service is not fully configured.');
  const problem = outcome.ok ? 'incomplete' : outcome.problems.join('; ');
  return { response: errorResponse(refusal, requestId), error: `configuration: ${problem}` };
}

/** The 503 of a catalogue read that failed, and the failure for the log line. */
function originUnavailable(error: unknown, requestId: string): Settled & { error: string } {
  const refusal = apiError('origin_unavailable', 'The catalogue cannot be read right now.');
  return { response: errorResponse(refusal, requestId), error: describe(error) };
}

/** The request's one log line, from what its stages returned; its time is the request's. */
function logLine(
  context: RequestContext,
  handled: Handled,
  response: ProxyResponse,
  started: number,
): RequestLogLine {
  const { request } = context;
  const line: RequestLogLine = {
    time: isoTime(context.at),
    request_id: context.requestId,
    // A method the parser accepted is one of three; any other is logged only when it looks like one.
    method: context.parsed.ok || /^[A-Z]{1,16}$/.test(request.method) ? request.method : 'OTHER',
    route: context.parsed.route,
    status: response.status,
    latency_ms: latencySince(started),
    bytes: response.body?.byteLength ?? 0,
    key_id: handled.keyId,
  };
  // Added, not spread in: every line then has one shape, which JSON.stringify serialises fastest.
  if (handled.error) line.error = handled.error;
  return line;
}

function describe(error: unknown): string {
  if (error instanceof DependencyError) return `${error.dependency}: ${error.message}`;
  return errorText(error);
}

/** A failing logger must not turn an answer into a crash. */
function writeLog(deps: ProxyDependencies, line: RequestLogLine): void {
  try {
    deps.log(line);
  } catch {
    // Nothing sensible is left to do with a log line that cannot be written.
  }
}
