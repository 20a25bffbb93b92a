import { describe, expect, it } from 'vitest';
import { parseAuthorization } from '../../../proxy/request/auth.js';

const KEY = 'pk_live_abcDEF0123456789-_xyzA';
const key22 = `pk_live_${'a'.repeat(22)}`;

describe('parseAuthorization', () => {
  it.each([
    [`Bearer ${key22}`, 'ok'],
    [`bearer ${key22}`, 'ok'],
    [`BEARER ${key22}`, 'ok'],
    [`bEaReR ${key22}`, 'ok'],
    [`Bearer pk_live_${'-_Az09'.repeat(3)}Ab_-`, 'ok'],
    [undefined, 'missing_authorization'],
    ['', 'missing_authorization'],
    ['Bearer', 'malformed_authorization'],
    ['Bearer ', 'malformed_authorization'],
    [key22, 'malformed_authorization'],
    [`Bearer  ${key22}`, 'malformed_authorization'],
    [`Bearer\t${key22}`, 'malformed_authorization'],
    [` Bearer ${key22}`, 'malformed_authorization'],
    [`Bearer ${key22} `, 'malformed_authorization'],
    [`Basic ${key22}`, 'malformed_authorization'],
    [`Token ${key22}`, 'malformed_authorization'],
    [`Bearer "${key22}"`, 'malformed_authorization'],
    [`Bearer ${key22.slice(0, -1)}`, 'malformed_authorization'],
    [`Bearer ${key22}a`, 'malformed_authorization'],
    [`Bearer pk_test_${'a'.repeat(22)}`, 'malformed_authorization'],
    [`Bearer PK_LIVE_${'a'.repeat(22)}`, 'malformed_authorization'],
    [`Bearer pk_live_${'a'.repeat(21)}+`, 'malformed_authorization'],
    [`Bearer pk_live_${'a'.repeat(21)}=`, 'malformed_authorization'],
    [`Bearer ${key22}, Bearer ${key22}`, 'malformed_authorization'],
  ])('%j → %s', (header, expected) => {
    const outcome = parseAuthorization(header);
    expect(outcome.ok ? 'ok' : outcome.error.code).toBe(expected);
  });

  it('returns the key itself', () => {
    expect(parseAuthorization(`Bearer ${KEY.slice(0, 30)}`)).toEqual({ ok: true, key: KEY.slice(0, 30) });
  });

  it('never echoes the header in its messages', () => {
    const outcome = parseAuthorization(`Bearer  ${key22}`);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.error.message).not.toContain(key22);
  });
});
