/**
 * The owner's cap (admin/ledger.ts's claim) against dynalite, under interleavings fast-check picks: batches
 * of concurrent calls — issue (some with a shared Idempotency-Key), enable, revoke, roll, expiry lifted, put
 * later or brought forward — whose DynamoDB calls run one at a time in an order drawn by fast-check; calls
 * cut at a random point (before a write lands, or after it landed with its answer lost: a crash) and rolled
 * forward later; calls whose clock is a window ahead of the others' (a call held past the ledger's window,
 * seen from the calls it overlaps); rolls of one key at once (some with an Idempotency-Key of their own), and
 * rolls cut between their writes. After every batch: the usable keys of the owner that are not rolled away
 * are at most the cap, every usable key has its ledger entry, every rolled-away key has an expiry, no key
 * names a predecessor that was rolled to another key (a roll that lost left no key: nothing to enable or
 * roll), and a roll refused as already rolled left neither its ledger entry (unless a call of the batch was
 * cut) nor its Idempotency-Key record; at the end, once the window has passed, a listing shows every key the
 * ledger counts.
 *
 * LEDGER_PROPERTY_RUNS (default 20) runs more; a failure prints its seed and the shrunk scenario.
 */
import { hash } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as actions from '../../admin/actions.js';
import { AdminTables } from '../../admin/dynamo.js';
import { IN_FLIGHT_MS } from '../../admin/ledger.js';
import { adminSettings } from '../../admin/settings.js';
import { FREE_TIER_LIMITS, type KeyRecord, keyAccepted } from '../../tables/keys.js';
import { COUNTERS_SCHEMA } from '../../tables/schema.js';
import { type DynamoFixture, dynamoFixture } from '../helpers/dynamo.js';

let db: DynamoFixture;
let tables: AdminTables;

beforeAll(async () => {
  db = await dynamoFixture();
  tables = new AdminTables(db);
});
afterAll(async () => {
  await db?.dispose();
});

/** What a crashed call throws at the point it is cut: nothing more of it is sent. */
class Crash extends Error {
  override name = 'Crash';
}

interface Pending {
  command: number;
  run: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** Cut here: before the call is sent, or after it landed (its answer lost). */
  cut?: 'before' | 'after';
}

/**
 * Runs every DynamoDB call of the calls in flight one at a time, in the order `choices` picks: at each turn,
 * the waiting call of the command it names (else the oldest waiting), so each interleaving is one fast-check
 * value (and shrinks).
 */
class Interleaving {
  readonly #pending: Pending[] = [];
  readonly #dead = new Set<number>();

  /** The tables of one call: each of its DynamoDB calls waits its turn; cut at its `cut.at`-th call. */
  tablesFor(command: number, cut?: { at: number; landed: boolean }): AdminTables {
    let calls = 0;
    const queue = this.#pending;
    const dead = this.#dead;
    return new Proxy(tables, {
      get(target, name) {
        const value = Reflect.get(target, name, target);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          new Promise((resolve, reject) => {
            if (dead.has(command)) return reject(new Crash('after its crash'));
            calls++;
            const at = cut && calls === cut.at ? (cut.landed ? 'after' : 'before') : undefined;
            const run = () => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            queue.push({ command, run, resolve, reject, ...(at && { cut: at }) });
          });
      },
    });
  }

  /** Run the waiting calls until `done` settles. */
  async drive(done: Promise<unknown>, choices: readonly number[]): Promise<void> {
    let settled = false;
    void done.finally(() => {
      settled = true;
    });
    for (let turn = 0; !settled; turn++) {
      await new Promise((resolve) => setImmediate(resolve));
      if (this.#pending.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 1)); // a call backing off before its next try
        continue;
      }
      const preferred = choices[turn % choices.length];
      const pick = Math.max(
        0,
        this.#pending.findIndex((call) => call.command === preferred),
      );
      const [call] = this.#pending.splice(pick, 1);
      await this.#run(call!);
    }
  }

  async #run(call: Pending): Promise<void> {
    if (call.cut) this.#dead.add(call.command);
    if (call.cut === 'before') return call.reject(new Crash('before its write'));
    try {
      const value = await call.run();
      if (call.cut === 'after') call.reject(new Crash('after its write landed'));
      else call.resolve(value);
    } catch (error) {
      call.reject(error);
    }
  }
}

type Op =
  | { op: 'issue'; idempotencyKey: 'a' | 'b' | undefined }
  | { op: 'enable' | 'revoke'; key: number }
  | { op: 'roll'; key: number; hours: number; idempotent: boolean }
  | { op: 'expiry'; key: number; to: 'never' | 'sooner' | 'later' };

interface Command {
  op: Op;
  /** The call's clock runs a window ahead of the batch's (it overlaps a call held past the window). */
  ahead: boolean;
  cut: { at: number; landed: boolean } | undefined;
}

const key = fc.nat(7);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('issue' as const),
      idempotencyKey: fc.constantFrom('a' as const, 'b' as const, undefined),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constantFrom('enable' as const, 'revoke' as const), key }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('roll' as const),
      key,
      hours: fc.constantFrom(1, 24),
      idempotent: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('expiry' as const),
      key,
      to: fc.constantFrom('never' as const, 'sooner' as const, 'later' as const),
    }),
  },
);
const commandArb: fc.Arbitrary<Command> = fc.record({
  op: opArb,
  ahead: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  cut: fc.option(fc.record({ at: fc.integer({ min: 1, max: 10 }), landed: fc.boolean() }), { freq: 4 }),
});
const scenarioArb = fc.record({
  cap: fc.integer({ min: 1, max: 3 }),
  batches: fc.array(
    fc.record({
      commands: fc.array(commandArb, { minLength: 1, maxLength: 3 }),
      minutes: fc.constantFrom(0, 5, 45, 150),
    }),
    { minLength: 2, maxLength: 6 },
  ),
  choices: fc.array(fc.nat(2), { minLength: 1, maxLength: 64 }),
});

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer T> ? T : never;
const plain = (op: Op, ahead = false): Command => ({ op, ahead, cut: undefined });
/** The first call runs until `first` of its DynamoDB calls are done, the second whole, then the first again. */
const firstThenSecond = (first: number) => [...Array(first).fill(0), ...Array(12).fill(1), 0];

/**
 * The interleavings of issue 36's findings and of what this test found, run first: an enable, or an expiry
 * lifted, whose key write comes after a call a window ahead took the owner's last place; a roll landing
 * between an expiry change's read and its write.
 */
const FINDINGS: Scenario[] = [
  {
    cap: 1,
    batches: [
      { commands: [plain({ op: 'issue', idempotencyKey: undefined })], minutes: 0 },
      { commands: [plain({ op: 'revoke', key: 0 })], minutes: 0 },
      {
        commands: [plain({ op: 'enable', key: 0 }), plain({ op: 'issue', idempotencyKey: undefined }, true)],
        minutes: 5,
      },
    ],
    choices: firstThenSecond(3),
  },
  {
    cap: 1,
    batches: [
      { commands: [plain({ op: 'issue', idempotencyKey: undefined })], minutes: 0 },
      { commands: [plain({ op: 'expiry', key: 0, to: 'sooner' })], minutes: 0 },
      {
        commands: [
          plain({ op: 'expiry', key: 0, to: 'never' }),
          plain({ op: 'issue', idempotencyKey: undefined }, true),
        ],
        minutes: 45,
      },
    ],
    choices: firstThenSecond(3),
  },
  {
    cap: 2,
    batches: [
      { commands: [plain({ op: 'issue', idempotencyKey: undefined })], minutes: 0 },
      {
        commands: [
          plain({ op: 'expiry', key: 0, to: 'never' }),
          plain({ op: 'roll', key: 0, hours: 24, idempotent: false }),
        ],
        minutes: 5,
      },
    ],
    choices: firstThenSecond(3),
  },
  // Issue 47: rolls of one key at once left the losers' keys behind, revoked (ghosts that could be enabled).
  {
    cap: 3,
    batches: [
      { commands: [plain({ op: 'issue', idempotencyKey: undefined })], minutes: 0 },
      {
        commands: [
          plain({ op: 'roll', key: 0, hours: 24, idempotent: true }),
          plain({ op: 'roll', key: 0, hours: 1, idempotent: false }),
          plain({ op: 'roll', key: 0, hours: 24, idempotent: true }),
        ],
        minutes: 0,
      },
      {
        commands: [
          plain({ op: 'enable', key: 1 }),
          plain({ op: 'roll', key: 2, hours: 1, idempotent: true }),
        ],
        minutes: 5,
      },
    ],
    choices: [0, 1, 2],
  },
  // A roll cut once its entry landed, or once its old key was marked, with another roll of the key at once.
  ...[3, 4].map(
    (at): Scenario => ({
      cap: 2,
      batches: [
        { commands: [plain({ op: 'issue', idempotencyKey: undefined })], minutes: 0 },
        {
          commands: [
            {
              op: { op: 'roll', key: 0, hours: 24, idempotent: false },
              ahead: false,
              cut: { at, landed: true },
            },
            plain({ op: 'roll', key: 0, hours: 1, idempotent: true }),
          ],
          minutes: 0,
        },
        {
          commands: [
            plain({ op: 'issue', idempotencyKey: undefined }),
            plain({ op: 'roll', key: 0, hours: 1, idempotent: false }),
          ],
          minutes: 5,
        },
      ],
      choices: firstThenSecond(at),
    }),
  ),
];

/** The owner's keys as stored (no roll-forward), oldest first. */
async function ownerKeys(owner: string): Promise<KeyRecord[]> {
  return (await tables.ownerKeys(owner, 100)).records;
}

/** The Idempotency-Key a roll sends (one of its own, so a refusal is its own), and what the roll asks for. */
const rollIdempotency = (name: string, target: string, hours: number) => ({
  key: name,
  fingerprint: `roll ${target} ${hours}`,
});

/** One call of a batch, with its own clock and its own tables; `name`: unique to the call. */
function run(owner: string, keys: KeyRecord[], command: { op: Op; ctx: actions.AdminContext; name: string }) {
  const { op, ctx } = command;
  const now = ctx.now();
  const target = keys.length > 0 && 'key' in op ? keys[op.key % keys.length]!.keyId : undefined;
  const idempotency = (name: string | undefined) =>
    name && { key: `${owner}-${name}`, fingerprint: 'same request' };
  if (op.op === 'issue' || !target) {
    const idem = op.op === 'issue' ? idempotency(op.idempotencyKey) : undefined;
    return actions.issue(ctx, { owner, tier: 'free', limits: { ...FREE_TIER_LIMITS } }, idem || undefined);
  }
  if (op.op === 'roll') {
    const idem = op.idempotent ? rollIdempotency(command.name, target, op.hours) : undefined;
    return actions.roll(ctx, target, { oldKeyExpires: new Date(now.getTime() + op.hours * 3_600_000) }, idem);
  }
  if (op.op === 'expiry') {
    const at = {
      never: null,
      sooner: new Date(now.getTime() + 1_800_000),
      later: new Date(now.getTime() + 48 * 3_600_000),
    };
    return actions.setExpiry(ctx, target, { expires: at[op.to] });
  }
  return op.op === 'enable' ? actions.enable(ctx, target) : actions.revoke(ctx, target);
}

interface LedgerEntry {
  replaces?: { keyId: string };
}

/**
 * The claim after a batch, at `now`: returns what breaks it (empty: it holds). `cut`: a call was cut so far
 * (an entry of a roll that lost may then wait for a prune or a listing).
 */
async function broken(owner: string, cap: number, at: { now: Date; cut: boolean }): Promise<string[]> {
  const problems: string[] = [];
  const keys = await ownerKeys(owner);
  const usable = keys.filter((record) => keyAccepted(record, at.now.getTime()));
  const counted = usable.filter((record) => record.rolledTo === undefined);
  if (counted.length > cap) problems.push(`${counted.length} usable keys not rolled away, cap ${cap}`);
  const ledger = JSON.parse((await tables.readLedger(owner)).entries) as Record<string, LedgerEntry>;
  for (const record of usable)
    if (!(record.keyId in ledger)) problems.push(`usable ${record.keyId} not in the ledger`);
  const byId = new Map(keys.map((record) => [record.keyId, record]));
  for (const record of keys) {
    if (record.rolledTo !== undefined && record.expires === undefined)
      problems.push(`rolled ${record.keyId} never expires`);
    const from = record.rolledFrom === undefined ? undefined : byId.get(record.rolledFrom);
    if (from && from.rolledTo !== record.keyId)
      problems.push(
        `${record.keyId} (${record.status}) is a ghost: ${from.keyId} was rolled to ${from.rolledTo}`,
      );
  }
  for (const [keyId, entry] of Object.entries(ledger)) {
    const rolledTo = entry.replaces && byId.get(entry.replaces.keyId)?.rolledTo;
    if (!at.cut && rolledTo !== undefined && rolledTo !== keyId)
      problems.push(
        `the ledger holds ${keyId}, a roll of ${entry.replaces!.keyId} that lost, with no call cut`,
      );
  }
  return problems;
}

/** The Idempotency-Key records left by rolls refused as already rolled (none should be). */
async function claimsOfLostRolls(
  rolls: { idempotency: { key: string } | undefined; outcome: unknown }[],
): Promise<string[]> {
  const left: string[] = [];
  for (const { idempotency, outcome } of rolls) {
    const code = (outcome as { error?: { code?: string } } | undefined)?.error?.code;
    if (!idempotency || code !== 'key_already_rolled') continue;
    const pk = `${COUNTERS_SCHEMA.claimPrefix}${hash('sha256', idempotency.key, 'hex')}`;
    if (await tables.readClaim(pk)) left.push(idempotency.key);
  }
  return left;
}

let owners = 0;

describe("the owner's cap: the claim of admin/ledger.ts under interleavings, crashes and calls held past the window", () => {
  it('holds after every batch, and a listing shows what the ledger counts once the window has passed', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ cap, batches, choices }) => {
        const owner = `ledger-${process.pid}-${++owners}`;
        const settings = adminSettings({
          KEYS_TABLE: db.keysTable,
          COUNTERS_TABLE: db.countersTable,
          ADMIN_MAX_KEYS_PER_OWNER: String(cap),
        });
        let base = Date.UTC(2026, 10, 24, 12);
        let latest = base;
        let cut = false;
        for (const [b, batch] of batches.entries()) {
          base += batch.minutes * 60_000;
          const keys = await ownerKeys(owner);
          const interleaving = new Interleaving();
          const rolls: { idempotency: { key: string } | undefined; outcome: unknown }[] = [];
          const calls = batch.commands.map((command, i) => {
            const clock = new Date(base + (command.ahead ? IN_FLIGHT_MS + 1_000 : 0));
            latest = Math.max(latest, clock.getTime());
            cut ||= command.cut !== undefined;
            const ctx = { tables: interleaving.tablesFor(i, command.cut), settings, now: () => clock };
            const name = `${owner}-roll-${b}-${i}`;
            const { op } = command;
            return run(owner, keys, { op, ctx, name }).then(
              (outcome) => {
                if (op.op === 'roll')
                  rolls.push({ idempotency: op.idempotent ? { key: name } : undefined, outcome });
              },
              (error: unknown) => {
                if (!(error instanceof Crash) && (error as Error).name !== 'ContentionError') throw error;
              },
            );
          });
          const all = Promise.all(calls);
          await interleaving.drive(all, choices);
          await all;
          expect(await broken(owner, cap, { now: new Date(latest), cut })).toEqual([]);
          expect(await claimsOfLostRolls(rolls)).toEqual([]);
        }
        // Later: the first page of a listing rolls forward what crashed calls left.
        const later = new Date(latest + IN_FLIGHT_MS + 1_000);
        const ctx = { tables, settings, now: () => later };
        const listed = await actions.list(ctx, { owner, limit: 100 });
        const ledger = JSON.parse((await tables.readLedger(owner)).entries) as Record<string, unknown>;
        expect(listed.ok).toBe(true);
        const ids = new Set(listed.ok ? listed.records.map((record) => record.keyId) : []);
        expect(Object.keys(ledger).filter((id) => !ids.has(id))).toEqual([]);
        expect(await broken(owner, cap, { now: later, cut: false })).toEqual([]);
      }),
      {
        numRuns: Number(process.env.LEDGER_PROPERTY_RUNS ?? 20),
        endOnFailure: true,
        examples: FINDINGS.map((scenario) => [scenario]),
      },
    );
  }, 300_000);
});
