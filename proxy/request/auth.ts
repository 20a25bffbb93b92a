/** The `Authorization` header grammar of docs/api.md#authentication. Pure: the key lookup happens elsewhere. */

import { API_KEY_PATTERN } from '../../tables/keys.js';
import { type ApiError, apiError } from '../http/errors.js';

export type AuthorizationOutcome = { ok: true; key: string } | { ok: false; error: ApiError };

const BEARER = /^bearer$/i;

/**
 * Extract the API key from an `Authorization` header value: scheme `Bearer` in any case, exactly one
 * space, then a key of the wire format `pk_live_` + 22 base64url characters. Nothing else is accepted:
 * no surrounding or extra whitespace, no other scheme, no quoting.
 * @example parseAuthorization('Bearer pk_live_<22 base64url chars>') // → { ok: true, key: 'pk_live_…' }
 * @example parseAuthorization('bEaReR pk_live_<22 base64url chars>') // → { ok: true, … }
 * @example parseAuthorization(undefined) // → { ok: false, error: { code: 'missing_authorization', … } }
 * @example parseAuthorization('Bearer  pk_live_<22 base64url chars>') // two spaces → malformed_authorization
 */
export function parseAuthorization(header: string | undefined): AuthorizationOutcome {
  if (header === undefined || header === '') {
    return {
      ok: false,
      error: apiError(
        'missing_authorization',
        // Also what a lost visitor of `/` reads: where to learn how to get and send a key.
        'Send the header Authorization: Bearer <API key>; the API reference is at /docs.',
      ),
    };
  }
  const space = header.indexOf(' ');
  const scheme = space < 0 ? header : header.slice(0, space);
  const key = space < 0 ? '' : header.slice(space + 1);
  if (!BEARER.test(scheme) || !API_KEY_PATTERN.test(key)) {
    return {
      ok: false,
      error: apiError(
        'malformed_authorization',
        'The Authorization header must be "Bearer " followed by a key of the form pk_live_ and 22 base64url characters.',
      ),
    };
  }
  return { ok: true, key };
}
