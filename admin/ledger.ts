/**
 * An owner's ledger: the keys that count against the owner's cap, in one item per owner (`owner#<owner>` in
 * the keys table) with a version, written only over the version that was read (a conditional PutItem).
 * DynamoDB writes one item atomically and dynalite has no transactions, so the cap is kept by the order of
 * single-item writes and by what each write checks. This comment is the argument that it is exact; the
 * property-based test test/admin/ledger.test.ts runs issue, enable, roll, expiry changes, revokes, crashes and
 * calls held past the window against dynalite in the orders fast-check picks, and checks what it claims.
 *
 * **Words.** A key is *usable* at a time when it is active and not expired then (tables/keys.ts keyAccepted:
 * what the request path accepts). A key is *rolled away* when it names a successor (`rolled_to`): it ends at
 * its roll's expiry, which can be brought forward, never lifted or put later (an expiry write that lifts it or
 * puts it later lands only on a key not rolled away, and a roll's mark only ever brings an expiry forward). An
 * entry of the ledger is a *roll entry* when it `replaces` another key; the key it replaces is *replaced* while
 * the roll entry is in the ledger.
 *
 * **The claim.** At every moment, the usable keys of an owner that are not rolled away number at most the cap.
 * (A roll lets an owner hold its old key beside the new one until the old one ends: one key over the cap per
 * key rolled, for at most 30 days.)
 *
 * **1. The ledger's count never exceeds the cap.** Let C be the number of entries that are not replaced, the
 * roll entries that replace one key counted once (rolls of one key at once: one of them at most gets a key,
 * below). Every ledger write is one of: an entry added for a key (issue, roll, enable, an expiry lifted, an
 * owner given), only when the entries other than the key itself — and, for a roll, the key it replaces and the
 * other rolls of that key — number fewer than the cap, so C after it is at most the cap; an entry touched
 * again without a room check, only for a key that is usable and counted already (its expiry put later) — C
 * unchanged; entries dropped (pruned, below) — C does not grow (dropping the last roll entry of a key counts
 * the key it replaced again, and drops one). Writes are over the version read, so
 * each one starts from the ledger as the last one left it: C ≤ cap always.
 *
 * **2. Every usable key of the owner has its entry in the ledger.** A key becomes usable, or is given an owner
 * while usable, only by a key write whose condition holds at the instant it lands (admin/dynamo.ts KeyGuard):
 * - it is created (PutItem, never over an existing item) after its entry was written; a roll's new key only
 *   after its old key was marked rolled to it (else it is never created: see *Rolls that lose*);
 * - it is enabled, its expiry lifted or put later, or it is given an owner, after a ledger write at version v
 *   that holds its entry, with the condition that the key's *fence* is below v;
 * - or the write leaves it refused (enabled while expired; an expiry changed while revoked; an owner given
 *   while revoked or expired), only brings its expiry forward, or concerns a key without an owner (which no
 *   ledger counts) and lands only while it still has none.
 * An entry leaves the ledger by a prune that read the ledger at version p holding it, then *fenced* the
 * key — a write that lands only while the key is refused at the pruner's clock, setting its fence to p (fences
 * never go down) — and then wrote the ledger over p; or, for a roll that lost (below), with no fence: its key
 * is never created, so it is never usable. Suppose a usable key had no entry: take the last write
 * that dropped its entry, version p + 1, after its fence p. The key was refused when fenced and usable now, so
 * a later write made it usable; by the list above, that write needed an entry at a version v > p with the
 * fence below v — but no version after p holds the entry (p + 1 dropped it, and nothing added it again).
 * Contradiction: a held-up write arriving late, from a call that ran out of time or a network that delivered
 * it late, fails its condition instead of landing.
 *
 * **3. The claim.** Each usable key that is not rolled away has its entry (2). Those that are not replaced are
 * counted in C. One that is replaced but not yet marked rolled away is the old key of a roll whose new key is
 * not yet created (a new key is created only after the mark), so its roll entries are counted once in C with
 * no usable key behind them; and of the rolls of one key only the one its old key is marked rolled to ever gets
 * a key (*Rolls that lose*), counted once too. So these keys number at most C ≤ cap (1).
 *
 * **Rolls that lose.** Rolls of one key at once each write their roll entry; the first to mark the old key
 * rolled to its new key wins. The old key's successor, once named, never changes (`rolled_to` is only ever set
 * where it is absent or already names that key; nothing removes it, and key items are never deleted), so the
 * others' marks fail now and forever — and a roll's key is created only after its mark. Their keys are
 * therefore never created, by them or by anyone who finishes their writes: a refused roll leaves no key item
 * (nothing in the owner's listing, nothing to enable or roll), and its entry is dead. The refused call drops
 * its own entry before it answers (and releases its Idempotency-Key); an entry left by a call killed before
 * that is dropped by the next prune (at once: it reads the old key beside the keys it checks) or by a
 * listing's roll-forward (once it is out of the window). Until then it holds a place no key uses: the count
 * is only ever high, never low.
 *
 * **Crashes.** Each call writes its ledger entry first and its key writes after, in an order where each prefix
 * leaves a state of the claim: an entry without its key item is a key nobody holds (the answer that would have
 * shown it was never given). Whoever counts the owner next — an issue, a roll, an enable, the first page of a
 * listing — writes what such an entry lacks (rolls it forward: marks the old key, creates the new one) once the
 * entry is older than {@link IN_FLIGHT_MS}, so a listing shows what the cap counts; with an Idempotency-Key, a
 * retry finishes the same key. Repeating a write is harmless: each is conditional on what it would change.
 *
 * **Imports.** Keys brought over from the system that issued them before (admin/import/) enter their owner's
 * ledger without a room check ({@link enterImported}): an owner who held more keys there than the cap comes over
 * whole. That is the one write that may leave C above the cap; every other write that adds an entry still needs
 * fewer than the cap beside it, so while C is above the cap nothing but another import adds one, and C only
 * falls (prunes) until it is under the cap again. The claim then reads: at every moment the usable keys of an
 * owner that are not rolled away number at most the cap, or at most what the last import left if that is
 * more, and no issue, enable or roll makes them more. 2. and 3. hold as they are: an imported key's entry is
 * written before its key item, as every key's.
 *
 * **Time.** Nothing above depends on how long a call takes: the window only keeps a prune from fencing, and a
 * roll-forward from doing, what a call still in progress is about to do (both would be harmless, but the call
 * would then have to start again). Every admin call ends by a deadline well under the window
 * (admin/settings.ts ADMIN_DEADLINE_MS), so a call on time never meets either. Expiry is judged by the clock of
 * whoever reads a key, as the request path judges it: a pruner whose clock runs ahead by d frees an expired
 * key's place up to d early, as a proxy with that clock would refuse the key d early.
 */
import { type KeyRecord, keyAccepted } from '../tables/keys.js';
import type { AdminTables } from './dynamo.js';
import { ContentionError } from './errors.js';

/**
 * How long an entry is left to the call that wrote it (no roll-forward, no fence): far longer than any admin
 * call's deadline (admin/settings.ts).
 */
export const IN_FLIGHT_MS = 60_000;

/** Ledger writes lost to other calls before giving up (each loser reads and counts again). */
const MAX_ATTEMPTS = 12;

/** A roll entry's key replaces this one, which ends at `expires`. */
export interface Replaces {
  keyHash: string;
  keyId: string;
  /** ISO 8601, UTC. */
  expires: string;
}

interface Entry {
  /** The key as it is created (a new key), or as it was when made usable again. */
  record: KeyRecord;
  /** Milliseconds: when the entry was added (its key item is written after it). */
  touched: number;
  /** Milliseconds: when it was last written to make its key usable again (its key write follows). */
  reinstated?: number;
  replaces?: Replaces;
}

/**
 * What a commit does with the key's entry:
 * - `create`: a new key (issue, roll): add it within the cap, or find it there (a retry);
 * - `reinstate`: a key being made usable again (enable, an expiry lifted, an owner given): add or touch it,
 *   within the cap;
 * - `renew`: a usable key whose expiry is put later: touch its entry (no room needed: it is counted), or add
 *   it within the cap when it is missing.
 */
export type CommitMode = 'create' | 'reinstate' | 'renew';

export type CommitOutcome =
  /** `version`: a ledger version holding the entry (the key write's fence must be below it). */
  { ok: true; version: number } | { ok: false; reason: 'cap'; counted: string[] };

export interface CommitOptions {
  mode: CommitMode;
  /** The owner's cap of usable keys. */
  cap: number;
  now: Date;
  /** A roll: the key its new key replaces (counted as gone). */
  replaces?: Replaces | undefined;
}

/** Whether `entry` is another roll of the key `replaced` (undefined: not a roll). */
const sibling = (entry: Entry, replaced: string | undefined) =>
  replaced !== undefined && entry.replaces?.keyId === replaced;

function parse(entries: string): Record<string, Entry> {
  return JSON.parse(entries) as Record<string, Entry>;
}

/**
 * Write `record`'s entry into its owner's ledger (see {@link CommitMode}). The key item is not written here:
 * the caller writes it after this succeeds, with the fence below the version answered (see the module's
 * comment). Throws ContentionError when other calls kept winning the ledger.
 * @example const outcome = await commitToLedger(tables, record, { mode: 'create', cap: 10, now: new Date() });
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
    const known = entries[record.keyId];
    if (known && options.mode === 'create') return { ok: true, version: stored.version };
    if (!known || options.mode !== 'renew') {
      const setAside = options.replaces?.keyId;
      // A roll sets aside the key it replaces and the other rolls of that key: one of them at most gets a key.
      const counted = () =>
        Object.entries(entries)
          .filter(([id, entry]) => id !== record.keyId && id !== setAside && !sibling(entry, setAside))
          .map(([id]) => id);
      if (counted().length >= options.cap) {
        await prune(tables, entries, { version: stored.version, except: record.keyId, now });
      }
      if (counted().length >= options.cap) return { ok: false, reason: 'cap', counted: counted() };
    }
    const reinstated = options.mode === 'create' ? {} : { reinstated: now };
    entries[record.keyId] = known
      ? { ...known, ...reinstated }
      : { record, touched: now, ...reinstated, ...(options.replaces && { replaces: options.replaces }) };
    if (await tables.writeLedger(record.owner, JSON.stringify(entries), stored.version)) {
      return { ok: true, version: stored.version + 1 };
    }
  }
  throw new ContentionError(`the ledger of owner ${record.owner} stayed contended`);
}

/** Whether a call may still be writing what `entry` is for: its key item, or the write making it usable. */
const inFlight = (entry: Entry, keyWritten: boolean, now: number) =>
  now - (keyWritten ? (entry.reinstated ?? Number.NEGATIVE_INFINITY) : entry.touched) < IN_FLIGHT_MS;

/** A roll entry whose old key names another successor: its key is never created (see *Rolls that lose*). */
const lostRoll = (entry: Entry, stored: ReadonlyMap<string, KeyRecord>) => {
  const rolledTo = entry.replaces && stored.get(entry.replaces.keyHash)?.rolledTo;
  return rolledTo !== undefined && rolledTo !== entry.record.keyId;
};

/**
 * Drop the entries of keys that are refused now, each after fencing its key at the version read (a revoked
 * key frees its place at once), and the entries of rolls that lost (no fence: their keys are never created);
 * finish what interrupted calls left unwritten (roll forward). What a call may still be writing
 * ({@link IN_FLIGHT_MS}) is left to it. The caller's ledger write (over `version`) persists the drops.
 */
async function prune(
  tables: AdminTables,
  entries: Record<string, Entry>,
  at: { version: number; except: string; now: number },
): Promise<void> {
  const others = Object.entries(entries).filter(([keyId]) => keyId !== at.except);
  const stored = await tables.keysByHash(
    others.flatMap(([, entry]) => [
      entry.record.keyHash,
      ...(entry.replaces ? [entry.replaces.keyHash] : []),
    ]),
  );
  for (const [keyId, entry] of others) {
    let record = stored.get(entry.record.keyHash);
    if (!record && lostRoll(entry, stored)) delete entries[keyId];
    if (!(keyId in entries) || inFlight(entry, record !== undefined, at.now)) continue;
    if (!record) {
      const written = await writeKey(tables, entry.record, entry.replaces);
      if (!written.ok) {
        delete entries[keyId];
        continue;
      }
      record = written.record;
    }
    if (keyAccepted(record, at.now)) continue;
    if (await tables.fenceKey(record.keyHash, at.version, new Date(at.now))) delete entries[keyId];
  }
}

/**
 * What {@link writeKey} wrote: the key as stored, and for a roll the key it replaces as marked; or nothing,
 * when another roll of the same key came first (`lost`: this roll's key is never created).
 */
export type Written = { ok: true; record: KeyRecord; old?: KeyRecord } | { ok: false; reason: 'lost' };

/**
 * A new key's hash is already stored, under another key id: nothing is written over the stored key. Issued keys
 * never meet it in practice (132 random bits); an answer of 500 (the call may be retried: a retry draws a new
 * key) is what the admin API gives.
 */
export class KeyCollisionError extends Error {
  override name = 'KeyCollisionError';
  constructor(keyId: string) {
    super(`a key with the hash of ${keyId} exists already, under another key id`);
  }
}

/**
 * The key writes that follow a ledger entry (or stand alone, for a key without an owner): for a roll, first
 * the old key marked rolled to the new one, then the new key item — none when the old key was rolled to
 * another key first (the roll lost). Repeating them is harmless (a retry, a roll-forward). Throws
 * {@link KeyCollisionError} when the key's hash is stored under another key id.
 * @example const written = await writeKey(tables, record);
 */
export async function writeKey(
  tables: AdminTables,
  record: KeyRecord,
  replaces?: Replaces,
): Promise<Written> {
  let old: KeyRecord | undefined;
  if (replaces) {
    old = await tables.markRolled(replaces.keyHash, record.keyId, replaces.expires);
    if (!old) return { ok: false, reason: 'lost' };
  }
  const stored = await tables.createKey(record);
  if (stored !== 'created' && stored?.keyId !== record.keyId) {
    // 132 random bits never collide in practice; if they did, failing beats overwriting someone's key.
    throw new KeyCollisionError(record.keyId);
  }
  return { ok: true, record: stored === 'created' ? record : stored, ...(old && { old }) };
}

/**
 * Drop the entries of rolls that lost from an owner's ledger (their keys are never created, so no fence is
 * needed). Left in place when other calls keep winning the ledger: the next prune drops them.
 * @example await dropLostRolls(tables, 'user_42', [record.keyId]);
 */
export async function dropLostRolls(tables: AdminTables, owner: string, keyIds: readonly string[]) {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    const stored = await tables.readLedger(owner);
    const entries = parse(stored.entries);
    const present = keyIds.filter((keyId) => keyId in entries);
    if (present.length === 0) return;
    for (const keyId of present) delete entries[keyId];
    if (await tables.writeLedger(owner, JSON.stringify(entries), stored.version)) return;
  }
}

/**
 * Write the key items the owner's ledger holds but the keys table lacks (calls interrupted between their
 * writes, older than {@link IN_FLIGHT_MS}), so a listing shows every key the cap counts; drop the entries of
 * such rolls that lost. `listed`: the key ids
 * a listing read meanwhile (read beside the ledger: only keys it did not find are looked up). True when it
 * wrote a key item (the listing is then read again).
 */
export async function rollForward(
  tables: AdminTables,
  owner: string,
  at: { now: Date; listed: Promise<ReadonlySet<string>> },
): Promise<boolean> {
  const due = Object.values(parse((await tables.readLedger(owner)).entries)).filter(
    (entry) => at.now.getTime() - entry.touched >= IN_FLIGHT_MS,
  );
  if (due.length === 0) return false;
  const listed = await at.listed;
  const unseen = due.filter((entry) => !listed.has(entry.record.keyId));
  if (unseen.length === 0) return false;
  const stored = await tables.keysByHash(unseen.map((entry) => entry.record.keyHash));
  const missing = unseen.filter((entry) => !stored.has(entry.record.keyHash));
  const lost: string[] = [];
  for (const entry of missing) {
    if (!(await writeKey(tables, entry.record, entry.replaces)).ok) lost.push(entry.record.keyId);
  }
  if (lost.length > 0) await dropLostRolls(tables, owner, lost);
  return missing.length > lost.length;
}

/**
 * Enter keys brought over from another system (import) into their owner's ledger, whatever the cap (see
 * "Imports" above): an owner over the cap comes over whole, and the commits above then refuse it another key
 * until it holds fewer. An entry already there (an import run again, or resumed after it was cut) stays as it
 * is. Written over the version read, as every ledger write; the caller writes the key items after it. Answers
 * the records the ledger holds for the keys, by key id.
 * @example const held = await enterImported(tables, 'acme', records, new Date());
 */
export async function enterImported(
  tables: AdminTables,
  owner: string,
  records: readonly KeyRecord[],
  now: Date,
): Promise<Map<string, KeyRecord>> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    const stored = await tables.readLedger(owner);
    const entries = parse(stored.entries);
    const held = new Map<string, KeyRecord>();
    let added = false;
    for (const record of records) {
      const known = entries[record.keyId];
      if (!known) {
        entries[record.keyId] = { record, touched: now.getTime() };
        added = true;
      }
      held.set(record.keyId, known?.record ?? record);
    }
    if (!added || (await tables.writeLedger(owner, JSON.stringify(entries), stored.version))) return held;
  }
  throw new ContentionError(`the ledger of owner ${owner} stayed contended`);
}

/** The bytes an entry for `record` takes in its owner's ledger (the import checks that every ledger still fits). */
export function entryBytes(record: KeyRecord): number {
  return Buffer.byteLength(`${JSON.stringify(record.keyId)}:${JSON.stringify({ record, touched: 0 })},`) + 12;
}
