/**
 * The admin API's `POST /v1/keys/import`: a batch of keys already issued, each as a line of the file import
 * (admin/import/line.ts), in one call — `{"keys": [{…}, …], "dry_run"?: true}`, at most {@link IMPORT_BATCH}
 * keys and the admin API's body limit. As Unkey's `keys.migrateKeys`: each key comes back imported with its key
 * id, or there already (the same, or different: the table is never overwritten). The batch is checked whole
 * first: one line refused (or two lines with one key) refuses the call, and nothing is written. Sent again (a
 * timeout, a 5xx), it writes nothing twice: key ids derive from the hashes, so no Idempotency-Key is needed.
 */

import type { AdminContext, Outcome } from '../actions.js';
import type { FieldProblem } from '../errors.js';
import { adminError } from '../errors.js';
import { objectOf, type Parsed, Problems } from '../validate.js';
import {
  addLoad,
  compared,
  counted,
  type KeyOutcome,
  type OwnerLoad,
  ownersAfter,
  storedKeys,
  writeKeys,
} from './batch.js';
import { type ImportLine, type LineContext, parseImportLine } from './line.js';

/** Keys per call, at most (and the body at most the admin API's 16 KiB: about 50 to 100 lines). */
export const IMPORT_BATCH = 100;

export interface ImportInput {
  lines: ImportLine[];
  dryRun: boolean;
}

/** One key's outcome, by its place in the call's `keys`. */
export type ImportedKey = { index: number; key_id: string } & (
  | { outcome: 'imported' | 'already_there' | 'to_import' }
  | { outcome: 'conflict'; differs: string[] }
);

export interface ImportResult {
  dry_run: boolean;
  imported: number;
  already_there: number;
  conflicts: number;
  keys: ImportedKey[];
  /** Owners that will hold more usable keys than the cap (they came over whole; new keys are refused them). */
  owners_over_cap: { owner: string; usable_keys: number }[];
  cap: number;
}

/** The problems of one line, named after its place: `keys[3].tier`. */
const at = (index: number, problems: readonly FieldProblem[]) =>
  problems.map(({ field, problem }) => ({
    field: field === 'line' ? `keys[${index}]` : `keys[${index}].${field}`,
    problem,
  }));

/** Lines of one call that name the same key or the same old id as an earlier one. */
function duplicates(lines: readonly (ImportLine | undefined)[]): FieldProblem[] {
  const keys = new Map<string, number>();
  const ids = new Map<string, number>();
  const problems: FieldProblem[] = [];
  lines.forEach((line, index) => {
    if (!line) return;
    const { keyHash, externalId } = line.record;
    const first = keys.get(keyHash);
    if (first !== undefined)
      problems.push({ field: `keys[${index}].key`, problem: `is the key of keys[${first}]` });
    else keys.set(keyHash, index);
    const same = externalId === undefined ? undefined : ids.get(externalId);
    if (same !== undefined)
      problems.push({ field: `keys[${index}].external_id`, problem: `is the id of keys[${same}]` });
    else if (externalId !== undefined) ids.set(externalId, index);
  });
  return problems;
}

/** `{ keys: [1 to 100 lines], dry_run? }`, every line checked, none twice. */
export function parseImportBody(body: unknown, context: LineContext): Parsed<ImportInput> {
  const problems = new Problems();
  const input = objectOf(body, ['keys', 'dry_run'], problems);
  if (input.dry_run !== undefined && typeof input.dry_run !== 'boolean')
    problems.add('dry_run', 'must be true or false');
  const keys = input.keys;
  if (!Array.isArray(keys) || keys.length < 1 || keys.length > IMPORT_BATCH) {
    problems.add('keys', `must be an array of 1 to ${IMPORT_BATCH} keys, each as a line of the import file`);
    return { ok: false, problems: problems.list };
  }
  const lines = keys.map((value, index) => {
    const parsed = parseImportLine(value, context);
    if (parsed.ok) return parsed.value;
    problems.list.push(...at(index, parsed.problems));
    return undefined;
  });
  problems.list.push(...duplicates(lines));
  if (problems.list.length > 0) return { ok: false, problems: problems.list };
  return { ok: true, value: { lines: lines as ImportLine[], dryRun: input.dry_run === true } };
}

/**
 * Import a checked batch: compared with the table, the owners' ledgers checked (an owner whose ledger would not
 * hold its keys refuses the call), then, unless a dry run, the keys not there yet written.
 * @example const outcome = await importKeys(ctx, { lines, dryRun: false });
 */
export async function importKeys(
  ctx: AdminContext,
  input: ImportInput,
): Promise<Outcome<{ result: ImportResult }>> {
  const now = ctx.now();
  const stored = await storedKeys(ctx.tables, input.lines);
  const found = input.lines.map((line) => compared(stored.get(line.record.keyHash), line));
  const fresh = input.lines.filter((_, index) => found[index] === undefined);
  const loads = new Map<string, OwnerLoad>();
  for (const { record } of fresh) if (counted(record, now)) addLoad(loads, record);
  const cap = ctx.settings.maxKeysPerOwner;
  const { tooBig, overCap } = await ownersAfter(() => ctx.tables, loads, cap);
  if (tooBig.length > 0) {
    const details = tooBig.map(({ owner, keys }) => ({
      field: `keys[${input.lines.findIndex((line) => line.record.owner === owner)}].owner`,
      problem: `${owner} would hold ${keys} usable keys, more than its ledger (one DynamoDB item) holds`,
    }));
    return {
      ok: false,
      error: adminError('invalid_request', 'An owner would hold more keys than its ledger holds.', details),
    };
  }
  const written = input.dryRun ? [] : await writeKeys(() => ctx.tables, fresh, now);
  let next = 0;
  const outcomes: KeyOutcome[] = found.map(
    (outcome, index) =>
      outcome ??
      (input.dryRun ? { outcome: 'imported', keyId: input.lines[index]!.record.keyId } : written[next++]!),
  );
  const keys = outcomes.map((outcome, index): ImportedKey => {
    const base = { index, key_id: outcome.keyId };
    if (outcome.outcome === 'conflict') return { ...base, outcome: 'conflict', differs: outcome.differs };
    const fresh = input.dryRun && found[index] === undefined;
    return { ...base, outcome: fresh ? 'to_import' : outcome.outcome };
  });
  const count = (outcome: ImportedKey['outcome']) => keys.filter((key) => key.outcome === outcome).length;
  return {
    ok: true,
    result: {
      dry_run: input.dryRun,
      imported: count('imported'),
      already_there: count('already_there'),
      conflicts: count('conflict'),
      keys,
      owners_over_cap: overCap.map(({ owner, keys: usable }) => ({ owner, usable_keys: usable })),
      cap,
    },
  };
}
