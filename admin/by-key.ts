/**
 * A key found from the key itself: an operator (or the application) holding a leaked key reaches its record and
 * revokes it without the key passing through a command line, a URL or a log. The key comes in from standard
 * input (`npm run keys -- id|revoke --key-stdin`) or a request body (`POST /v1/keys/lookup`, `POST
 * /v1/keys/revoke`); only its SHA-256 is used, to read the key item by its partition key (consistently: a key
 * just issued or imported is found at once, unlike by its id).
 */
import { API_KEY_PATTERN, hashApiKey, type KeyRecord } from '../tables/keys.js';
import { type AdminContext, type Outcome, type Revoked, revokeFound } from './actions.js';
import { adminError } from './errors.js';
import { objectOf, type Parsed, Problems } from './validate.js';

/** What is said of a key that is not a key (never the text itself). */
export const NOT_A_KEY =
  'must be a key as the API takes it: its prefix, then 22 base64url characters (not shown)';

/** `{ "key": "pk_live_…" }`: the body of the routes that take a key. */
export function parseKeyBody(body: unknown): Parsed<string> {
  const problems = new Problems();
  const input = objectOf(body, ['key'], problems);
  if (typeof input.key !== 'string' || !API_KEY_PATTERN.test(input.key)) problems.add('key', NOT_A_KEY);
  return problems.list.length
    ? { ok: false, problems: problems.list }
    : { ok: true, value: input.key as string };
}

/**
 * The key record of `key` (read by its hash), or `key_not_found`.
 * @example const found = await findByKey(ctx, keyFromStdin); if (found.ok) console.log(found.record.keyId);
 */
export async function findByKey(ctx: AdminContext, key: string): Promise<Outcome<{ record: KeyRecord }>> {
  const keyHash = hashApiKey(key);
  const record = (await ctx.tables.keysByHash([keyHash])).get(keyHash);
  if (record) return { ok: true, record };
  return {
    ok: false,
    error: adminError(
      'key_not_found',
      'No key in the keys table is this one: it was never issued or imported here.',
    ),
  };
}

/** Revoke the key `key` is (admin/actions.ts revokeFound: its status, then its counters' stop). */
export async function revokeByKey(ctx: AdminContext, key: string): Promise<Outcome<Revoked>> {
  const found = await findByKey(ctx, key);
  return found.ok ? revokeFound(ctx, found.record) : found;
}
