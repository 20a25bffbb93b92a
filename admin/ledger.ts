/**
 * An owner's ledger: the keys that count against the owner's cap of active keys, in one item per owner
 * (`owner#<owner>` in the keys table), written only over the version that was read. It is where a key comes
 * into being: without transactions (dynalite has none), a new key is first added to its owner's ledger, with
 * its whole record, and only then written as the key item the request path reads. So:
 *
 * - two calls for one owner cannot both take the last place under the cap: one ledger write wins, the other
 *   reads again and counts again;
 * - a call that stops between the two writes leaves a ledger entry without its key item. Nobody holds that
 *   key (the answer that would have shown it was never given); the next call that counts the owner's keys
 *   writes the missing key item from the entry (rolls forward), so the owner sees what its cap counts, and a
 *   retry with the same Idempotency-Key finds it by id;
 * - a key becomes usable (issued, rolled, enabled again, its expiry lifted) only after its entry is in the
 *   ledger, so the ledger always holds at least the owner's usable keys. Entries of keys that are revoked or
 *   expired are dropped when the cap is reached, after their key items are read — except while a call may
 *   still be writing the key item: an entry added, or written to make its key usable again, less than
 *   {@link IN_FLIGHT_MS} ago is kept (and counted) whatever its key item says.
 */
import { type KeyRecord, keyAccepted } from '../tables/keys.js';
import type { AdminTables } from './dynamo.js';

/** How long a call may take from its ledger write to its key write: longer than any admin call's deadline. */
export const IN_FLIGHT_MS = 60_000;

/** Ledger writes lost to other calls before giving up (each loser reads and counts again). */
const MAX_ATTEMPTS = 12;

interface Entry {
  record: KeyRecord;
  /** Milliseconds: when the entry was added (its key item is written after it). */
  touched: number;
  /** Milliseconds: when it was last written to make its key usable again (enable, an expiry lifted). */
  reinstated?: number;
}

export type CommitOutcome = { ok: true } | { ok: false; reason: 'cap'; counted: string[] };

export interface CommitOptions {
  /** The owner's cap of usable keys. */
  cap: number;
  now: Date;
  /** A key counted as gone (the key a roll replaces): the owner may hold one over the cap until it expires. */
  setAside?: string;
  /** Write the entry even when it is there (a key made usable again): other calls then see the change. */
  touch?: boolean;
}

function parse(entries: string): Record<string, Entry> {
  return JSON.parse(entries) as Record<string, Entry>;
}

/**
 * Add `record` to its owner's ledger within the cap (or find it there). The key item is not written here: the
 * caller writes it after this succeeds (see the module's comment).
 * @example const outcome = await commitToLedger(tables, record, { cap: 10, now: new Date() });
 */
export async function commitToLedger(
  tables: AdminTables,
  record: KeyRecord & { owner: string },
  options: CommitOptions,
): Promise<CommitOutcome> {
  const now = options.now.getTime();
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    const stored = await tables.readLedger(record.owner);
    const entries = parse(stored.entries);
    if (entries[record.keyId] && !options.touch) return { ok: true };
    const counted = () =>
      Object.keys(entries).filter((keyId) => keyId !== record.keyId && keyId !== options.setAside);
    if (counted().length >= options.cap) await prune(tables, entries, record.keyId, now);
    if (counted().length >= options.cap) return { ok: false, reason: 'cap', counted: counted() };
    const known = entries[record.keyId];
    entries[record.keyId] = known ? { ...known, reinstated: now } : { record, touched: now };
    if (await tables.writeLedger(record.owner, JSON.stringify(entries), stored.version)) return { ok: true };
  }
  throw Object.assign(new Error("the owner's ledger stayed contended"), { name: 'ThrottlingException' });
}

/**
 * Drop the entries of keys that are no longer usable, and write the key items an interrupted call left
 * unwritten (roll forward). What a call may still be writing (IN_FLIGHT_MS) is kept as it is.
 */
async function prune(
  tables: AdminTables,
  entries: Record<string, Entry>,
  except: string,
  now: number,
): Promise<void> {
  const others = Object.entries(entries).filter(([keyId]) => keyId !== except);
  const stored = await tables.keysByHash(others.map(([, entry]) => entry.record.keyHash));
  for (const [keyId, entry] of others) {
    const record = stored.get(entry.record.keyHash);
    if (!record) {
      if (now - entry.touched >= IN_FLIGHT_MS) await tables.createKey(entry.record);
    } else if (!keyAccepted(record, now) && now - (entry.reinstated ?? 0) >= IN_FLIGHT_MS) {
      delete entries[keyId];
    }
  }
}

/**
 * Write the key items the owner's ledger holds but the keys table lacks (calls interrupted between their two
 * writes), so a listing shows every key the cap counts. `known`: the key ids the listing found already.
 */
export async function rollForward(
  tables: AdminTables,
  owner: string,
  known: ReadonlySet<string>,
  now: Date,
): Promise<void> {
  const entries = Object.values(parse((await tables.readLedger(owner)).entries)).filter(
    (entry) => !known.has(entry.record.keyId) && now.getTime() - entry.touched >= IN_FLIGHT_MS,
  );
  if (entries.length === 0) return;
  const stored = await tables.keysByHash(entries.map((entry) => entry.record.keyHash));
  for (const entry of entries) {
    if (!stored.has(entry.record.keyHash)) await tables.createKey(entry.record);
  }
}
