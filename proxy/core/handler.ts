/**
 * The proxy core: `request + dependencies → response`. Steps, in the order docs/api.md#errors ranks their answers:
 * method (405) → Authorization header (401) → configuration (503) → key lookup (503/401) → the answer itself
 * (404 route, 400, 404 resource, 304, 200 in the negotiated content coding, 503 origin) → metering (503/429).
 *
 * The answer is worked out before metering, and only sent once the meter admits it: a request the origin
 * could not serve is not counted (docs/api.md#rate-limits: 503s do not count), while a 429 still outranks a 404 or a 400.
 *
 * Latency: the read and the metering write run one after the other. A warm container answers hot requests
 * from the byte cache without an object read, so they cost one DynamoDB round trip. Overlapping the two on a
 * cache miss would save about one S3 first byte minus nothing (~6 ms of ~22 ms with in-region latencies,
 * bench section 9), but a request metered before its read fails would then be counted unless a compensating
 * decrement succeeds — a second write, a double fault to alarm on, and spurious 429s at a window's edge while
 * the refund is pending. Not worth it while misses are rare.
 */
import { DependencyError, errorText } from '../../store/errors.js';
import { type KeyRecord, keyAccepted } from '../../tables/keys.js';
import { ByteCache } from '../cache/bytes.js';
import { cursorError } from '../catalogue/cursor.js';
import { Catalogue } from '../catalogue/reader.js';
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
  withoutBody,
  withRateLimitHeaders,
} from '../http/responses.js';
import { apiKeyHasher } from '../keys/hash.js';
import { isoTime } from '../log/time.js';
import type { MeterOutcome } from '../quota/interface.js';
import { parseAuthorization } from '../request/auth.js';
import { requestParser } from '../request/plan.js';
import type { RouteName } from '../request/routes.js';
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

/** What the log line needs to know about a request, filled in as it goes. */
interface Trace {
  route: RouteName;
  keyId: string | null;
  error: string | undefined;
}

/**
 * Build the request handler. It keeps the catalogue index in memory between requests.
 * @example
 * const handle = createHandler({ objects, keys, quota, config: loadConfig(), now: () => new Date(),
 *   requestId: newRequestId, log: (line) => console.log(JSON.stringify(line)) });
 * const response = await handle({ method: 'GET', path: '/v1/tags', query: '', headers: { authorization } });
 */
export function createHandler(deps: ProxyDependencies): ProxyHandler {
  const config = deps.config.ok ? deps.config.config : undefined;
  const timeoutMs = config?.dependencyTimeoutMs ?? FALLBACK_TIMEOUT_MS;
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

  const hashOf = apiKeyHasher();
  const parse = requestParser();

  async function respond(request: ProxyRequest, requestId: string, trace: Trace): Promise<ProxyResponse> {
    const parsed = parse(request.method, request.path, request.query);
    trace.route = parsed.route;
    if (!parsed.ok && parsed.error.code === 'method_not_allowed')
      return errorResponse(parsed.error, requestId);

    const authorization = parseAuthorization(request.headers.authorization);
    if (!authorization.ok) return errorResponse(authorization.error, requestId);
    if (!deps.config.ok || !catalogue) {
      trace.error = `configuration: ${deps.config.ok ? 'incomplete' : deps.config.problems.join('; ')}`;
      return errorResponse(
        apiError('configuration_error', 'The service is not fully configured.'),
        requestId,
      );
    }

    const keyHash = hashOf(authorization.key);
    // A warm container knows most keys already: no dependency call, no deadline to arm.
    const known = deps.keys.known?.(keyHash);
    let key: KeyRecord | undefined;
    if (known !== undefined) key = known ?? undefined;
    else {
      try {
        key = await callWithDeadline('keys', timeoutMs, (signal) => deps.keys.lookup(keyHash, { signal }));
      } catch (error) {
        trace.error = describe(error);
        return errorResponse(
          apiError('authentication_unavailable', 'Keys cannot be checked right now.'),
          requestId,
        );
      }
    }
    // A known key is logged by its id even when refused (revoked, expired): the operator sees who still tries.
    if (key) trace.keyId = key.keyId;
    if (!key || !keyAccepted(key, deps.now().getTime())) {
      return errorResponse(apiError('invalid_key', 'This API key is not accepted.'), requestId);
    }

    let answer: ProxyResponse;
    if (!parsed.ok) answer = errorResponse(parsed.error, requestId);
    else if (parsed.method === 'OPTIONS') {
      // OPTIONS reads nothing, but refuses a tampered cursor as GET and HEAD do.
      const cursor = cursorError(parsed.plan, deps.config.config.cursorSecret);
      answer = cursor ? errorResponse(cursor, requestId) : optionsResponse(requestId);
    } else {
      try {
        const accepted = acceptedCodings(request.headers['accept-encoding']);
        const reading = catalogue.read(
          parsed.plan,
          ifNoneMatchFor(request.headers['if-none-match'], accepted),
        );
        // A warm container's hot answer is there at once: no turn of the event loop spent waiting for it.
        const outcome = reading instanceof Promise ? await reading : reading;
        answer = outcome.ok
          ? codedResponse(outcome.body, outcome.etag, accepted, requestId)
          : outcome.reason === 'not-modified'
            ? notModifiedResponse(outcome.etag, requestId)
            : errorResponse(outcome.error, requestId);
        if (!outcome.ok && outcome.reason === 'refused' && outcome.error.code === 'configuration_error')
          trace.error = outcome.error.message;
      } catch (error) {
        trace.error = describe(error);
        return errorResponse(
          apiError('origin_unavailable', 'The catalogue cannot be read right now.'),
          requestId,
        );
      }
    }
    if (answer.status === 503) return answer;

    let meter: MeterOutcome;
    try {
      meter = await callWithDeadline('quota', meteringDeadlineMs(timeoutMs), (signal) =>
        deps.quota.meter(key, deps.now(), { signal }),
      );
    } catch (error) {
      trace.error = describe(error);
      return errorResponse(apiError('quota_unavailable', 'Quota cannot be checked right now.'), requestId);
    }
    if (!meter.ok) {
      const which = meter.reason === 'month' ? 'monthly' : 'per-minute';
      const refusal = errorResponse(
        apiError('rate_limit_exceeded', `The ${which} request quota of this key is used up.`),
        requestId,
      );
      withRateLimitHeaders(refusal, meter).headers['retry-after'] = String(meter.retryAfterSeconds);
      return refusal;
    }
    return withRateLimitHeaders(answer, meter);
  }

  /** The 200 in the coding the request prefers (HEAD too: its Content-Length is the coded length). */
  function codedResponse(
    body: Buffer,
    etag: string,
    accepted: AcceptedCodings,
    requestId: string,
  ): ProxyResponse {
    const coding = chooseCoding(accepted, body.byteLength);
    if (coding === 'identity') return okResponse(body, etag, requestId);
    return okResponse(encodeBody(body, etag, coding, byteCache), codedEtag(etag, coding), requestId, coding);
  }

  return async (request) => {
    const started = request.receivedAt ?? performance.now();
    const requestId = deps.requestId();
    const trace: Trace = { route: 'unknown', keyId: null, error: undefined };
    let response: ProxyResponse;
    try {
      response = await respond(request, requestId, trace);
    } catch (error) {
      // Only a bug gets here; answer within the documented codes and say what happened in the log.
      trace.error = `unexpected: ${describe(error)}`;
      response = errorResponse(
        apiError('origin_unavailable', 'The catalogue cannot be read right now.'),
        requestId,
      );
    }
    if (request.method === 'HEAD') response = withoutBody(response);
    const line: RequestLogLine = {
      time: isoTime(deps.now()),
      request_id: requestId,
      method: /^[A-Z]{1,16}$/.test(request.method) ? request.method : 'OTHER',
      route: trace.route,
      status: response.status,
      latency_ms: Math.round((performance.now() - started) * 10) / 10,
      bytes: response.body?.byteLength ?? 0,
      key_id: trace.keyId,
    };
    // Added, not spread in: every line then has one shape, which JSON.stringify serialises fastest.
    if (trace.error) line.error = trace.error;
    writeLog(deps, line);
    return response;
  };
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
