/**
 * A revoked key's emergency stop: when key administration revokes a key it also writes a stop into the key's
 * counter items (tables/counters.ts `stopped_until`), which the request path's one conditional write per request
 * reads (proxy/quota/dynamo.ts). So every proxy container refuses the key from the moment the revoke returns,
 * whatever its key cache still holds, at no cost to the request path: no extra call, the same write unit.
 *
 * The stop lasts {@link STOP_MS}: as long as any container can go on with a key it read before the revoke (the
 * key cache's longest setting, and a minute more), after which each has read the key again and refuses it from
 * its cache. It is written into the items of the months it spans: this month's, and next month's when it runs
 * into it (the meter counts a request in the item of its own month). Its order with the key's status keeps a
 * stop from outliving what it stands for: a revoke writes the status first and the stop second; an enable makes
 * the key active first and lifts the stop second, so a stop never lands on a key that an enable already made
 * active — but for a revoke held up between its two writes for a whole enable call, whose stop then ends by
 * itself within STOP_MS.
 */
import { counterExpiresAt, counterKey, STOP_MS } from '../tables/counters.js';
import type { AdminTables } from './dynamo.js';

/** The counter items (`<key id>#<YYYY-MM>`) a stop written at `now` spans, with their TTLs. */
function itemsSpanned(keyId: string, now: Date): { pk: string; expiresAt: number }[] {
  const end = new Date(now.getTime() + STOP_MS);
  const months = [now, end].map((at) => ({ pk: counterKey(keyId, at), expiresAt: counterExpiresAt(at) }));
  return months[0]!.pk === months[1]!.pk ? [months[0]!] : months;
}

/**
 * Stop a revoked key's requests from now on: its counter items hold the stop until now + {@link STOP_MS}.
 * Returns when the stop ends (ISO 8601).
 * @example const until = await stopKey(tables, 'key_3fG7xQ2mPa', new Date());
 */
export async function stopKey(tables: AdminTables, keyId: string, now: Date): Promise<string> {
  const until = now.getTime() + STOP_MS;
  await tables.stopCounters(itemsSpanned(keyId, now), until);
  return new Date(until).toISOString();
}

/** Lift a key's stop (enable): from the items of the months a stop written before `now` can still reach. */
export function liftStop(tables: AdminTables, keyId: string, now: Date): Promise<void> {
  return tables.removeStops(itemsSpanned(keyId, now).map((item) => item.pk));
}
