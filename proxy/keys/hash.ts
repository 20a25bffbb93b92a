/**
 * The request path's key hashing: the hash of tables/keys.ts, remembered per `Authorization` header value for
 * the keys seen lately.
 */
import { hashApiKey } from '../../tables/keys.js';
import { BoundedMemo } from '../cache/memo.js';
import type { ApiError } from '../http/errors.js';
import { parseAuthorization } from '../request/auth.js';

/**
 * Header values of the keys seen lately, so a busy key's header is checked and its key hashed once per
 * container, not per request. Bounded (a {@link BoundedMemo}, emptied when full). It keeps recent keys in the
 * container's memory, where the requests that carried them already were; nothing of it is logged or sent.
 */
const KEY_HASH_MEMO_ENTRIES = 1_024;

/** A well-formed header's key, as the key store knows it (its hash), or the header's refusal. */
export type Credentials = { ok: true; keyHash: string } | { ok: false; error: ApiError };

/**
 * {@link parseAuthorization} and {@link hashApiKey} of the key it carries, remembered per header value for
 * well-formed ones (a malformed header is refused afresh each time: a flood of them fills nothing).
 * @example const credentialsOf = credentialsReader(); credentialsOf(`Bearer ${key}`) // → { ok: true, keyHash: hashApiKey(key) }
 */
export function credentialsReader(): (header: string | undefined) => Credentials {
  const memo = new BoundedMemo<Credentials>(KEY_HASH_MEMO_ENTRIES);
  const read = (header: string | undefined): Credentials => {
    const authorization = parseAuthorization(header);
    return authorization.ok ? { ok: true, keyHash: hashApiKey(authorization.key) } : authorization;
  };
  return (header) => {
    if (header === undefined) return read(header);
    const known = memo.peek(header);
    if (known) return known;
    const credentials = read(header);
    if (credentials.ok) memo.set(header, credentials);
    return credentials;
  };
}
