/**
 * The admin API's body handling, fuzzed (issue 47: a 4,000-level body under the size limit was answered 500
 * "may be retried"): any bytes up to the limit, on every route that takes a body, against dynalite, are
 * answered 2xx or 4xx in the envelope the OpenAPI document describes — never 5xx, never a fault in the audit
 * line. Bodies drawn: raw bytes, JSON values of any shape, bodies of the right fields with values of any
 * type, nesting of any depth (closed, cut, mixed), valid bodies with a byte changed, members written twice,
 * text in other encodings; and bodies just over the limit (413).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdminContext } from '../../../admin/actions.js';
import { AdminTables } from '../../../admin/dynamo.js';
import { type AuditLine, createAdminHandler } from '../../../admin/http/handler.js';
import { adminSettings } from '../../../admin/settings.js';
import { BOUNDS } from '../../../admin/validate.js';
import { type DynamoFixture, dynamoFixture } from '../../helpers/dynamo.js';
import { adminResponseValidator } from '../../helpers/openapi.js';

let db: DynamoFixture;
let handle: ReturnType<typeof createAdminHandler>;
const audit: AuditLine[] = [];
const openapi = adminResponseValidator();
const principal = { arn: 'arn:aws:iam::123456789012:role/app', accountId: '123456789012' };
/** A partner key to roll, limit, expire, revoke and enable (issued before the runs). */
let keyId: string;

beforeAll(async () => {
  db = await dynamoFixture();
  const context: AdminContext = {
    tables: new AdminTables(db),
    settings: adminSettings({ KEYS_TABLE: db.keysTable, COUNTERS_TABLE: db.countersTable }),
    now: () => new Date(),
  };
  handle = createAdminHandler({ context, log: (line) => audit.push(line) });
  const issued = await send('/v1/keys', Buffer.from('{"owner":"fuzz","tier":"partner"}'));
  expect(issued.status).toBe(201);
  keyId = JSON.parse(issued.body).data.key_id;
});
afterAll(async () => {
  await db?.dispose();
});

function send(path: string, body: Buffer, contentType = 'application/json') {
  return handle({
    method: 'POST',
    path,
    query: '',
    headers: { 'content-type': contentType, host: 'localhost' },
    body,
    principal,
  });
}

const ROUTES = ['/v1/keys', 'roll', 'limits', 'expiry', 'revoke', 'enable'] as const;
const FIELDS = ['owner', 'tier', 'label', 'limits', 'expires', 'old_key_expires', 'minute', 'month'];
const text = (value: string) => Buffer.from(value, 'utf8');

/** Objects and arrays nested `depth` deep around `inner`, closed or cut. */
const nested = fc
  .record({
    depth: fc.integer({ min: 1, max: 6_000 }),
    kinds: fc.array(fc.constantFrom('[', '{"a":', '{"limits":'), { minLength: 1, maxLength: 3 }),
    inner: fc.constantFrom('1', '"x"', '{}', '[]', ''),
    closed: fc.boolean(),
  })
  .map(({ depth, kinds, inner, closed }) => {
    const opens = Array.from({ length: depth }, (_, i) => kinds[i % kinds.length]!);
    const closes = opens.map((open) => (open === '[' ? ']' : '}')).reverse();
    return text(`${opens.join('')}${inner}${closed ? closes.join('') : ''}`);
  });

/** A body of the API's fields, each with a value of any JSON type, a plausible one, or a number no double holds. */
const fielded = fc
  .dictionary(
    fc.constantFrom(...FIELDS),
    fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      fc.constantFrom(
        'free',
        'partner',
        '2031-01-01',
        '2031-01-01T00:00:00Z',
        '#1e309',
        '#-0',
        '#9007199254740993',
      ),
      fc.record({ minute: fc.jsonValue(), month: fc.jsonValue() }),
    ),
  )
  .map((value) => text(JSON.stringify(value).replace(/"#([-0-9e]+)"/g, '$1'))); // numbers as written

/** A valid body with one byte changed, added or taken out. */
const mutated = fc
  .record({
    body: fc.constantFrom(
      '{"owner":"fuzz","tier":"free","label":"App","limits":{"minute":5,"month":9}}',
      '{"old_key_expires":"2031-01-01T00:00:00Z"}',
      '{"minute":100,"month":1000}',
      '{"expires":null}',
    ),
    at: fc.nat(),
    byte: fc.integer({ min: 0, max: 255 }),
    how: fc.constantFrom('replace', 'insert', 'delete'),
  })
  .map(({ body, at, byte, how }) => {
    const bytes = [...text(body)];
    const i = at % bytes.length;
    if (how === 'replace') bytes[i] = byte;
    else if (how === 'insert') bytes.splice(i, 0, byte);
    else bytes.splice(i, 1);
    return Buffer.from(bytes);
  });

const bodyArb: fc.Arbitrary<Buffer> = fc.oneof(
  fc.uint8Array({ maxLength: 4_096 }).map((bytes) => Buffer.from(bytes)),
  fc.jsonValue({ maxDepth: 6 }).map((value) => text(JSON.stringify(value))),
  fc.string({ unit: 'binary', maxLength: 512 }).map(text),
  nested,
  fielded,
  mutated,
  fc
    .tuple(fc.constantFrom(...FIELDS), fc.jsonValue(), fc.jsonValue())
    .map(([name, a, b]) => text(`{"${name}":${JSON.stringify(a)},"${name}":${JSON.stringify(b)}}`)),
  fc
    .constantFrom('utf16le', 'latin1', 'ucs2')
    .map((encoding) => Buffer.from('{"owner":"Zoë","tier":"free"}', encoding as BufferEncoding)),
);

describe('the admin API answers any body up to the limit with 2xx or 4xx in the envelope, never 5xx', () => {
  it('fuzzed over every route that takes a body', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        bodyArb,
        fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain'),
        async (route, body, contentType) => {
          runs++;
          const path = route === '/v1/keys' ? route : `/v1/keys/${keyId}/${route}`;
          const clipped = body.subarray(0, BOUNDS.bodyBytes);
          const answer = await send(path, clipped, contentType);
          const json = JSON.parse(answer.body);
          const line = audit.find((l) => l.request_id === answer.headers['x-request-id']);

          expect(answer.status, `${answer.status} ${answer.body}`).toBeLessThan(500);
          expect(line?.status).toBe(answer.status);
          expect(line && 'error' in line).toBe(false);
          if (answer.status >= 400) expect(json.error.request_id).toBe(answer.headers['x-request-id']);
          openapi.assert({ method: 'POST', path, ...answer });
        },
      ),
      { numRuns: Number(process.env.BODY_FUZZ_RUNS ?? 400) },
    );
    expect(runs).toBeGreaterThanOrEqual(Number(process.env.BODY_FUZZ_RUNS ?? 400));
  }, 300_000);

  it.each([
    ['nested 4,000 levels (8 KB)', `${'['.repeat(4_000)}${']'.repeat(4_000)}`, 'body'],
    [
      'a label nested 4,000 levels',
      `{"owner":"u1","tier":"free","label":${'['.repeat(4_000)}${']'.repeat(4_000)}}`,
      'body',
    ],
    ['nested 9 levels', `{"owner":${'['.repeat(8)}${']'.repeat(8)}}`, 'body'],
  ])('refuses a body %s with 400, saying how deep bodies may go', async (_, raw, field) => {
    const answer = await send('/v1/keys', text(raw));
    const json = JSON.parse(answer.body);
    expect(answer.status).toBe(400);
    expect(json.error.details).toEqual([
      { field, problem: expect.stringContaining(`deeper than ${BOUNDS.bodyDepth} levels`) },
    ]);
  });

  it('takes a body nested as deep as the bound, and refuses it for its fields only', async () => {
    const raw = `{"owner":"u1","tier":"free","label":${'['.repeat(7)}${']'.repeat(7)}}`;
    const answer = await send('/v1/keys', text(raw));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.details).toEqual([
      { field: 'label', problem: 'must be a non-empty string' },
    ]);
  });

  it.each([
    ['{"owner":"a","tier":"free","owner":"b"}', 'owner'],
    ['{"owner":"a","tier":"partner","limits":{"minute":5,"minute":6}}', 'limits.minute'],
    ['{"owner":"a","tier":"free","\\u006fwner":"b"}', 'owner'],
  ])('refuses %s: a field written twice, named', async (raw, field) => {
    const answer = await send('/v1/keys', text(raw));
    const json = JSON.parse(answer.body);
    expect(answer.status).toBe(400);
    expect(json.error.details).toEqual([{ field, problem: expect.stringContaining('written twice') }]);
  });

  it.each([
    ['UTF-16', Buffer.from('{"owner":"a","tier":"free"}', 'utf16le'), 'not UTF-8'],
    ['Latin-1', Buffer.from('{"owner":"a","tier":"free","label":"Zoë"}', 'latin1'), 'not UTF-8'],
    [
      'a byte-order mark',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), text('{"owner":"a"}')]),
      'byte-order mark',
    ],
  ])('refuses a body in %s, saying so', async (_, body, says) => {
    const answer = await send('/v1/keys', body);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.details[0]).toMatchObject({
      field: 'body',
      problem: expect.stringContaining(says),
    });
  });

  it('says where a body stops being JSON, never quoting it', async () => {
    const answer = await send('/v1/keys', text('{"owner":"a",,}'));
    expect(JSON.parse(answer.body).error.details).toEqual([
      { field: 'body', problem: 'is not valid JSON (it stops making sense at character 14)' },
    ]);
  });

  it('answers a body one byte over the limit with 413', async () => {
    const answer = await send('/v1/keys', Buffer.alloc(BOUNDS.bodyBytes + 1, 0x20));
    expect(answer.status).toBe(413);
  });
});
