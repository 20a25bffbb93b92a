/**
 * Content coding (docs/api.md#content-coding): `br` and `gzip` for the requests whose `Accept-Encoding` allows them
 * (RFC 9110 §12.5.3), identity otherwise. Pure functions, plus the compression itself, whose output is kept
 * in the byte cache: a hot page is compressed once per container, not once per request.
 *
 * Each coding is its own representation with its own strong ETag, derived from the identity one
 * (`"<tag>"` → `"<tag>-br"`, `"<tag>-gz"`): a strong ETag may not be shared by two codings, and deriving
 * it keeps the 304 of a cursor page free of any read (its identity tag is known from the cursor alone).
 * The coded bytes are a function of the identity bytes, the settings below and the zlib build; should a Node
 * upgrade or a new setting change them, a client's copy under the same tag still decodes to the same content
 * (the API serves no byte ranges, the one use that would need the coded bytes themselves to match).
 */
import type * as Zlib from 'node:zlib';
import { type ByteCache, cacheKey } from '../cache/bytes.js';
import { BoundedMemo } from '../cache/memo.js';
import { ifNoneMatchSelects } from './etag.js';

export type ContentCoding = 'br' | 'gzip';
export type Coding = ContentCoding | 'identity';

/** Codings the proxy produces, in the order it prefers them at equal weight (br is ~5–10 % smaller). */
export const CONTENT_CODINGS: readonly ContentCoding[] = ['br', 'gzip'];

/**
 * Bodies under this many bytes are sent as they are. Coding a 1 KB body saves at most a few hundred bytes
 * (a 212-byte module detail: 173 B gzip, 148 B br): headers and body fit one TCP segment (~1,460 B)
 * either way, so no packet or round trip is saved, while the coding costs CPU and a cache entry.
 * CloudFront uses the same floor (1,000 bytes) when it compresses.
 */
export const MIN_CODED_BYTES = 1024;

/**
 * The settings, chosen from measurements on real pages (`npm run bench`, section 6): on a 100-record page with
 * every include (64 KB), brotli quality 5 gives 8.9× for ~0.6–1.2 ms of CPU (quality 4: 7.8× for ~0.4–0.7 ms;
 * 6: 9.1× for a little more) and gzip level 6 8.4× for ~0.55–0.85 ms (level 4: 7.2×; 9: 8.8× for twice the
 * CPU). A kilobyte of CloudFront egress ($0.085/GB) costs as much as ~13 ms of a 512 MB arm64 Lambda, and a
 * hot page is coded once per container, so the smaller output is worth its CPU per miss.
 * Compression is synchronous: zlib's async API added 150–450 µs of CPU per call (threadpool hop, stream
 * set-up; more than the work itself on a 10 KB page), and a Lambda container serves one request at a time, so
 * blocking its event loop for a miss delays no one else.
 */
const BROTLI_QUALITY = 5;
const GZIP_LEVEL = 6;

/** The ETag suffix of each coding. */
const SUFFIX: Record<ContentCoding, string> = { br: '-br', gzip: '-gz' };

/**
 * What a request's `Accept-Encoding` accepts, as weights in thousandths (0 = not acceptable). Identity that the
 * header does not mention (neither by name nor by `*`) weighs 0.5: acceptable, but after any named coding.
 */
export interface AcceptedCodings {
  readonly br: number;
  readonly gzip: number;
  readonly identity: number;
}

/** No header, or an empty one: identity only. */
export const IDENTITY_ONLY: AcceptedCodings = Object.freeze({ br: 0, gzip: 0, identity: 1000 });
const IMPLICIT_IDENTITY = 0.5;

/** `q=` values (RFC 9110 §12.4.2): at most three decimals, never above 1. */
const QVALUE = /^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/;

/** Header values seen recently: clients send a handful of distinct values, each again and again. */
const parsed = new BoundedMemo<AcceptedCodings>(256);

/**
 * The weights of an `Accept-Encoding` header value. Codings are case-insensitive, `x-gzip` is `gzip`
 * (RFC 9110 §8.4.1.3), `*` stands for every coding the header does not name (identity included), a member
 * with a malformed weight is ignored, and a coding named twice keeps its highest weight.
 * @example acceptedCodings('gzip, deflate, br') // → { br: 1000, gzip: 1000, identity: 0.5 }
 * @example acceptedCodings('br;q=0.5, gzip;q=0.8, identity;q=0') // → { br: 500, gzip: 800, identity: 0 }
 * @example acceptedCodings('*;q=0') // → { br: 0, gzip: 0, identity: 0 }
 * @example acceptedCodings(undefined) // → IDENTITY_ONLY
 */
export function acceptedCodings(header: string | undefined): AcceptedCodings {
  return header === undefined ? IDENTITY_ONLY : parsed.get(header, parseAcceptEncoding);
}

function parseAcceptEncoding(header: string): AcceptedCodings {
  const named = new Map<string, number>();
  for (const member of header.split(',')) {
    const [rawCoding = '', ...parameters] = member.split(';');
    const coding = rawCoding.trim().toLowerCase();
    if (coding === '') continue;
    let weight = 1000;
    let malformed = false;
    for (const parameter of parameters) {
      const equals = parameter.indexOf('=');
      const name = parameter.slice(0, Math.max(0, equals)).trim().toLowerCase();
      if (name !== 'q') continue;
      const value = parameter.slice(equals + 1).trim();
      if (QVALUE.test(value)) weight = Math.round(Number(value) * 1000);
      else malformed = true;
    }
    if (malformed) continue;
    const key = coding === 'x-gzip' ? 'gzip' : coding;
    named.set(key, Math.max(weight, named.get(key) ?? -1));
  }
  if (named.size === 0) return IDENTITY_ONLY;
  const any = named.get('*');
  return {
    br: named.get('br') ?? any ?? 0,
    gzip: named.get('gzip') ?? any ?? 0,
    identity: named.get('identity') ?? any ?? IMPLICIT_IDENTITY,
  };
}

/**
 * The coding of a 200 with a `bytes`-long body: the acceptable coding of highest weight (br before gzip at
 * equal weight; a coding before identity at equal weight), identity under {@link MIN_CODED_BYTES} unless the
 * client refused identity. When nothing acceptable is left, identity (RFC 9110 §12.5.3 allows it).
 * @example chooseCoding(acceptedCodings('gzip, br'), 9_948) === 'br'
 * @example chooseCoding(acceptedCodings('gzip, br'), 300) === 'identity'
 * @example chooseCoding(acceptedCodings('br;q=0.5, gzip'), 9_948) === 'gzip'
 */
export function chooseCoding(accepted: AcceptedCodings, bytes: number): Coding {
  const coding =
    accepted.br > 0 && accepted.br >= accepted.gzip ? 'br' : accepted.gzip > 0 ? 'gzip' : undefined;
  if (coding === undefined || accepted.identity > accepted[coding]) return 'identity';
  if (bytes < MIN_CODED_BYTES && accepted.identity > 0) return 'identity';
  return coding;
}

/**
 * The strong ETag of a coding's representation, from the identity one.
 * @example codedEtag('"3q2-7wQk0ZbLx1aPe5uB9A"', 'br') === '"3q2-7wQk0ZbLx1aPe5uB9A-br"'
 * @example codedEtag('"3q2-7wQk0ZbLx1aPe5uB9A"', 'identity') === '"3q2-7wQk0ZbLx1aPe5uB9A"'
 */
export function codedEtag(etag: string, coding: Coding): string {
  return coding === 'identity' ? etag : `${etag.slice(0, -1)}${SUFFIX[coding]}"`;
}

/**
 * The request's `If-None-Match`, as the reader needs it: given the identity ETag of the answer (and its size
 * when known), the ETag to send with a 304, or `undefined` for "not modified" does not apply. A member
 * matches when it names the identity tag or the tag of a coding the request accepts: the client holds a
 * representation it can use. `*` answers with the tag a 200 would carry (sized as a large body when the size
 * is not known, as for a cursor page's 304, decided before any read).
 */
export type IfNoneMatch = (etag: string, bytes?: number) => string | undefined;

const NEVER: IfNoneMatch = () => undefined;

/**
 * @example
 * const ifNoneMatch = ifNoneMatchFor('"t-br"', acceptedCodings('gzip, br'));
 * ifNoneMatch('"t"') === '"t-br"'; // → 304 with ETag "t-br"
 */
export function ifNoneMatchFor(header: string | undefined, accepted: AcceptedCodings): IfNoneMatch {
  if (header === undefined) return NEVER;
  return (etag, bytes = Number.POSITIVE_INFINITY) => {
    const sent = chooseCoding(accepted, bytes);
    const tags = [codedEtag(etag, sent)];
    if (sent !== 'identity') tags.push(etag);
    for (const coding of CONTENT_CODINGS)
      if (coding !== sent && accepted[coding] > 0) tags.push(codedEtag(etag, coding));
    return ifNoneMatchSelects(header, tags);
  };
}

/**
 * The bytes of `body` in `coding`, from the byte cache when this answer was coded before (key
 * `cacheKey.coded`: the identity ETag names the bytes exactly, so the entry never goes stale).
 * @example const coded = encodeBody(body, '"3q2-7wQk0ZbLx1aPe5uB9A"', 'br', byteCache);
 */
export function encodeBody(body: Buffer, etag: string, coding: ContentCoding, cache: ByteCache): Buffer {
  const key = cacheKey.coded(etag, coding);
  const cached = cache.get<Buffer>(key);
  if (cached !== undefined) return cached;
  const coded = compress(body, coding);
  cache.set(key, coded, coded.byteLength);
  return coded;
}

/**
 * `body` compressed with the proxy's settings, in a buffer of its own size: zlib returns small outputs as a
 * view of a 16 KB chunk, which a cache entry would otherwise keep alive whole.
 * @example gunzipSync(compress(body, 'gzip')).equals(body) === true
 */
export function compress(body: Buffer, coding: ContentCoding): Buffer {
  // node:zlib is loaded by the first answer that is compressed, not when the function is imported (its
  // load is a sixth of an empty Node.js process's start: bench section 10).
  const { brotliCompressSync, constants, gzipSync } = process.getBuiltinModule('node:zlib') as typeof Zlib;
  const coded =
    coding === 'br'
      ? brotliCompressSync(body, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
          },
        })
      : gzipSync(body, { level: GZIP_LEVEL });
  if (coded.buffer.byteLength === coded.byteLength) return coded;
  const exact = Buffer.allocUnsafeSlow(coded.byteLength);
  coded.copy(exact);
  return exact;
}
