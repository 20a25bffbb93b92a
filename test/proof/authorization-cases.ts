/**
 * One table of `Authorization` cases for every place that judges the header: the proxy's parser
 * (proxy/request/auth.ts), the CloudFront viewer-request function (infra/viewer-request.js) and the node:http
 * adapter. `values` are the header's values as the HTTP layer hands them over (optional whitespace around
 * each value already stripped); `[]` is no header, two values are the header sent twice.
 */
export type AuthExpectation = 'ok' | 'missing_authorization' | 'malformed_authorization';

export interface AuthCase {
  name: string;
  values: string[];
  expected: AuthExpectation;
  /** Whether the values survive a trip over HTTP/1.1 unchanged (no surrounding whitespace, no controls). */
  wire: boolean;
}

/** 22 base64url characters, `-` and `_` included. */
const BODY = 'Ab3-_9zZ0aB1cD2eF3gH4i';
export const AUTH_CASE_KEY = `pk_live_${BODY}`;
const K = AUTH_CASE_KEY;

const ok = (name: string, ...values: string[]): AuthCase => ({ name, values, expected: 'ok', wire: true });
const missing = (name: string, ...values: string[]): AuthCase => ({
  name,
  values,
  expected: 'missing_authorization',
  wire: true,
});
const malformed = (name: string, ...values: string[]): AuthCase => ({
  name,
  values,
  expected: 'malformed_authorization',
  wire: values.every(survivesTheWire),
});

/** HTTP strips spaces and tabs around a value and forbids control characters in it. */
function survivesTheWire(value: string): boolean {
  return !/^[ \t]|[ \t]$/.test(value) && !/[^\t\x20-\x7e\x80-\xff]/.test(value);
}

export const AUTH_CASES: AuthCase[] = [
  ok('Bearer and a key', `Bearer ${K}`),
  ok('lower-case scheme', `bearer ${K}`),
  ok('upper-case scheme', `BEARER ${K}`),
  ok('mixed-case scheme', `bEaReR ${K}`),
  missing('no header'),
  missing('an empty header', ''),
  malformed('the scheme alone', 'Bearer'),
  malformed('the scheme and a space', 'Bearer '),
  malformed('two spaces', `Bearer  ${K}`),
  malformed('a tab', `Bearer\t${K}`),
  malformed('a leading space (not on the wire)', ` Bearer ${K}`),
  malformed('a trailing space (not on the wire)', `Bearer ${K} `),
  malformed('no space', `Bearer${K}`),
  malformed('a colon after the scheme', `Bearer: ${K}`),
  malformed('the key without a scheme', K),
  malformed('Basic', `Basic ${K}`),
  malformed('Token', `Token ${K}`),
  malformed('a quoted key', `Bearer "${K}"`),
  malformed('21 characters', `Bearer pk_live_${BODY.slice(1)}`),
  malformed('23 characters', `Bearer ${K}A`),
  malformed('pk_test_', `Bearer pk_test_${BODY}`),
  malformed('upper-case prefix', `Bearer PK_LIVE_${BODY}`),
  malformed('base64 padding', `Bearer pk_live_${BODY.slice(1)}=`),
  malformed('a plus sign', `Bearer pk_live_${BODY.slice(1)}+`),
  malformed('a slash', `Bearer pk_live_${BODY.slice(1)}/`),
  malformed('a Latin-1 letter', `Bearer pk_live_${BODY.slice(1)}\u00e9`),
  malformed('a NUL (not on the wire)', `Bearer ${K}\u0000`),
  malformed('something after the key', `Bearer ${K} extra`),
  malformed('two credentials in one value', `Bearer ${K}, Bearer ${K}`),
  malformed('a key and a comma', `Bearer ${K},`),
  malformed('the header twice, same key', `Bearer ${K}`, `Bearer ${K}`),
  malformed('the header twice, two keys', `Bearer ${K}`, `Bearer pk_live_${'B'.repeat(22)}`),
  malformed('the header twice, the second empty', `Bearer ${K}`, ''),
  malformed('the header twice, both empty', '', ''),
  malformed('the header twice, another scheme second', `Bearer ${K}`, 'Basic eDp5'),
];

/** The header value the proxy core sees: repeated headers joined with ", " (Lambda and node:http alike). */
export function joinedValue(values: readonly string[]): string | undefined {
  return values.length === 0 ? undefined : values.join(', ');
}
