/**
 * The checks a consumer's requests make (docs/api.md): the edge's 401 and 405, a keyed 200 with its strong
 * ETag and its 304, the rate-limit headers on both, and the reference page at /docs.
 */
import {
  type Answer,
  CheckFailure,
  type CheckResult,
  described,
  errorCode,
  expectThat,
  type Fetcher,
  timed,
} from './checks.js';

/** The page the keyed checks read: the smallest, so the check costs two requests of the key's quota. */
const READ_PATH = '/modules?limit=1';
const ALLOW = 'GET, HEAD, OPTIONS';
/** How far the rate-limit window's start may be from this machine's clock (a skewed clock, a slow answer). */
const RESET_SLACK_SECONDS = 120;

export interface ApiTarget {
  /** The API's base URL, `https://<domain>/v1`, without a trailing slash. */
  api: string;
  /** The reference page, `https://<domain>/docs`. */
  docs: string;
  key: string;
}

/** The edge's 401: no Authorization header, answered with the proxy's envelope (and its WWW-Authenticate). */
function edge401(fetcher: Fetcher, target: ApiTarget): Promise<CheckResult> {
  return timed('edge 401', async () => {
    const answer = await fetcher(`${target.api}/modules`);
    const code = errorCode(answer);
    expectThat(answer.status === 401 && code === 'missing_authorization', () => {
      return `without a key: expected 401 missing_authorization, got ${described(answer)}`;
    });
    expectThat(/^Bearer\b/i.test(answer.headers.get('www-authenticate') ?? ''), () => {
      return '401 without WWW-Authenticate: Bearer';
    });
    return `401 ${code} without a key`;
  });
}

/** The edge's 405: a POST on any path, before the key is looked at, with its Allow header. */
function edge405(fetcher: Fetcher, target: ApiTarget): Promise<CheckResult> {
  return timed('edge 405', async () => {
    const answer = await fetcher(`${target.api}/modules`, { method: 'POST' });
    expectThat(answer.status === 405 && errorCode(answer) === 'method_not_allowed', () => {
      return `POST: expected 405 method_not_allowed, got ${described(answer)}`;
    });
    const allow = answer.headers.get('allow');
    expectThat(allow === ALLOW, () => `405 with Allow: ${allow ?? '(none)'}, expected ${ALLOW}`);
    return `405 method_not_allowed for POST, Allow: ${allow}`;
  });
}

/** The rate-limit headers of a keyed answer (docs/api.md, "Rate limits"), checked; what they say, or a failure. */
function rateLimits(answer: Answer, now: Date): string {
  const value = (name: string) => {
    const text = answer.headers.get(`x-ratelimit-${name}`);
    expectThat(text !== null && /^\d+$/.test(text), () => `${answer.status} without X-RateLimit-${name}`);
    return Number(text);
  };
  const windows = (['minute', 'month'] as const).map((window) => {
    const [limit, remaining] = [value(`limit-${window}`), value(`remaining-${window}`)];
    expectThat(
      remaining <= limit,
      () => `X-RateLimit-Remaining-${window} ${remaining} above its limit ${limit}`,
    );
    return `${remaining} of ${limit} left this ${window}`;
  });
  const reset = value('reset');
  const windowStart = Math.floor(now.getTime() / 60_000) * 60;
  expectThat(Math.abs(reset - windowStart) <= RESET_SLACK_SECONDS, () => {
    return `X-RateLimit-Reset ${reset} is not this minute's window (${windowStart}): a clock off?`;
  });
  return windows.join(', ');
}

/** A keyed 200 of the smallest page: JSON with `data`, a strong ETag. */
async function keyedRead(fetcher: Fetcher, target: ApiTarget): Promise<{ answer: Answer; etag: string }> {
  const answer = await fetcher(`${target.api}${READ_PATH}`, {
    headers: { authorization: `Bearer ${target.key}` },
  });
  expectThat(answer.status === 200, () => `GET ${READ_PATH} with the key: ${described(answer)}`);
  const etag = answer.headers.get('etag') ?? '';
  expectThat(/^"[^"]+"$/.test(etag), () => `200 with ETag ${etag || '(none)'}, expected a strong one`);
  let records: unknown;
  try {
    records = (JSON.parse(answer.body) as { data?: unknown }).data;
  } catch {
    throw new CheckFailure(`200 whose body is not JSON: ${JSON.stringify(answer.body.slice(0, 60))}`);
  }
  expectThat(Array.isArray(records), () => '200 without a data array');
  return { answer, etag };
}

/**
 * The keyed checks, in their order (each later one needs the 200): the 200 with its ETag, the 304 of
 * `If-None-Match` with it, the rate-limit headers on both.
 */
async function keyedChecks(fetcher: Fetcher, target: ApiTarget, now: () => Date): Promise<CheckResult[]> {
  let read: { answer: Answer; etag: string } | undefined;
  let revalidated: Answer | undefined;
  const needsRead = () => expectThat(read !== undefined, () => 'not checked: the 200 above failed');
  const first = await timed('200 with ETag', async () => {
    read = await keyedRead(fetcher, target);
    return `200 for GET ${READ_PATH}, ETag ${read.etag}`;
  });
  const second = await timed('304 revalidation', async () => {
    needsRead();
    const answer = await fetcher(`${target.api}${READ_PATH}`, {
      headers: { authorization: `Bearer ${target.key}`, 'if-none-match': read!.etag },
    });
    expectThat(
      answer.status === 304,
      () => `If-None-Match with its ETag: ${described(answer)}, expected 304`,
    );
    expectThat(answer.body === '', () => '304 with a body');
    revalidated = answer;
    return `304 for If-None-Match: ${read!.etag}`;
  });
  const third = await timed('rate-limit headers', async () => {
    needsRead();
    const onRead = rateLimits(read!.answer, now());
    if (revalidated) rateLimits(revalidated, now());
    return `${onRead}${revalidated ? ' (on the 200 and the 304)' : ''}`;
  });
  return [first, second, third];
}

/** The reference page: HTML, no key. */
function docsPage(fetcher: Fetcher, target: ApiTarget): Promise<CheckResult> {
  return timed('/docs', async () => {
    const answer = await fetcher(target.docs);
    const type = answer.headers.get('content-type') ?? '';
    expectThat(answer.status === 200 && type.startsWith('text/html'), () => {
      return `GET ${new URL(target.docs).pathname}: ${answer.status} ${type || '(no Content-Type)'}, expected 200 text/html`;
    });
    return `200 text/html, ${Math.round(Buffer.byteLength(answer.body) / 1024)} KB`;
  });
}

/**
 * Every API check against `target`, concurrently where they are independent.
 * @example const results = await apiChecks(deadlineFetch(Date.now() + 25_000), target, () => new Date());
 */
export async function apiChecks(
  fetcher: Fetcher,
  target: ApiTarget,
  now: () => Date,
): Promise<CheckResult[]> {
  const [unauthorized, notAllowed, keyed, docs] = await Promise.all([
    edge401(fetcher, target),
    edge405(fetcher, target),
    keyedChecks(fetcher, target, now),
    docsPage(fetcher, target),
  ]);
  return [unauthorized, notAllowed, ...keyed, docs];
}
