/**
 * Content coding, pure: Accept-Encoding negotiation (RFC 9110 §12.5.3), the choice for a body size, ETags per
 * coding, If-None-Match over every representation, and compression round trips through the byte cache.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ByteCache } from '../../../proxy/cache/bytes.js';
import {
  acceptedCodings,
  type Coding,
  chooseCoding,
  codedEtag,
  compress,
  encodeBody,
  IDENTITY_ONLY,
  ifNoneMatchFor,
  MIN_CODED_BYTES,
} from '../../../proxy/http/coding.js';
import { ifNoneMatchSelects } from '../../../proxy/http/etag.js';

const LARGE = MIN_CODED_BYTES;
const SMALL = MIN_CODED_BYTES - 1;

describe('acceptedCodings', () => {
  it.each([
    [undefined, IDENTITY_ONLY],
    ['', IDENTITY_ONLY],
    [' , ', IDENTITY_ONLY],
    ['gzip', { br: 0, gzip: 1000, identity: 0.5 }],
    ['gzip, deflate, br', { br: 1000, gzip: 1000, identity: 0.5 }],
    ['GZIP, Br', { br: 1000, gzip: 1000, identity: 0.5 }],
    ['x-gzip', { br: 0, gzip: 1000, identity: 0.5 }],
    ['x-gzip;q=0.2, gzip;q=0.7', { br: 0, gzip: 700, identity: 0.5 }],
    ['br;q=0.5, gzip;q=0.8, identity;q=0', { br: 500, gzip: 800, identity: 0 }],
    ['br ; Q=0.25', { br: 250, gzip: 0, identity: 0.5 }],
    ['br;q=1.000, gzip;q=0.001', { br: 1000, gzip: 1, identity: 0.5 }],
    ['*', { br: 1000, gzip: 1000, identity: 1000 }],
    ['*;q=0', { br: 0, gzip: 0, identity: 0 }],
    ['*;q=0.3, br', { br: 1000, gzip: 300, identity: 300 }],
    ['*;q=0, identity', { br: 0, gzip: 0, identity: 1000 }],
    ['identity', { br: 0, gzip: 0, identity: 1000 }],
    // Malformed weights drop their member only.
    ['br;q=2, gzip', { br: 0, gzip: 1000, identity: 0.5 }],
    ['br;q=0.5555, gzip;q=x', IDENTITY_ONLY],
    ['br;q=, gzip;q=1.1', IDENTITY_ONLY],
    ['deflate, compress', { br: 0, gzip: 0, identity: 0.5 }],
  ])('%j → %j', (header, expected) => {
    expect(acceptedCodings(header)).toEqual(expected);
  });

  it('answers a repeated header value from its memo (same object)', () => {
    expect(acceptedCodings('gzip, br;q=0.9')).toBe(acceptedCodings('gzip, br;q=0.9'));
  });
});

describe('chooseCoding', () => {
  it.each<[string | undefined, number, Coding]>([
    [undefined, LARGE, 'identity'],
    ['', LARGE, 'identity'],
    ['identity', LARGE, 'identity'],
    ['gzip;q=0', LARGE, 'identity'],
    ['br;q=0, gzip;q=0', LARGE, 'identity'],
    ['deflate', LARGE, 'identity'],
    ['gzip', LARGE, 'gzip'],
    ['br', LARGE, 'br'],
    ['gzip, br', LARGE, 'br'],
    ['br, gzip', LARGE, 'br'],
    ['br;q=0.5, gzip', LARGE, 'gzip'],
    ['br;q=0.9, gzip;q=0.8', LARGE, 'br'],
    ['x-gzip', LARGE, 'gzip'],
    ['*', LARGE, 'br'],
    ['*, br;q=0', LARGE, 'gzip'],
    // The client prefers identity: it gets identity.
    ['gzip;q=0.5, identity', LARGE, 'identity'],
    // Equal weight: the smaller coding.
    ['gzip, identity', LARGE, 'gzip'],
    // Under the threshold: identity, unless the client refused it.
    ['gzip, br', SMALL, 'identity'],
    ['gzip, br', 0, 'identity'],
    ['br, identity;q=0', SMALL, 'br'],
    ['gzip, *;q=0', SMALL, 'gzip'],
    // Nothing acceptable at all: identity anyway (RFC 9110 §12.5.3 allows it; no 406 for a read API).
    ['*;q=0', LARGE, 'identity'],
    ['identity;q=0', LARGE, 'identity'],
  ])('%j for %i bytes → %s', (header, bytes, expected) => {
    expect(chooseCoding(acceptedCodings(header), bytes)).toBe(expected);
  });
});

describe('ETags per coding', () => {
  const etag = '"3q2-7wQk0ZbLx1aPe5uB9A"';

  it('derives a distinct strong tag per coding', () => {
    const tags = (['identity', 'br', 'gzip'] as const).map((c) => codedEtag(etag, c));
    expect(tags).toEqual([etag, '"3q2-7wQk0ZbLx1aPe5uB9A-br"', '"3q2-7wQk0ZbLx1aPe5uB9A-gz"']);
    expect(new Set(tags).size).toBe(3);
  });

  it('ifNoneMatchSelects names the first member in header order that is current; * the first tag', () => {
    expect(ifNoneMatchSelects('"x", W/"b-gz", "b"', ['"b"', '"b-gz"'])).toBe('"b-gz"');
    expect(ifNoneMatchSelects('*', ['"b-br"', '"b"'])).toBe('"b-br"');
    expect(ifNoneMatchSelects('"b-br"', ['"b"', '"b-gz"'])).toBeUndefined();
    expect(ifNoneMatchSelects(undefined, ['"b"'])).toBeUndefined();
  });

  it.each<[string, string | undefined, number | undefined, string | undefined]>([
    // [If-None-Match, Accept-Encoding, body bytes, tag of the 304 (undefined: 200)]
    [etag, undefined, LARGE, etag],
    [codedEtag(etag, 'br'), 'br', LARGE, codedEtag(etag, 'br')],
    [codedEtag(etag, 'gzip'), 'gzip, br', LARGE, codedEtag(etag, 'gzip')],
    // The identity bytes are usable whatever the client accepts now.
    [etag, 'br', LARGE, etag],
    [etag, 'identity;q=0, br', LARGE, etag],
    // A coding the request does not accept is not a representation it can use.
    [codedEtag(etag, 'br'), 'gzip', LARGE, undefined],
    [codedEtag(etag, 'br'), undefined, LARGE, undefined],
    [codedEtag(etag, 'gzip'), 'gzip;q=0, br', LARGE, undefined],
    [`W/${codedEtag(etag, 'br')}`, 'br', LARGE, codedEtag(etag, 'br')],
    ['"other"', 'br', LARGE, undefined],
    // `*`: the tag a 200 would carry (a large body when the size is unknown, as for a cursor page).
    ['*', 'gzip, br', LARGE, codedEtag(etag, 'br')],
    ['*', 'gzip, br', SMALL, etag],
    ['*', 'gzip', undefined, codedEtag(etag, 'gzip')],
    ['*', undefined, LARGE, etag],
  ])('If-None-Match %j with Accept-Encoding %j (%s bytes) → %j', (header, accept, bytes, expected) => {
    expect(ifNoneMatchFor(header, acceptedCodings(accept))(etag, bytes)).toBe(expected);
  });

  it('no If-None-Match never matches', () => {
    expect(ifNoneMatchFor(undefined, acceptedCodings('br'))(etag, LARGE)).toBeUndefined();
  });
});

describe('compression', () => {
  const body = Buffer.from(
    JSON.stringify({
      data: Array.from({ length: 40 }, (_, i) => ({ id: i + 1, name: `Module ${i + 1}`, hp: 4 + (i % 9) })),
      page: { next_cursor: null },
    }),
  );
  const decode = { br: brotliDecompressSync, gzip: gunzipSync } as const;

  it.each(['br', 'gzip'] as const)(
    '%s round-trips byte for byte, smaller, in a buffer of its own size',
    (coding) => {
      const coded = compress(body, coding);
      expect(decode[coding](coded).equals(body)).toBe(true);
      expect(coded.byteLength).toBeLessThan(body.byteLength / 2);
      // Not a view of zlib's 16 KB chunk: a cache entry weighs what it holds.
      expect(coded.buffer.byteLength).toBe(coded.byteLength);
    },
  );

  it('a hot answer is compressed once: the second request is a cache hit returning the same bytes', () => {
    const cache = new ByteCache({ maxBytes: 1 << 20 });
    const etag = '"AAAAAAAAAAAAAAAAAAAAAA"';
    const first = encodeBody(body, etag, 'br', cache);
    const second = encodeBody(body, etag, 'br', cache);
    expect(second).toBe(first);
    expect(cache.stats()).toMatchObject({ entries: 1, hits: 1, misses: 1 });
    expect(encodeBody(body, etag, 'gzip', cache)).not.toBe(first);
    expect(cache.stats().entries).toBe(2);
  });

  it('with the cache disabled (0 bytes), every call compresses and still answers the same bytes', () => {
    const cache = new ByteCache({ maxBytes: 0 });
    const a = encodeBody(body, '"x"', 'gzip', cache);
    const b = encodeBody(body, '"x"', 'gzip', cache);
    expect(b).not.toBe(a);
    expect(b.equals(a)).toBe(true);
    expect(cache.stats().entries).toBe(0);
  });
});
