/**
 * Idempotency-Key for issue and roll, as Stripe's: a call retried (or sent twice at once) with the same
 * Idempotency-Key and the same request creates nothing twice and answers with the same key id.
 *
 * The first call records, before it writes anything else, the key it is about to create: one conditional
 * PutItem in the counters table (`idempotency#<sha256 of the Idempotency-Key>`, kept 24 hours by TTL). Of
 * two calls at once one record is written; the other call reads it and finishes the same key (the same
 * idempotent writes, admin/actions.ts), so both answer with one key id. The record holds the key's hash,
 * never the key: a replay answers with everything but the key (`key: null`, `Idempotent-Replayed: true`).
 * Lost the first answer? Roll the key (docs/admin-api.md).
 *
 * The same Idempotency-Key with another request (another owner, tier, body or action) is refused
 * (`422 idempotency_key_reused`), as the IETF draft and Stripe do. A call refused by the owner's cap releases
 * its record, so the same Idempotency-Key may be tried again once there is room.
 */
import { hash } from 'node:crypto';
import type { Item, KeyRecord } from '../tables/keys.js';
import { COUNTERS_SCHEMA } from '../tables/schema.js';
import type { AdminTables } from './dynamo.js';
import { type AdminError, adminError, ContentionError } from './errors.js';

/** How long an Idempotency-Key is remembered. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

export interface Idempotency {
  /** The Idempotency-Key header's value. */
  key: string;
  /** What the request asked for (validate.ts's `fingerprint`). */
  fingerprint: string;
}

export type ClaimOutcome =
  | { ok: true; replay: false }
  | { ok: true; replay: true; record: KeyRecord; oldKeyExpires?: Date }
  | { ok: false; error: AdminError };

const claimKey = (idempotency: Idempotency) =>
  `${COUNTERS_SCHEMA.claimPrefix}${hash('sha256', idempotency.key, 'hex')}`;

/** What a call claims under its Idempotency-Key: the key it creates (issue), or replacing another (roll). */
export interface Claim {
  idempotency: Idempotency;
  action: 'issue' | 'roll';
  record: KeyRecord;
  /** roll: when the key it replaces expires. */
  oldKeyExpires?: Date | undefined;
}

/**
 * Record that this Idempotency-Key creates `record` (issue) or `record` replacing another key (roll), or
 * find what it recorded before: then the call is a replay of that one.
 */
export async function recordClaim(tables: AdminTables, claim: Claim, now: Date): Promise<ClaimOutcome> {
  const { idempotency, action, record, oldKeyExpires } = claim;
  const pk = claimKey(idempotency);
  const item: Item = {
    [COUNTERS_SCHEMA.partitionKey]: { S: pk },
    action: { S: action },
    fingerprint: { S: idempotency.fingerprint },
    key_id: { S: record.keyId },
    record: { S: JSON.stringify(record) },
    created: { S: now.toISOString() },
    [COUNTERS_SCHEMA.ttlAttribute]: { N: String(Math.floor(now.getTime() / 1000) + IDEMPOTENCY_TTL_SECONDS) },
    ...(oldKeyExpires && { old_key_expires: { S: oldKeyExpires.toISOString() } }),
  };
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await tables.putClaim(item)) return { ok: true, replay: false };
    const found = await tables.readClaim(pk);
    if (!found) continue; // expired between the two calls: record it again
    if (found.fingerprint?.S !== idempotency.fingerprint || found.action?.S !== action) {
      return {
        ok: false,
        error: adminError(
          'idempotency_key_reused',
          'This Idempotency-Key was used with another request in the last 24 hours: use a new one for a new request.',
        ),
      };
    }
    const earlier = JSON.parse(found.record?.S ?? '{}') as KeyRecord;
    // Our own record, written by a write whose answer was lost and sent again by the SDK.
    if (earlier.keyId === record.keyId) return { ok: true, replay: false };
    const expires = found.old_key_expires?.S;
    return { ok: true, replay: true, record: earlier, ...(expires && { oldKeyExpires: new Date(expires) }) };
  }
  throw new ContentionError('the idempotency record kept changing while it was written');
}

/** Forget the record of a call that was refused, so the same Idempotency-Key can be tried again. */
export function releaseClaim(tables: AdminTables, idempotency: Idempotency, keyId: string): Promise<void> {
  return tables.deleteClaim(claimKey(idempotency), keyId);
}
