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
