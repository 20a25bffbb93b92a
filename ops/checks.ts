/**
 * The smoke checks of a deployment, from outside: what a consumer meets at the edge (the 401 of a request
 * without a key, the 405 of another method), a keyed read (a 200 with a strong ETag, its 304, the rate-limit
 * headers), the reference page at /docs, the admin API signed with the caller's credentials, and the live
 * catalogue version with its age. Each check is one named step with its own outcome, so a failure names what
 * failed; none sends or prints the key.
 */
import { errorMessage } from '../store/errors.js';

/** What a check found: passed, failed, or not run (what it needs was not given). */
export type Verdict = 'pass' | 'fail' | 'skip';

export interface CheckResult {
  name: string;
  verdict: Verdict;
  /** One line: what was seen, or what was wrong. */
  detail: string;
  ms: number;
}

/** An answer as a check reads it. */
export interface Answer {
  status: number;
  headers: Headers;
  body: string;
}

/** One request within the run's deadline; rejects with a one-line reason (refused, timed out…). */
export type Fetcher = (
  url: string,
  init?: { method?: string; headers?: Record<string, string> },
) => Promise<Answer>;

/** The checks' names, in the order they are shown: what a CI step reads from `--json`. */
export const CHECK_NAMES = [
  'edge 401',
  'edge 405',
  '200 with ETag',
  '304 revalidation',
  'rate-limit headers',
  '/docs',
  'admin API',
  'live version',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/** A failure a check reports as its detail (every other error is one too, by its message). */
export class CheckFailure extends Error {
  override name = 'CheckFailure';
}

/** The reason a request got no answer, for humans: refused, timed out, else the code or message. */
export function noAnswer(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  const { name } = error as Error;
  if (name === 'TimeoutError' || name === 'AbortError') return 'no answer in time';
  const code = cause?.code ?? (error as { code?: unknown }).code ?? name;
  if (code === 'ECONNREFUSED') return 'connection refused (is it running?)';
  return cause?.code ? `${cause.code}: ${errorMessage(error)}` : errorMessage(error);
}

/**
 * `work`, or a {@link CheckFailure} "no answer in time" once `deadline` (epoch ms) has passed; `onLate` runs
 * then (to release what the work holds).
 * @example await withinDeadline(listVersions(store, prefix), deadline, () => target.close())
 */
export async function withinDeadline<T>(work: Promise<T>, deadline: number, onLate: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        onLate();
        reject(new CheckFailure('no answer in time'));
      },
      Math.max(1, deadline - Date.now()),
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `fetch` with a deadline: the answer with its body as text; a redirect is an answer, not followed.
 * @example const answer = await deadlineFetch(Date.now() + 25_000)('https://api.example.com/docs');
 */
export function deadlineFetch(deadline: number): Fetcher {
  return async (url, init = {}) => {
    const signal = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
    try {
      const response = await fetch(url, { ...init, redirect: 'manual', signal });
      return { status: response.status, headers: response.headers, body: await response.text() };
    } catch (error) {
      throw new CheckFailure(`${new URL(url).host}: ${noAnswer(error)}`);
    }
  };
}

/** The error envelope's code of an answer, if it has one. */
export function errorCode(answer: Answer): string | undefined {
  try {
    return (JSON.parse(answer.body) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

/** Throw a {@link CheckFailure} with `detail` unless `ok`. */
export function expectThat(ok: boolean, detail: () => string): void {
  if (!ok) throw new CheckFailure(detail());
}

/** What an unexpected answer was: its status and error code, or its first characters. */
export function described(answer: Answer): string {
  const code = errorCode(answer);
  return `${answer.status}${code ? ` ${code}` : answer.body ? ` ${JSON.stringify(answer.body.slice(0, 60))}` : ''}`;
}

/** Run `check` timed: its detail on success, the error's message on failure. */
export async function timed(
  name: CheckName,
  check: () => Promise<string | { skip: string }>,
): Promise<CheckResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  try {
    const outcome = await check();
    return typeof outcome === 'string'
      ? { name, verdict: 'pass', detail: outcome, ms: ms() }
      : { name, verdict: 'skip', detail: outcome.skip, ms: ms() };
  } catch (error) {
    return { name, verdict: 'fail', detail: errorMessage(error), ms: ms() };
  }
}
