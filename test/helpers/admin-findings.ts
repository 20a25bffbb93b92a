/**
 * Issue 36's findings against key administration, as one suite run against each way the admin API is served:
 * `npm start`'s node:http server (test/local/admin.test.ts) and the Lambda function's handler with function
 * URL events (test/admin/lambda.test.ts). A harness sends a call, shows the audit lines, holds DynamoDB
 * requests (a fault proxy in front of dynalite) and, where it can, moves the admin core's clock.
 *
 * - no key in any answer or log line: a key, or a near miss, in a path, a query, an owner, a label, a field's
 *   name; refused with 400 before it is logged or echoed, the audit line saying where it was redacted;
 * - malformed percent-escapes, a malformed or repeated Host: answered in the envelope, with an audit line;
 * - bodies it cannot use (nested 4,000 levels under the size limit, a field written twice): 400, never 500;
 * - messages that say what is wrong: a raw `+` in a query's owner (a space there), a date alone where a time
 *   with its zone is due, an Idempotency-Key sent twice;
 * - dates that name no day of the calendar, labels and owners with characters that do not print: refused;
 * - the cap races: an enable whose key write is held while an issue takes the place (within the window, and
 *   held past it, when the clock can move); a roll at the cap, then its old key's expiry lifted; ten rolls of
 *   one key at once (issue 47: the refused ones left revoked ghost keys in the listing);
 * - DynamoDB's faults as before the lean client: throttling and cut answers answered 503 with Retry-After.
 * Every answer is checked against admin/openapi.json.
 */
import { describe, expect, it } from 'vitest';
import type { AuditLine } from '../../admin/http/handler.js';
import { IN_FLIGHT_MS } from '../../admin/ledger.js';
import type { FaultProxy } from './fault-proxy.js';
import { adminResponseValidator } from './openapi.js';

export interface AdminAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: a test's view of a checked JSON body
  json: any;
}

export interface CallOptions {
  /** JSON body (sent as application/json). */
  body?: unknown;
  /** A body as it is, application/json. */
  raw?: string;
  headers?: Record<string, string>;
}

export interface FindingsHarness {
  /** `method /v1{target}` (target: path and query as sent), signed as an allowed caller. */
  call(method: string, target: string, options?: CallOptions): Promise<AdminAnswer>;
  /** Every audit line so far. */
  audit: AuditLine[];
  /** In front of the harness's dynalite. */
  faults: FaultProxy;
  /** The cap the harness was started with. */
  cap: number;
  /** Moves the admin core's clock, where the harness can (the Lambda handler reads the real one). */
  advance?: (ms: number) => void;
}

/** A key as issued, and what is left of it that must never be seen again. */
export const KEY = 'pk_live_AbCdEfGhIjKlMnOpQrStUv';
const SECRET = 'bcdefghijklmnopqrstu';

/** A key and its near misses: case, separators, one character short or long, percent-encoded. */
export const KEY_SHAPES: [string, string][] = [
  ['a key', KEY],
  ['a key in capitals', KEY.toUpperCase()],
  ['a key with dashes', 'pk-live-AbCdEfGhIjKlMnOpQrStUv'],
  ['a key one character short', KEY.slice(0, -1)],
  ['a key one character long', `${KEY}W`],
  ['a percent-encoded key', 'pk%5Flive%5FAbCdEfGhIjKlMnOpQrStUv'],
];

const openapi = adminResponseValidator();
let owners = 0;
const owner = () => `findings-${process.pid}-${++owners}`;

/** The answer has no trace of the key, nor has any audit line; `redacted` names where it was found. */
function expectNoKey(harness: FindingsHarness, answer: AdminAnswer, redacted: string) {
  expect(answer.status).toBe(400);
  expect(answer.json.error.code).toBe('invalid_request');
  expect(answer.body.toLowerCase()).not.toContain(SECRET);
  expect(JSON.stringify(harness.audit).toLowerCase()).not.toContain(SECRET);
  const line = harness.audit.find((l) => l.request_id === answer.json.error.request_id);
  expect(line).toMatchObject({ status: 400, redacted: [redacted] });
}

/** A key's state as the listing shows it: usable (active, not expired), and whether it was rolled away. */
async function usableKeys(harness: FindingsHarness, who: string) {
  const listed = await harness.call('GET', `/keys?owner=${encodeURIComponent(who)}`);
  expect(listed.status).toBe(200);
  const keys = listed.json.data as {
    key_id: string;
    status: string;
    expired: boolean;
    rolled_to: string | null;
  }[];
  const usable = keys.filter((key) => key.status === 'active' && !key.expired);
  return { usable, counted: usable.filter((key) => key.rolled_to === null) };
}

/** The request the fault proxy holds (or held), once there is one; fails after 10 s. */
async function held(faults: FaultProxy): Promise<FaultProxy['seen'][number]> {
  const holding = () => faults.seen.find((seen) => seen.action === 'until');
  await expect.poll(holding, { timeout: 10_000 }).toBeDefined();
  return holding()!;
}

/** Holds the next UpdateItem that makes a key active, until `release` is called. */
function holdActivation(faults: FaultProxy): () => void {
  let release = () => {};
  const until = new Promise<void>((resolve) => {
    release = resolve;
  });
  faults.seen.splice(0);
  faults.setRule(({ headers, body }) =>
    String(headers['x-amz-target']).endsWith('.UpdateItem') && body.toString().includes('"S":"active"')
      ? { until }
      : undefined,
  );
  return () => {
    faults.setRule(undefined);
    release();
  };
}

/**
 * An owner at the cap but for one revoked key whose ledger entry was dropped (an issue took its place, then
 * was revoked): enabling it adds its entry again. Returns the owner and the revoked key's id.
 */
async function ownerWithDroppedEntry(harness: FindingsHarness): Promise<{ who: string; dropped: string }> {
  const who = owner();
  const issue = async () => {
    const answer = await harness.call('POST', '/keys', { body: { owner: who, tier: 'free' } });
    expect(answer.status).toBe(201);
    return answer.json.data.key_id as string;
  };
  const ids = [];
  for (let i = 0; i < harness.cap; i++) ids.push(await issue());
  const dropped = ids[0]!;
  expect((await harness.call('POST', `/keys/${dropped}/revoke`)).status).toBe(200);
  const taker = await issue(); // at the cap: the revoked key's entry is dropped for it
  expect((await harness.call('POST', `/keys/${taker}/revoke`)).status).toBe(200);
  return { who, dropped };
}

/**
 * The findings' suite for one way the API is served; `options.clock`: the harness moves the admin core's
 * clock (`advance`), so a call held past the ledger's window can be played.
 */
export function describeAdminFindings(
  name: string,
  harness: () => FindingsHarness,
  options: { clock: boolean },
): void {
  const call = async (method: string, target: string, options?: CallOptions) => {
    const answer = await harness().call(method, target, options);
    openapi.assert({ method, path: `/v1${target.split('?')[0]}`, ...answer });
    return answer;
  };

  describe(`${name}: no key in any answer or log line`, () => {
    it.each(KEY_SHAPES)('refuses %s in a path, on every route and method, before routing', async (_, key) => {
      for (const [method, target] of [
        ['GET', `/keys/${key}`],
        ['POST', `/keys/${key}/revoke`],
        ['GET', `/keys/${key}/usage`],
        ['DELETE', `/keys/${key}`],
        ['GET', `/${key}`],
      ] as const) {
        expectNoKey(harness(), await call(method, target), 'path');
      }
    });

    it.each(KEY_SHAPES)('refuses %s as an owner in a query, and as a query parameter', async (_, key) => {
      expectNoKey(harness(), await call('GET', `/keys?owner=${key}`), 'query');
      expectNoKey(harness(), await call('GET', `/keys?${key}=1`), 'query');
    });

    it.each(KEY_SHAPES.filter(([, key]) => !key.includes('%')))(
      'refuses %s as an owner, a label or a field name in a body',
      async (_, key) => {
        expectNoKey(harness(), await call('POST', '/keys', { body: { owner: key, tier: 'free' } }), 'body');
        expectNoKey(
          harness(),
          await call('POST', '/keys', { body: { owner: 'u1', tier: 'free', label: `mine: ${key}` } }),
          'body',
        );
        expectNoKey(
          harness(),
          await call('POST', '/keys', { body: { owner: 'u1', tier: 'free', [key]: 1 } }),
          'body',
        );
      },
    );

    it('refuses a key written with JSON escapes', async () => {
      const raw = `{"owner":"u1","tier":"free","label":"\\u0070k_live_AbCdEfGhIjKlMnOpQrStUv"}`;
      expectNoKey(harness(), await call('POST', '/keys', { raw }), 'body');
    });
  });

  describe(`${name}: malformed requests answered in the envelope, with an audit line`, () => {
    it.each([
      ['a malformed escape in the query', '/keys?owner=%zz', 'query'],
      ['a cut escape in the path', '/keys/%E0%A4%A', 'path'],
      ['an escape of invalid UTF-8 in the query', '/keys?owner=%C3%28', 'query'],
    ])('%s', async (_, target, field) => {
      const answer = await call('GET', target);
      expect(answer.status).toBe(400);
      expect(answer.json.error.details).toEqual([{ field, problem: 'holds a malformed percent-escape' }]);
      expect(harness().audit.find((l) => l.request_id === answer.json.error.request_id)).toMatchObject({
        status: 400,
        outcome: 'invalid_request',
      });
    });
  });

  describe(`${name}: every body it cannot use answered 400 (issue 47)`, () => {
    it.each([
      [
        'nested 4,000 levels (8 KB, under the size limit)',
        `${'['.repeat(4_000)}${']'.repeat(4_000)}`,
        'deeper than',
      ],
      ['with a field written twice', '{"owner":"a","tier":"free","owner":"b"}', 'written twice'],
      ['that is not JSON', '{"owner":', 'not valid JSON'],
    ])('a body %s', async (_, raw, says) => {
      for (const target of ['/keys', '/keys/key_AAAAAAAAAA/roll', '/keys/key_AAAAAAAAAA/revoke']) {
        const answer = await call('POST', target, { raw });
        expect([answer.status, answer.json.error.code]).toEqual([400, 'invalid_request']);
        expect(answer.json.error.details[0].problem).toContain(says);
      }
    });
  });

  describe(`${name}: messages that say what is wrong and how to fix it (issue 47)`, () => {
    it('a raw + in the owner of a query: a space there, so written %2B', async () => {
      const who = `${owner()}+team`;
      const issued = await call('POST', '/keys', { body: { owner: who, tier: 'free' } });
      const raw = await call('GET', `/keys?owner=${who}`);
      const encoded = await call('GET', `/keys?owner=${encodeURIComponent(who)}`);

      expect(issued.status).toBe(201);
      expect(raw.status).toBe(400);
      expect(raw.json.error.details).toEqual([
        {
          field: '?owner',
          problem: expect.stringContaining('a + stands for a space, so write a plus sign in an owner as %2B'),
        },
      ]);
      expect(encoded.status).toBe(200);
      expect(encoded.json.data.map((key: { owner: string }) => key.owner)).toEqual([who]);
    });

    it.each([
      ['POST', '/keys', 'expires', (date: string) => ({ owner: 'u1', tier: 'free', expires: date })],
      ['POST', '/keys/key_AAAAAAAAAA/roll', 'old_key_expires', (date: string) => ({ old_key_expires: date })],
      ['POST', '/keys/key_AAAAAAAAAA/expiry', 'expires', (date: string) => ({ expires: date })],
    ] as const)(
      '%s %s: a date alone in %s is refused, with how to write it',
      async (method, target, field, body) => {
        const date = `${new Date().getUTCFullYear() + 1}-01-15`;
        const answer = await call(method, target, { body: body(date) });
        expect(answer.status).toBe(400);
        expect(answer.json.error.details).toEqual([
          {
            field,
            problem: `must be a time with its zone, not a date alone: for midnight UTC write ${date}T00:00:00Z (or give your zone: ${date}T00:00:00+01:00)`,
          },
        ]);
      },
    );

    it.each([
      ['as Node joins a header sent twice', 'k-1, k-2'],
      ['as a function URL joins it', 'k-1,k-2'],
    ])('an Idempotency-Key sent twice (%s): must be sent once', async (_, value) => {
      const answer = await call('POST', '/keys', {
        body: { owner: 'u1', tier: 'free' },
        headers: { 'Idempotency-Key': value },
      });
      expect(answer.status).toBe(400);
      expect(answer.json.error.details).toEqual([
        { field: 'Idempotency-Key', problem: expect.stringMatching(/^must be sent once/) },
      ]);
    });
  });

  describe(`${name}: dates of the calendar, printable labels and owners`, () => {
    it.each([
      ['2027-02-30'],
      ['2027-02-29T00:00:00Z'],
      ['2026-04-31'],
      ['2027-01-01T24:00:00Z'],
      ['2027-01-01T23:60:00Z'],
      ['2027-01-01T23:59:60Z'],
      ['2027-01-01T12:00:00+24:00'],
      ['2027-13-01'],
    ])('refuses the expiry %s, which names no instant of the calendar', async (expires) => {
      const answer = await call('POST', '/keys', { body: { owner: 'u1', tier: 'free', expires } });
      expect(answer.status).toBe(400);
      expect(answer.json.error.details.map((d: { field: string }) => d.field)).toEqual(['expires']);
    });

    it('takes a leap day, and refuses a roll to a day that does not exist', async () => {
      const issued = await call('POST', '/keys', {
        body: { owner: owner(), tier: 'free', expires: '2028-02-29T00:00:00Z' },
      });
      expect(issued.status).toBe(201);
      expect(issued.json.data.expires).toBe('2028-02-29T00:00:00.000Z');
      const year = new Date().getUTCFullYear() + 1;
      const rolled = await call('POST', `/keys/${issued.json.data.key_id}/roll`, {
        body: { old_key_expires: `${year}-02-30T00:00:00Z` },
      });
      expect(rolled.status).toBe(400);
      expect(rolled.json.error.details[0].field).toBe('old_key_expires');
    });

    it.each([
      ['a zero-width space', 'Acme\u200bapp'],
      ['a right-to-left override', 'Acme \u202eppa'],
      ['a byte-order mark', '\ufeffAcme'],
      ['a line separator', 'Acme\u2028app'],
      ['a control character', 'Acme\u0007'],
      ['only Hangul fillers', '\u3164\u3164'],
      ['a Hangul choseong filler', '\u115f'],
      ['a braille blank', '\u2800'],
      ['99 combining marks', '\u0301'.repeat(99)],
      ['a letter under 99 combining marks', `a${'\u0301'.repeat(99)}`],
    ])('refuses a label with %s, and an owner with it', async (_, text) => {
      const label = await call('POST', '/keys', { body: { owner: 'u1', tier: 'free', label: text } });
      const who = await call('POST', '/keys', { body: { owner: `u1${text}`, tier: 'free' } });
      expect([label.status, label.json.error.details[0].field]).toEqual([400, 'label']);
      expect([who.status, who.json.error.details[0].field]).toEqual([400, 'owner']);
    });

    it('refuses a label with a lone surrogate', async () => {
      const answer = await call('POST', '/keys', {
        raw: '{"owner":"u1","tier":"free","label":"Acme \\ud800"}',
      });
      expect([answer.status, answer.json.error.details[0].field]).toEqual([400, 'label']);
    });
  });

  describe(`${name}: DynamoDB's faults answered 503 with Retry-After`, () => {
    it.each([
      [
        'throttles every call',
        () => ({ status: 400, body: '{"__type":"x#ProvisionedThroughputExceededException"}' }),
      ],
      ['cuts every answer short', () => 'truncate' as const],
      ['answers every call with garbage', () => 'garbage' as const],
    ])('when DynamoDB %s', async (_, rule) => {
      const h = harness();
      h.faults.setRule(rule);
      try {
        const answer = await call('GET', '/keys?owner=u1');
        expect(answer.status).toBe(503);
        expect(answer.json.error.code).toBe('service_unavailable');
        expect(answer.headers['retry-after']).toBe('1');
      } finally {
        h.faults.setRule(undefined);
      }
      expect((await call('GET', '/keys?owner=u1')).status).toBe(200);
    });
  });

  describe(`${name}: the owner's cap under races`, () => {
    it('an enable whose key write is held while an issue takes the last place: one of them gets it', async () => {
      const h = harness();
      const { who, dropped } = await ownerWithDroppedEntry(h);
      const release = holdActivation(h.faults);
      const enabling = call('POST', `/keys/${dropped}/enable`);
      await held(h.faults);
      const issued = await call('POST', '/keys', { body: { owner: who, tier: 'free' } });
      release();
      const enabled = await enabling;

      expect([enabled.status, issued.status].sort()).toEqual([200, 409]);
      expect((await usableKeys(h, who)).counted.length).toBeLessThanOrEqual(h.cap);
    });

    it('a roll at the cap holds the old key until it expires: lifting that expiry is refused', async () => {
      const h = harness();
      const who = owner();
      const ids: string[] = [];
      for (let i = 0; i < h.cap; i++) {
        ids.push((await call('POST', '/keys', { body: { owner: who, tier: 'free' } })).json.data.key_id);
      }
      const rolled = await call('POST', `/keys/${ids[0]}/roll`);
      const lifted = await call('POST', `/keys/${ids[0]}/expiry`, { body: { expires: null } });
      const later = await call('POST', `/keys/${ids[0]}/expiry`, {
        body: { expires: new Date(Date.now() + 400 * 86_400_000).toISOString() },
      });
      const sooner = await call('POST', `/keys/${ids[0]}/expiry`, {
        body: { expires: new Date(Date.now() + 3_600_000).toISOString() },
      });

      expect(rolled.status).toBe(201);
      expect([lifted.status, lifted.json.error?.code]).toEqual([409, 'key_already_rolled']);
      expect([later.status, later.json.error?.code]).toEqual([409, 'key_already_rolled']);
      expect(sooner.status).toBe(200);
      const { usable, counted } = await usableKeys(h, who);
      expect(counted).toHaveLength(h.cap);
      expect(usable).toHaveLength(h.cap + 1);
    });

    /** A roll sent again with its Idempotency-Key after each 503 (a loaded machine misses the deadline). */
    const rollUntilDecided = async (keyId: string, idempotencyKey: string) => {
      for (let attempt = 1; ; attempt++) {
        const answer = await call('POST', `/keys/${keyId}/roll`, {
          headers: { 'Idempotency-Key': idempotencyKey },
        });
        if (answer.status !== 503 || attempt === 5) return answer;
        await new Promise((resolve) => setTimeout(resolve, Number(answer.headers['retry-after']) * 1000));
      }
    };

    it('ten rolls of one key at once, three rounds: one 201, nine 409, and the listing holds the old key and one successor', async () => {
      const h = harness();
      const who = owner();
      let current = (await call('POST', '/keys', { body: { owner: who, tier: 'free' } })).json.data.key_id;
      for (let round = 0; round < 3; round++) {
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) => rollUntilDecided(current, `${who}-${round}-${i}`)),
        );
        const listed = await h.call('GET', `/keys?owner=${encodeURIComponent(who)}`);
        const keys = listed.json.data as { key_id: string; rolled_from: string | null; status: string }[];

        expect(answers.map((answer) => answer.status).sort()).toEqual([201, ...Array(9).fill(409)]);
        expect(answers.filter((a) => a.status === 409).map((a) => a.json.error.code)).toEqual(
          Array(9).fill('key_already_rolled'),
        );
        const successor = answers.find((answer) => answer.status === 201)!.json.data.key_id;
        expect(keys.filter((key) => key.rolled_from === current).map((key) => key.key_id)).toEqual([
          successor,
        ]);
        expect(keys).toHaveLength(round + 2);
        // The old key goes before the next round, so the owner's cap (2 here) has room for the next roll.
        expect((await call('POST', `/keys/${current}/revoke`)).status).toBe(200);
        current = successor;
      }
    }, 120_000);

    // Only where the clock moves: the Lambda handler reads the real one (its deadline is proven the same way).
    if (options.clock) {
      it('a held enable past the ledger window: answered by its deadline, and its late write changes nothing', async () => {
        const h = harness();
        const { who, dropped } = await ownerWithDroppedEntry(h);
        const release = holdActivation(h.faults);
        const enabling = call('POST', `/keys/${dropped}/enable`);
        const write = await held(h.faults);
        h.advance!(IN_FLIGHT_MS + 1_000);
        const issued = await call('POST', '/keys', { body: { owner: who, tier: 'free' } });
        const enabled = await Promise.race([
          enabling,
          new Promise<undefined>((r) => setTimeout(() => r(undefined), 15_000)),
        ]);
        release(); // the held write reaches DynamoDB now, long after its call gave up on it
        await enabling;
        // The held write is answered by DynamoDB (its condition refused it: 400) before the listing reads.
        await expect.poll(() => write.status, { timeout: 10_000 }).toBe(400);

        expect(issued.status).toBe(201);
        expect(enabled?.status).toBe(503);
        expect(enabled?.headers['retry-after']).toBe('1');
        const { counted } = await usableKeys(h, who);
        expect(counted).toHaveLength(h.cap);
        expect(counted.map((key) => key.key_id)).not.toContain(dropped);
      });
    }
  });
}
