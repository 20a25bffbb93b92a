/** OPTIONS on a list checks its cursor like GET and HEAD (proxy/catalogue/cursor.ts), reading nothing. */
import { beforeAll, describe, expect, it } from 'vitest';
import { cursorError, decodeCursor, encodeCursor } from '../../../proxy/catalogue/cursor.js';
import { createHandler } from '../../../proxy/core/handler.js';
import type { ProxyHandler } from '../../../proxy/core/types.js';
import { MemoryKeyStore } from '../../../proxy/keys/memory.js';
import { MemoryQuotaMeter } from '../../../proxy/quota/memory.js';
import { MemoryObjectStore } from '../../../store/objects/memory.js';
import { CountingObjectStore, CURSOR_SECRET, KEYS, publishFixture, testConfig } from '../../helpers/proxy.js';

let handle: ProxyHandler;
let objects: CountingObjectStore;
let cursor: string;
const authorization = `Bearer ${KEYS.main}`;

const call = (method: string, query: string) =>
  handle({ method, path: '/v1/modules', query, headers: { authorization } });

beforeAll(async () => {
  const memory = new MemoryObjectStore();
  await publishFixture(memory);
  objects = new CountingObjectStore(memory);
  const keys = new MemoryKeyStore();
  keys.add(KEYS.main, { limits: { minute: 100_000, month: 100_000 } });
  handle = createHandler({
    objects,
    keys,
    quota: new MemoryQuotaMeter(),
    config: testConfig(),
    now: () => new Date(),
    requestId: () => 'req_options',
    log: () => {},
  });
  const first = await call('GET', 'limit=2&sort=name');
  cursor = JSON.parse(first.body!.toString()).page.next_cursor;
});

/** The cursor with one character changed. */
const tampered = () => `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;

describe('OPTIONS with a cursor', () => {
  it('is 204 with a cursor made for this query', async () => {
    expect((await call('OPTIONS', `limit=2&sort=name&cursor=${cursor}`)).status).toBe(204);
  });

  it.each([
    ['a tampered cursor', () => `limit=2&sort=name&cursor=${tampered()}`],
    ['a cursor of another sort', () => `limit=2&sort=id&cursor=${cursor}`],
    ['a cursor that is not base64url', () => 'cursor=%%%'],
  ])('is 400 invalid_parameter with %s, as GET and HEAD are', async (_name, query) => {
    const options = await call('OPTIONS', query());
    const get = await call('GET', query());
    const head = await call('HEAD', query());

    expect([options.status, get.status, head.status]).toEqual([400, 400, 400]);
    expect(JSON.parse(options.body!.toString()).error).toEqual(JSON.parse(get.body!.toString()).error);
  });

  it('reads no object to decide', async () => {
    const before = objects.reads.length;

    await call('OPTIONS', `limit=2&sort=name&cursor=${tampered()}`);
    await call('OPTIONS', `limit=2&sort=name&cursor=${cursor}`);

    expect(objects.reads.length).toBe(before);
  });
});

describe('cursorError', () => {
  it('has nothing to say about a detail or a list without a cursor', () => {
    expect(
      cursorError({ kind: 'detail', resource: 'modules', id: 1, mask: 0 }, CURSOR_SECRET),
    ).toBeUndefined();
  });
});

describe('cursor versions', () => {
  const state = { objectId: 'A'.repeat(22), offset: 150, rangeStart: 1_000, rangeEnd: 9_000 };
  const digest = `${'D'.repeat(21)}A`;

  it('version 2 carries the digest of the range it pins, bound by the HMAC', () => {
    const encoded = encodeCursor({ ...state, digest }, 'modules?sort=id', CURSOR_SECRET);
    expect(Buffer.from(encoded, 'base64url').byteLength).toBe(61);
    expect(decodeCursor(encoded, 'modules?sort=id', CURSOR_SECRET)).toEqual({ ...state, digest });
    // Any byte of it changed, the digest's included, is a cursor that is not valid.
    const bytes = Buffer.from(encoded, 'base64url');
    for (let at = 0; at < bytes.byteLength; at++) {
      const altered = Buffer.from(bytes);
      altered[at] = altered[at]! ^ 0x01;
      expect(
        decodeCursor(altered.toString('base64url'), 'modules?sort=id', CURSOR_SECRET),
        `byte ${at}`,
      ).toBeUndefined();
    }
  });

  it('version 1 (a format-2 object, or a cursor made before the upgrade) carries none and is still read', () => {
    const encoded = encodeCursor(state, 'modules?sort=id', CURSOR_SECRET);
    expect(Buffer.from(encoded, 'base64url').byteLength).toBe(45);
    expect(decodeCursor(encoded, 'modules?sort=id', CURSOR_SECRET)).toEqual(state);
    expect(decodeCursor(encoded, 'modules?sort=name', CURSOR_SECRET)).toBeUndefined();
  });
});
