/**
 * The API checks against a deployment that answers wrongly, one fault at a time (a loopback server playing
 * the API): each fault fails the check that sees it, by name, with what was seen; a server that never
 * answers fails every check within the deadline.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiChecks } from '../../ops/api-checks.js';
import { type CheckResult, deadlineFetch } from '../../ops/checks.js';

const KEY = 'pk_live_AAAAAAAAAAAAAAAAAAAAAA';
const NOW = new Date('2026-11-27T12:00:30Z');
const ETAG = '"abc123"';

type Fault =
  | 'none'
  | 'post-403'
  | 'no-allow'
  | 'weak-etag'
  | 'no-304'
  | 'no-rate-limits'
  | 'docs-404'
  | 'silent';
let fault: Fault = 'none';

/** The API as docs/api.md describes it, but for the fault of the moment. */
function answer(request: IncomingMessage, response: ServerResponse): void {
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const refusal = (code: string) => ({ error: { code, message: code, request_id: 'req_x' } });
  if (fault === 'silent') return;
  const url = request.url ?? '';
  if (url === '/docs') {
    if (fault === 'docs-404') response.writeHead(404).end();
    else response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<html></html>');
    return;
  }
  if (request.method === 'POST') {
    if (fault === 'post-403') response.writeHead(403, { 'content-type': 'text/html' }).end('<h1>403</h1>');
    else
      json(405, refusal('method_not_allowed'), fault === 'no-allow' ? {} : { allow: 'GET, HEAD, OPTIONS' });
    return;
  }
  if (request.headers.authorization !== `Bearer ${KEY}`) {
    json(401, refusal('missing_authorization'), { 'www-authenticate': 'Bearer realm="catalogue"' });
    return;
  }
  const limits: Record<string, string> =
    fault === 'no-rate-limits'
      ? {}
      : {
          'x-ratelimit-limit-minute': '60',
          'x-ratelimit-remaining-minute': '58',
          'x-ratelimit-limit-month': '5000',
          'x-ratelimit-remaining-month': '4990',
          'x-ratelimit-reset': String(Math.floor(NOW.getTime() / 60_000) * 60),
        };
  const etag = fault === 'weak-etag' ? `W/${ETAG}` : ETAG;
  if (request.headers['if-none-match'] === ETAG && fault !== 'no-304') {
    response.writeHead(304, { etag, ...limits }).end();
    return;
  }
  json(200, { data: [{ id: 1 }], page: { next_cursor: null } }, { etag, ...limits });
}

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

async function check(with_: Fault, deadlineMs = 10_000): Promise<Record<string, CheckResult>> {
  fault = with_;
  const target = { api: `${base}/v1`, docs: `${base}/docs`, key: KEY };
  const results = await apiChecks(deadlineFetch(Date.now() + deadlineMs), target, () => NOW);
  return Object.fromEntries(results.map((result) => [result.name, result]));
}

const failed = (results: Record<string, CheckResult>) =>
  Object.values(results)
    .filter((result) => result.verdict === 'fail')
    .map((result) => `${result.name}: ${result.detail}`);

describe('the API checks', () => {
  it('pass against an API that answers as documented', async () => {
    const results = await check('none');

    expect(failed(results)).toEqual([]);
    expect(results['rate-limit headers']!.detail).toBe(
      '58 of 60 left this minute, 4990 of 5000 left this month (on the 200 and the 304)',
    );
  });

  it.each<[Fault, string[]]>([
    ['post-403', ['edge 405: POST: expected 405 method_not_allowed, got 403 "<h1>403</h1>"']],
    ['no-allow', ['edge 405: 405 with Allow: (none), expected GET, HEAD, OPTIONS']],
    [
      'weak-etag',
      [
        '200 with ETag: 200 with ETag W/"abc123", expected a strong one',
        '304 revalidation: not checked: the 200 above failed',
        'rate-limit headers: not checked: the 200 above failed',
      ],
    ],
    [
      'no-304',
      [
        '304 revalidation: If-None-Match with its ETag: 200 "{\\"data\\":[{\\"id\\":1}],\\"page\\":{\\"next_cursor\\":null}}", expected 304',
      ],
    ],
    ['no-rate-limits', ['rate-limit headers: 200 without X-RateLimit-limit-minute']],
    ['docs-404', ['/docs: GET /docs: 404 (no Content-Type), expected 200 text/html']],
  ])('name what is wrong: %s', async (with_, expected) => {
    expect(failed(await check(with_))).toEqual(expected);
  });

  it('fail every check within the deadline when nothing answers', async () => {
    const begun = performance.now();
    const results = await check('silent', 500);

    expect(performance.now() - begun).toBeLessThan(5_000);
    expect(results['edge 401']!.detail).toMatch(/^127\.0\.0\.1:\d+: no answer in time$/);
    expect(Object.values(results).every((result) => result.verdict === 'fail')).toBe(true);
  });
});
