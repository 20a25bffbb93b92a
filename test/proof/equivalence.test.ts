/**
 * Property-based equivalence: for generated catalogues and queries, the proxy core over the builder's
 * objects answers byte for byte what the naive oracle answers (status, body, cursor null-ness, and the
 * headers the design defines). Cursor walks vary limit, fields and include from page to page.
 *
 * Default: ~160 catalogues and ~7,000 requests in well under a minute. `PROOF_RUNS=<factor>` (≥ 10) multiplies
 * the runs; `PROOF_SEED=<seed> PROOF_PATH=<path>` replay a failure (both are printed with it).
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { Snapshot } from '../../builder/snapshot/snapshot.js';
import { validateSnapshot } from '../../builder/snapshot/validate.js';
import type { ProxyHandler } from '../../proxy/core/types.js';
import { MemoryObjectStore } from '../../store/objects/memory.js';
import {
  pageRequestArb,
  type Query,
  queryArb,
  queryString,
  snapshotArb,
  type Walk,
  walkArb,
} from '../oracle/arbitraries.js';
import {
  assertProperty,
  CURSOR_SECRET,
  expectSame,
  LARGE,
  PARTNER_KEY,
  putCatalogue,
  runSettings,
  scaled,
  testProxy,
  testTimeout,
} from '../oracle/harness.js';
import { CursorBook, Oracle } from '../oracle/oracle.js';

const AUTH = `Bearer ${PARTNER_KEY}`;
/** Time bounds of the two properties (runs and shrinking); the large run gets an hour. */
const SMALL_MS = LARGE ? 3_600_000 : 90_000;
const LARGE_MS = LARGE ? 3_600_000 : 60_000;
const counts = { snapshots: 0, requests: 0, walks: 0, walkPages: 0, variants: 0, heads: 0, notModified: 0 };

afterAll(() => {
  console.log(`equivalence: ${JSON.stringify(counts)}`);
});

interface World {
  handle: ProxyHandler;
  oracle: Oracle;
}

async function worldFor(snapshot: Snapshot, prefix: string): Promise<World> {
  const validated = validateSnapshot(snapshot);
  if (!validated.ok)
    throw new Error(`the arbitrary made an invalid snapshot: ${JSON.stringify(validated.problems)}`);
  const objects = new MemoryObjectStore();
  await putCatalogue(objects, snapshot, prefix);
  counts.snapshots++;
  return { handle: testProxy({ objects, prefix }), oracle: new Oracle({ snapshot, keys: [PARTNER_KEY] }) };
}

async function get(world: World, path: string, query: string, headers: Record<string, string> = {}) {
  counts.requests++;
  return world.handle({ method: 'GET', path, query, headers: { authorization: AUTH, ...headers } });
}

const SETS = ['fields', 'include'];

/**
 * The same sets spelled otherwise: each set-valued parameter's members reversed and one repeated, and sent as
 * repeated parameters when it came as one comma list, as one comma list when it came repeated (`fields` or
 * `fields[]`) — the same
 * representation (docs/api.md#parameters). Other parameters reversed.
 */
function reordered(params: [string, string][]): [string, string][] {
  const setOf = (parameter: string) => parameter.replace(/\[\]$/, '');
  const respelled = [...params].reverse().filter(([name]) => !SETS.includes(setOf(name)));
  for (const name of SETS) {
    const given = params.filter(([parameter]) => setOf(parameter) === name);
    if (given.length === 0) continue;
    const members = given.flatMap(([, value]) => value.split(',')).reverse();
    members.push(members[0]!);
    if (given.length === 1) respelled.push(...members.map((member): [string, string] => [name, member]));
    else respelled.push([name, members.join(',')]);
  }
  return respelled;
}

async function checkQuery(world: World, query: Query, encode: boolean): Promise<void> {
  const raw = queryString(query.params, encode);
  const book = new CursorBook();
  const label = `GET ${query.path}?${raw}`;
  const actual = await get(world, query.path, raw);
  const expected = world.oracle.answer(
    { method: 'GET', path: query.path, query: raw, authorization: AUTH },
    book,
  );
  expectSame(label, actual, expected, book);
  if (actual.status !== 200) return;

  // Same set, other spelling (comma list ↔ repeated parameter): same bytes, same ETag.
  counts.variants++;
  const other = await get(world, query.path, queryString(reordered(query.params), !encode));
  if (
    other.status !== 200 ||
    !other.body?.equals(actual.body!) ||
    other.headers.etag !== actual.headers.etag
  ) {
    throw new Error(`${label}: reordered sets changed the answer (${other.status}, ${other.headers.etag})`);
  }
  // HEAD: the GET's headers, no body.
  counts.heads++;
  counts.requests++;
  const head = await world.handle({
    method: 'HEAD',
    path: query.path,
    query: raw,
    headers: { authorization: AUTH },
  });
  if (head.status !== 200 || head.body !== undefined || head.headers.etag !== actual.headers.etag) {
    throw new Error(`${label}: HEAD differs from GET (${head.status}, ${head.headers.etag})`);
  }
  if (head.headers['content-length'] !== actual.headers['content-length']) {
    throw new Error(`${label}: HEAD content-length differs from GET`);
  }
  // Revalidation: the ETag comes back as 304.
  counts.notModified++;
  const revalidated = await get(world, query.path, raw, { 'if-none-match': `W/${actual.headers.etag}` });
  if (revalidated.status !== 304 || revalidated.body !== undefined) {
    throw new Error(`${label}: If-None-Match with the ETag gave ${revalidated.status}`);
  }
  if (
    revalidated.headers.etag !== actual.headers.etag ||
    !revalidated.headers['x-ratelimit-remaining-minute']
  ) {
    throw new Error(`${label}: a 304 without its ETag or rate-limit headers`);
  }
}

async function checkWalk(world: World, walk: Walk, g: fc.GeneratorValue): Promise<void> {
  counts.walks++;
  const book = new CursorBook();
  let cursor: string | undefined;
  // Bounded: a walk of limit 1 over the largest snapshot ends well within this.
  for (let page = 0; page < 1_000; page++) {
    const params = g(pageRequestArb, walk, page, cursor);
    const raw = queryString(params, page % 2 === 1);
    counts.walkPages++;
    const actual = await get(world, walk.path, raw);
    const expected = world.oracle.answer(
      { method: 'GET', path: walk.path, query: raw, authorization: AUTH },
      book,
    );
    const next = expectSame(`walk page ${page}: GET ${walk.path}?${raw}`, actual, expected, book);
    if (next === null) return;
    cursor = next;
  }
  throw new Error('walk did not end');
}

const property = (shape: Parameters<typeof snapshotArb>[0], queries: number, walks: number) =>
  fc.asyncProperty(snapshotArb(shape), fc.constantFrom('', 'v1/'), fc.gen(), async (snapshot, prefix, g) => {
    const world = await worldFor(snapshot, prefix);
    for (let i = 0; i < queries; i++) await checkQuery(world, g(queryArb, snapshot), i % 3 === 0);
    for (let i = 0; i < walks; i++) await checkWalk(world, g(walkArb, snapshot), g);
  });

describe('proxy over builder ≡ oracle', () => {
  it(
    'answers single requests and cursor walks like the oracle (small catalogues)',
    async () => {
      await assertProperty(property({ maxModules: 60 }, 12, 3), runSettings(scaled(150), SMALL_MS));
    },
    testTimeout(SMALL_MS),
  );

  it(
    'answers like the oracle where pages cross segments (catalogues of 100 to 260 modules)',
    async () => {
      await assertProperty(
        property({ minModules: 100, maxModules: 260 }, 10, 4),
        runSettings(scaled(8), LARGE_MS),
      );
    },
    testTimeout(LARGE_MS),
  );

  it('refuses a cursor used with other filters or sort, or altered', async () => {
    const snapshot = fc.sample(snapshotArb({ minModules: 30, maxModules: 40 }), { numRuns: 1, seed: 7 })[0]!;
    const world = await worldFor(snapshot, '');
    const first = await get(world, '/v1/modules', 'limit=2&sort=name');
    const cursor = JSON.parse(first.body!.toString()).page.next_cursor as string;
    const tampered = `${cursor.slice(0, -2)}${cursor.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const query of [
      `cursor=${cursor}`,
      `cursor=${cursor}&sort=id`,
      `cursor=${cursor}&sort=name&hp=4`,
      `cursor=${tampered}&sort=name`,
      `cursor=${cursor}x&sort=name`,
    ]) {
      const answer = await get(world, '/v1/modules', query);
      expect([query, answer.status, JSON.parse(answer.body!.toString()).error.code]).toEqual([
        query,
        400,
        'invalid_parameter',
      ]);
    }
    expect((await get(world, '/v1/modules', `cursor=${cursor}&sort=name&limit=100&fields=hp`)).status).toBe(
      200,
    );
    expect(CURSOR_SECRET.length).toBeGreaterThanOrEqual(32);
    // Any edit of a cursor — one character, a cut, an addition — is refused, never served.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    await assertProperty(
      fc.asyncProperty(
        fc.nat({ max: cursor.length - 1 }),
        fc.constantFrom(...alphabet),
        fc.constantFrom('replace', 'cut', 'add'),
        async (at, char, how) => {
          const edited =
            how === 'replace'
              ? `${cursor.slice(0, at)}${char}${cursor.slice(at + 1)}`
              : how === 'cut'
                ? cursor.slice(0, at)
                : `${cursor.slice(0, at)}${char}${cursor.slice(at)}`;
          fc.pre(edited !== cursor && edited !== '');
          const answer = await get(world, '/v1/modules', `cursor=${edited}&sort=name`);
          expect([answer.status, JSON.parse(answer.body!.toString()).error.code]).toEqual([
            400,
            'invalid_parameter',
          ]);
        },
      ),
      runSettings(scaled(300), 20_000),
    );
  });
});
