/**
 * Hostile requests: paths, query strings and headers a careless or malicious client sends (broken and
 * overlong percent-encodings, NULs, huge values, repeated and look-alike parameters, odd methods, broken
 * Authorization values, unicode). `forHttp` keeps to what an HTTP/1.1 client can put on the wire.
 */
import fc from 'fast-check';

export interface HostileRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
}

/** What an HTTP/1.1 header value may hold: tab, visible ASCII, space, obs-text (Latin-1). */
function headerSafe(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (!(c === 9 || (c >= 0x20 && c <= 0x7e) || (c >= 0x80 && c <= 0xff))) return false;
  }
  return true;
}

const METHODS = [
  'GET',
  'HEAD',
  'OPTIONS',
  'POST',
  'PUT',
  'DELETE',
  'PATCH',
  'TRACE',
  'PROPFIND',
  'get',
  'Get',
];

/** Long values: some fit in a request head (16 KiB in Node), some do not. */
const hugeArb = fc
  .constantFrom(3_000, 8_000, 20_000)
  .chain((n) => fc.constantFrom('9', 'a', '%41', ',', '\u00e9').map((c) => c.repeat(n)));

/** Raw (already on-the-wire) fragments of paths and queries. */
const ATOMS = [
  '',
  '0',
  '1',
  '01',
  '-1',
  '+1',
  '1e3',
  '0x10',
  '1.0',
  ' 1',
  '1 ',
  '%31',
  '%2B1',
  '%',
  '%2',
  '%zz',
  '%C3%28',
  '%E2%82',
  '%ED%A0%80',
  '%00',
  '%FF',
  '\u0000',
  'NaN',
  'Infinity',
  '9007199254740991',
  '9007199254740992',
  '99999999999999999999999',
  '٣',
  '１',
  'é',
  '😀',
  '%F0%9F%98%80',
  '..',
  '.',
  '/',
  '//',
  '%2F',
  '\\',
  '?',
  '#',
  ';',
  ',',
  ',,',
  'ins,',
  ',ins',
  'ins,,outs',
  'INS',
  'name,ins',
  'modules',
  'id',
  'name',
  'NAME',
  'sort',
  'pk_live_AAAAAAAAAAAAAAAAAAAAAA',
];

const PARAM_NAMES = [
  'limit',
  'cursor',
  'sort',
  'fields',
  'include',
  'fields[]',
  'include[]',
  'fields%5B%5D',
  'limit[]',
  'fields[',
  'manufacturer_id',
  'hp',
  'standard',
  'tag',
  'q',
  '%71',
  'Limit',
  'LIMIT',
  'lim%69t',
  'limit%00',
  'limit ',
  'li+mit',
  '',
  '%',
  'x',
  '__proto__',
  'constructor',
  'hasOwnProperty',
  'toString',
];

const atomArb = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...ATOMS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12, unit: 'binary' }) },
  {
    weight: 1,
    arbitrary: fc.base64String({ maxLength: 80 }).map((s) => s.replaceAll('+', '-').replaceAll('/', '_')),
  },
  { weight: 1, arbitrary: hugeArb },
);

const memberArb = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(fc.constantFrom(...PARAM_NAMES), atomArb).map(([n, v]) => `${n}=${v}`) },
  { weight: 1, arbitrary: fc.constantFrom(...PARAM_NAMES) },
  { weight: 1, arbitrary: atomArb },
  { weight: 1, arbitrary: fc.constantFrom('=', '==', '=1', 'a==b', '&', 'limit=1=2') },
);

export const hostileQueryArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 1, arbitrary: fc.constant('') },
  { weight: 6, arbitrary: fc.array(memberArb, { maxLength: 8 }).map((m) => m.join('&')) },
  // Repeats of one parameter, many parameters.
  {
    weight: 1,
    arbitrary: fc
      .tuple(memberArb, fc.integer({ min: 2, max: 2_000 }))
      .map(([m, n]) => Array.from({ length: n }, () => m.slice(0, 40)).join('&')),
  },
);

const ROUTES = [
  '/v1/modules',
  '/v1/manufacturers',
  '/v1/standards',
  '/v1/tags',
  '/v1/modules/',
  '/v1/manufacturers/',
];

export const hostilePathArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...ROUTES.filter((r) => !r.endsWith('/'))) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom('/v1/modules/', '/v1/manufacturers/'), atomArb)
      .map(([r, a]) => r + a),
  },
  {
    weight: 2,
    arbitrary: fc
      .array(
        fc.oneof(fc.constantFrom('v1', 'modules', 'V1', 'Modules', 'tags', '%76%31', '..', '', '1'), atomArb),
        {
          maxLength: 5,
        },
      )
      .map((segments) => `/${segments.join('/')}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', '*', 'v1/modules', '//v1/modules', '/v1//modules', '/v1/modules/1/'),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30, unit: 'grapheme' }).map((s) => `/${s}`) },
);

/** Authorization values; `valid` is a key the store accepts. */
export function authorizationArb(valid: string): fc.Arbitrary<string | undefined> {
  const body = valid.slice('pk_live_'.length);
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(`Bearer ${valid}`, `bearer ${valid}`, `BEARER ${valid}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '',
        'Bearer',
        'Bearer ',
        `Bearer  ${valid}`,
        ` Bearer ${valid}`,
        `Bearer ${valid} `,
        `Bearer\t${valid}`,
        `Basic ${valid}`,
        `Bearer "${valid}"`,
        `Bearer pk_live_${body.slice(1)}`,
        `Bearer pk_live_${body}A`,
        `Bearer pk_test_${body}`,
        `Bearer PK_LIVE_${body}`,
        `Bearer pk_live_${body.slice(1)}=`,
        `Bearer pk_live_${body.slice(1)}é`,
        'Bearer pk_live_BBBBBBBBBBBBBBBBBBBBBB',
        `Bearer ${valid},Bearer ${valid}`,
        `Bearer ${'x'.repeat(10_000)}`,
      ),
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 40, unit: 'binary' }).map((s) => `Bearer ${s}`) },
  );
}

const headerValueArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom('*', '"x"', 'W/"x"', 'W/', '"', ',,,', '"a", W/"b", *', 'W/"', '"\u00ff"'),
  },
  { weight: 3, arbitrary: fc.string({ maxLength: 30, unit: 'binary' }) },
  { weight: 1, arbitrary: hugeArb },
);

/** A whole hostile request; with `forHttp`, only what can be sent over HTTP/1.1 by a client library. */
export function hostileRequestArb(validKey: string, forHttp = false): fc.Arbitrary<HostileRequest> {
  const method = fc.oneof(
    { weight: 8, arbitrary: fc.constant('GET') },
    { weight: 3, arbitrary: fc.constantFrom(...METHODS) },
    { weight: 1, arbitrary: forHttp ? fc.stringMatching(/^[A-Z]{1,10}$/) : fc.string({ maxLength: 10 }) },
  );
  return fc
    .record({
      method,
      path: hostilePathArb,
      query: hostileQueryArb,
      authorization: authorizationArb(validKey),
      ifNoneMatch: fc.option(headerValueArb, { nil: undefined, freq: 3 }),
      extra: fc.option(
        fc.tuple(fc.constantFrom('x-forwarded-for', 'accept', 'cookie', 'range'), headerValueArb),
        {
          nil: undefined,
          freq: 3,
        },
      ),
    })
    .map(({ method, path, query, authorization, ifNoneMatch, extra }) => {
      const headers: Record<string, string> = {};
      if (authorization !== undefined) headers.authorization = authorization;
      if (ifNoneMatch !== undefined) headers['if-none-match'] = ifNoneMatch;
      if (extra) headers[extra[0]] = extra[1];
      if (!forHttp) return { method, path, query, headers };
      // On the wire: a request target is visible ASCII; header values carry no control characters and,
      // as Node's client insists, no characters beyond Latin-1.
      const wire = (s: string) => encodeURI(s).replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
      const cleanHeaders: Record<string, string> = {};
      for (const [name, value] of Object.entries(headers)) {
        if (headerSafe(value)) cleanHeaders[name] = value;
      }
      const target = safeWire(path, wire).replaceAll('#', '%23').replaceAll('?', '%3F');
      return {
        method,
        path: target.startsWith('/') ? target : `/${target}`,
        query: safeWire(query, wire).replaceAll('#', '%23'),
        headers: cleanHeaders,
      };
    });
}

/** Percent-encode what may not appear on the wire, keeping the (possibly broken) encodings already there. */
function safeWire(text: string, wire: (s: string) => string): string {
  try {
    return wire(text).replaceAll('%25', '%');
  } catch {
    // encodeURI throws on lone surrogates; drop them.
    return wire(text.replace(/[\ud800-\udfff]/g, '')).replaceAll('%25', '%');
  }
}

/** One answer expected on a raw connection: status and error code (`undefined` for a 200). */
export interface RawAnswer {
  status: number;
  code?: string;
  /** The request was HEAD: headers only. */
  head?: boolean;
}

/** Bytes written in one go to a fresh connection, and every answer owed on it, in order. */
export interface RawHttpCase {
  name: string;
  bytes: string;
  answers: RawAnswer[];
  /** Half-close after writing (the client says it sends nothing more). */
  end?: boolean;
}

const ok: RawAnswer = { status: 200 };
const bad: RawAnswer = { status: 400, code: 'invalid_parameter' };
const version: RawAnswer = { status: 505, code: 'invalid_parameter' };
const method: RawAnswer = { status: 405, code: 'method_not_allowed' };
const tooLong: RawAnswer = { status: 414, code: 'invalid_parameter' };

/**
 * What a hostile client writes on a raw socket to the node:http adapter: request smuggling shapes, oversize
 * heads and URLs, CONNECT and unknown methods, broken request lines and versions, pipelining with a bad
 * request behind good ones, repeated Host and Authorization. `authorization` is a whole header line's value.
 */
export function rawHttpCases(authorization: string): RawHttpCase[] {
  const get = (target = '/v1/tags', extra = '') =>
    `GET ${target} HTTP/1.1\r\nHost: api.test\r\nAuthorization: ${authorization}\r\n${extra}\r\n`;
  const line = (extra: string) => get('/v1/tags', extra);
  return [
    // Smuggling: the length of the body must be unambiguous, or the request is refused and the connection closed.
    {
      name: 'CL.TE: Content-Length then Transfer-Encoding',
      bytes: `${line('Content-Length: 6\r\nTransfer-Encoding: chunked\r\n')}0\r\n\r\nX`,
      answers: [bad],
    },
    {
      name: 'TE.CL: Transfer-Encoding then Content-Length',
      bytes: `${line('Transfer-Encoding: chunked\r\nContent-Length: 3\r\n')}0\r\n\r\n`,
      answers: [bad],
    },
    {
      name: 'two different Content-Lengths',
      bytes: line('Content-Length: 0\r\nContent-Length: 5\r\n'),
      answers: [bad],
    },
    {
      name: 'two equal Content-Lengths',
      bytes: line('Content-Length: 0\r\nContent-Length: 0\r\n'),
      answers: [bad],
    },
    { name: 'a Content-Length list', bytes: line('Content-Length: 0, 0\r\n'), answers: [bad] },
    { name: 'a negative Content-Length', bytes: line('Content-Length: -1\r\n'), answers: [bad] },
    {
      name: 'Transfer-Encoding folded onto a continuation line (obs-fold)',
      bytes: `${line('Transfer-Encoding:\r\n chunked\r\n')}0\r\n\r\n`,
      answers: [bad],
    },
    {
      name: 'Transfer-Encoding with a space before the colon',
      bytes: `${line('Transfer-Encoding : chunked\r\n')}0\r\n\r\n`,
      answers: [bad],
    },
    { name: 'Transfer-Encoding: xchunked', bytes: line('Transfer-Encoding: xchunked\r\n'), answers: [bad] },
    {
      name: 'Transfer-Encoding: chunked, identity (chunked not last)',
      bytes: line('Transfer-Encoding: chunked, identity\r\n'),
      answers: [bad],
    },
    { name: 'Transfer-Encoding: identity', bytes: line('Transfer-Encoding: identity\r\n'), answers: [bad] },
    {
      name: 'Transfer-Encoding sent twice, chunked first',
      bytes: line('Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n'),
      answers: [bad],
    },
    {
      name: 'a well-framed empty chunked body (control: answered)',
      bytes: `${line('Transfer-Encoding: chunked\r\n')}0\r\n\r\n`,
      answers: [ok],
    },
    {
      name: 'a chunked body with a broken chunk size, after its request',
      bytes: `${line('Transfer-Encoding: chunked\r\n')}zz\r\n`,
      answers: [ok, bad],
    },
    // Oversize heads and URLs.
    {
      name: 'a 20 KB header',
      bytes: line(`X-Big: ${'b'.repeat(20_000)}\r\n`),
      answers: [{ status: 431, code: 'invalid_parameter' }],
    },
    {
      name: 'a 9 KB URL (over CloudFront’s 8,192 bytes)',
      bytes: get(`/v1/tags?${'a'.repeat(9_000)}`),
      answers: [tooLong],
    },
    {
      name: 'a 20 KB URL (over the parser’s limit)',
      bytes: get(`/v1/tags?${'a'.repeat(20_000)}`),
      answers: [tooLong],
    },
    // Methods.
    {
      name: 'CONNECT',
      bytes: `CONNECT api.test:443 HTTP/1.1\r\nHost: api.test:443\r\nAuthorization: ${authorization}\r\n\r\n`,
      answers: [method],
    },
    {
      name: 'an unknown method (FOO)',
      bytes: `FOO /v1/tags HTTP/1.1\r\nHost: api.test\r\n\r\n`,
      answers: [method],
    },
    {
      name: 'a lower-case method (get)',
      bytes: `get /v1/tags HTTP/1.1\r\nHost: api.test\r\n\r\n`,
      answers: [method],
    },
    {
      name: 'POST with a body (known to Node, refused by the core)',
      bytes: `POST /v1/tags HTTP/1.1\r\nHost: api.test\r\nContent-Length: 2\r\n\r\n{}`,
      answers: [method],
    },
    // Request lines and versions.
    { name: 'a request line of one word', bytes: 'GARBAGE\r\n\r\n', answers: [bad] },
    {
      name: 'line ends without CR',
      bytes: `GET /v1/tags HTTP/1.1\nHost: api.test\nAuthorization: ${authorization}\n\n`,
      answers: [bad],
    },
    { name: 'HTTP/0.9 (no version)', bytes: 'GET /v1/tags\r\n\r\n', answers: [version] },
    { name: 'HTTP/1.2', bytes: get().replace('HTTP/1.1', 'HTTP/1.2'), answers: [version] },
    {
      name: 'HTTP/2.0 in a text request line',
      bytes: get().replace('HTTP/1.1', 'HTTP/2.0'),
      answers: [version],
    },
    { name: 'HTTP/9.9', bytes: get().replace('HTTP/1.1', 'HTTP/9.9'), answers: [version] },
    { name: 'the HTTP/2 connection preface', bytes: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', answers: [version] },
    {
      name: 'HTTP/1.0 without Host (allowed)',
      bytes: `GET /v1/tags HTTP/1.0\r\nAuthorization: ${authorization}\r\n\r\n`,
      answers: [ok],
    },
    {
      name: 'a request cut short, then the client half-closes',
      bytes: 'GET /v1/tags HTTP/1.1\r\nHost: api.test\r\n',
      answers: [bad],
      end: true,
    },
    // Headers.
    {
      name: 'an Expect other than 100-continue (answered as usual, not a bare 417)',
      bytes: line('Expect: teapot\r\n'),
      answers: [ok],
    },
    { name: 'two Host headers', bytes: line('Host: evil.test\r\n'), answers: [bad] },
    {
      name: 'no Host header (HTTP/1.1)',
      bytes: `GET /v1/tags HTTP/1.1\r\nAuthorization: ${authorization}\r\n\r\n`,
      answers: [bad],
    },
    {
      name: 'HEAD with two Host headers: the refusal without a body',
      bytes: `HEAD /v1/tags HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n`,
      answers: [{ ...bad, head: true }],
    },
    {
      name: 'two Authorization headers',
      bytes: line(`Authorization: ${authorization}\r\n`),
      answers: [{ status: 401, code: 'malformed_authorization' }],
    },
    { name: 'a NUL in a header value', bytes: line('X-Note: a\u0000b\r\n'), answers: [bad] },
    { name: 'a space in a header name', bytes: line('Bad Header: y\r\n'), answers: [bad] },
    // Pipelining: every request that was read is answered, in order, before the refusal.
    { name: 'a valid request, then garbage', bytes: `${get()}GARBAGE\r\n\r\n`, answers: [ok, bad] },
    {
      name: 'two valid requests, then two Content-Lengths',
      bytes: `${get()}${get()}${line('Content-Length: 1\r\nContent-Length: 2\r\n')}`,
      answers: [ok, ok, bad],
    },
    {
      name: 'a valid request, then CL.TE',
      bytes: `${get()}${line('Content-Length: 6\r\nTransfer-Encoding: chunked\r\n')}0\r\n\r\nX`,
      answers: [ok, bad],
    },
    {
      name: 'a valid request, then CONNECT',
      bytes: `${get()}CONNECT api.test:443 HTTP/1.1\r\nHost: api.test:443\r\n\r\n`,
      answers: [ok, method],
    },
    {
      name: 'a valid request, then a 20 KB header',
      bytes: `${get()}${line(`X-Big: ${'b'.repeat(20_000)}\r\n`)}`,
      answers: [ok, { status: 431, code: 'invalid_parameter' }],
    },
    {
      name: 'Connection: close, then another request in the same write (never read)',
      bytes: `${line('Connection: close\r\n')}${get()}`,
      answers: [ok],
    },
    {
      name: 'an HTTP/1.0 request, then another in the same write (never read)',
      bytes: `GET /v1/tags HTTP/1.0\r\nAuthorization: ${authorization}\r\n\r\n${get()}`,
      answers: [ok],
    },
    {
      name: 'a valid request, then two Host headers',
      bytes: `${get()}${line('Host: evil.test\r\n')}${get()}`,
      answers: [ok, bad],
    },
  ];
}
