/**
 * What the manual states about the product and a test can check, checked against the product: which answers
 * carry the rate-limit headers (the real proxy core, as the reference page's examples are made), the free tier's
 * limits and `limit`'s default and maximum (the code's constants), and the fixture's size (its snapshot).
 * A failure names the page and the statement.
 */
import { describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../builder/snapshot/load.js';
import { type Ask, exchange, FIXTURE } from '../../docs/reference/exchanges.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../../proxy/request/plan.js';
import { FREE_TIER_LIMITS } from '../../tables/keys.js';
import { MANUAL_PAGES, ROOT, readPage } from '../helpers/manual.js';

const PAGES = [...MANUAL_PAGES, 'client/README.md'];
const RATE_LIMIT_HEADERS = [
  'x-ratelimit-limit-month',
  'x-ratelimit-remaining-month',
  'x-ratelimit-limit-minute',
  'x-ratelimit-remaining-minute',
  'x-ratelimit-reset',
];

/** A real answer of each status, from the proxy over the fixture. */
const ANSWERS: Record<string, Ask> = {
  '200': { method: 'GET', target: '/v1/tags' },
  '204': { method: 'OPTIONS', target: '/v1/tags' },
  '400': { method: 'GET', target: '/v1/tags?limit=0' },
  '401': { method: 'GET', target: '/v1/tags', credentials: 'none' },
  '404': { method: 'GET', target: '/v1/modules/999999' },
  '405': { method: 'POST', target: '/v1/tags' },
  '429': { method: 'GET', target: '/v1/tags', world: 'quota-spent' },
  '503': { method: 'GET', target: '/v1/tags', world: 'keys-down' },
};

async function carriesRateLimitHeaders(status: string): Promise<boolean> {
  if (status === '304') {
    const first = await exchange('statements 304 first', { method: 'GET', target: '/v1/tags' });
    const again = await exchange('statements 304', {
      method: 'GET',
      target: '/v1/tags',
      headers: { 'if-none-match': first.headers.etag ?? '' },
    });
    expect(again.status).toBe(304);
    return RATE_LIMIT_HEADERS.every((name) => name in again.headers);
  }
  const ask = ANSWERS[status];
  if (!ask) throw new Error(`no example answer of status ${status}: add one to ANSWERS`);
  const answer = await exchange(`statements ${status}`, ask);
  expect(answer.status, `${ask.method} ${ask.target}`).toBe(Number(status));
  const present = RATE_LIMIT_HEADERS.filter((name) => name in answer.headers);
  expect([0, RATE_LIMIT_HEADERS.length], `status ${status} carries some rate-limit headers`).toContain(
    present.length,
  );
  return present.length > 0;
}

/** The statuses a sentence of docs/api.md lists, e.g. `(200, 204, 304, 400, 404, 429)`. */
function statusesIn(text: string, pattern: RegExp): string[] {
  const match = pattern.exec(text);
  expect(match, `docs/api.md: ${pattern}`).not.toBeNull();
  return match![1]!.match(/\d{3}/g) ?? [];
}

describe('the rate-limit headers', () => {
  const api = readPage('docs/api.md');

  it('are on every answer docs/api.md says carries them (429 included), and on none it says carries none', async () => {
    const carrying = statusesIn(api, /Every answer to an authenticated request \(([^)]*)\) carries/);
    const without = statusesIn(api, /Answers that carry no rate-limit headers: ([^(]*)\(/);

    expect(carrying).toContain('429');
    for (const status of carrying) expect(await carriesRateLimitHeaders(status), status).toBe(true);
    for (const status of without) expect(await carriesRateLimitHeaders(status), status).toBe(false);
    expect([...carrying, ...without].sort()).toEqual([
      '200',
      '204',
      '304',
      '400',
      '401',
      '404',
      '405',
      '429',
      '503',
    ]);
  });
});

describe('limits', () => {
  it("the free tier's limits are the code's wherever the manual states them", () => {
    let found = 0;
    for (const file of PAGES) {
      const text = readPage(file).replace(/\s+/g, ' ');
      for (const sentence of text.match(/free[- ]tier[^.]*?\d[^.]*\./gi) ?? []) {
        const minute = /(\d[\d,]*) requests? (?:per|a) (?:calendar )?minute/.exec(sentence)?.[1];
        const month = /(\d[\d,]*)(?: requests?)? (?:per|a) (?:calendar )?month/.exec(sentence)?.[1];
        if (minute)
          expect(Number(minute.replaceAll(',', '')), `${file}: ${sentence}`).toBe(FREE_TIER_LIMITS.minute);
        if (month)
          expect(Number(month.replaceAll(',', '')), `${file}: ${sentence}`).toBe(FREE_TIER_LIMITS.month);
        if (minute || month) found++;
      }
    }
    expect(found, 'statements of the free tier').toBeGreaterThanOrEqual(2);
  });

  it("limit's default and maximum are the code's in docs/api.md", () => {
    expect(readPage('docs/api.md')).toContain(`integer 1–${MAX_LIMIT}, default ${DEFAULT_LIMIT}`);
  });
});

describe('the fixture', () => {
  it('has the size the manual says it has', async () => {
    const loaded = await loadSnapshot(FIXTURE);
    if (!loaded.ok) throw new Error('the fixture does not validate');
    const { modules, manufacturers, standards, tags } = loaded.snapshot;
    const pattern =
      /(\d+) modules(?: from|,) (\d+) manufacturers(?: on|,) (\d+) standards,? (?:and )?(\d+) tags/g;
    let found = 0;
    for (const file of PAGES) {
      for (const match of readPage(file).replace(/\s+/g, ' ').matchAll(pattern)) {
        found++;
        expect(match.slice(1).map(Number), `${file}: ${match[0]}`).toEqual([
          modules.length,
          manufacturers.length,
          standards.length,
          tags.length,
        ]);
      }
    }
    expect(found, `statements of the fixture's size (in ${ROOT})`).toBeGreaterThanOrEqual(2);
  });
});
