/**
 * `npm run keys -- import FILE`: a JSON Lines file of keys already issued (admin/import/line.ts), checked whole
 * before anything is written, then written in batches (batch.ts). Two passes over the file, each a stream:
 * memory holds no line for longer than it is looked at — only each key's hash with its line (duplicates), the
 * old system's ids (duplicates), a load per owner, a byte of state per line, and the problems kept up to a cap
 * (counted in full). The file is read, never echoed: no problem shows what a line held.
 *
 * Run again, it writes nothing twice: a key in the table already is compared, never overwritten — the same as
 * its line (`already_there`: a run resumed after it was cut, or a second run), or different (`conflict`, the
 * fields named: changed here since, or in the file). Key ids derive from the hashes, so a key whose writes a
 * cut run began (its ledger entry) is finished with the same id.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, statSync } from 'node:fs';
import { keyAccepted } from '../../tables/keys.js';
import type { AdminContext } from '../actions.js';
import type { FieldProblem } from '../errors.js';
import {
  addLoad,
  bounded,
  compared,
  counted,
  type KeyOutcome,
  type OwnerAfter,
  type OwnerLoad,
  ownersAfter,
  retried,
  storedKeys,
  writeKeys,
} from './batch.js';
import { type ImportLine, type LineContext, parseImportLine } from './line.js';

/** A line longer than this is refused unread (a key's line is a few hundred bytes). */
export const MAX_LINE_BYTES = 16 * 1024;
/** Lines compared with the table per batch (BatchGetItem takes 100 keys), and written per batch. */
const BATCH = 100;
const WRITE_BATCH = 200;
/** Batches in flight at once: compared (each one BatchGetItem), written (each its ledger and key writes). */
const COMPARING = 4;
const WRITING = 2;
/** Problems and conflicts kept to be shown (all are counted). */
const KEPT = 200;
/** How often a long import says how far it got. */
const PROGRESS_MS = 2_000;

/** One line of a file, as read: its number (1-based) and text, or why it was not read. */
interface FileLine {
  number: number;
  text?: string;
  unreadable?: string;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function lineOf(number: number, bytes: Buffer | undefined): FileLine {
  if (!bytes) return { number, unreadable: `is longer than ${MAX_LINE_BYTES} bytes` };
  try {
    let text = decoder.decode(bytes);
    if (number === 1 && text.startsWith('\uFEFF')) text = text.slice(1);
    return { number, text: text.endsWith('\r') ? text.slice(0, -1) : text };
  } catch {
    return { number, unreadable: 'is not UTF-8' };
  }
}

/**
 * The lines of `path` as they stream in, each at most MAX_LINE_BYTES (a longer one is skipped, not held), the
 * file's bytes fed to `digest` on the way.
 */
async function* fileLines(path: string, digest: Hash): AsyncGenerator<FileLine> {
  let parts: Buffer[] = [];
  let size = 0;
  let number = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    digest.update(chunk);
    let start = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, end);
      const whole = size + piece.length <= MAX_LINE_BYTES ? Buffer.concat([...parts, piece]) : undefined;
      yield lineOf(++number, whole);
      parts = [];
      size = 0;
      start = end + 1;
    }
    const rest = chunk.subarray(start);
    size += rest.length;
    parts = size <= MAX_LINE_BYTES ? [...parts, rest] : [];
  }
  if (size > 0) yield lineOf(++number, size <= MAX_LINE_BYTES ? Buffer.concat(parts) : undefined);
}

/** A byte of state per line: not a key to write (0), a key to write (1). */
class LinesToWrite {
  #bytes = new Uint8Array(1024);
  add(line: number): void {
    if (line >= this.#bytes.length) {
      const grown = new Uint8Array(Math.max(line + 1, this.#bytes.length * 2));
      grown.set(this.#bytes);
      this.#bytes = grown;
    }
    this.#bytes[line] = 1;
  }
  has(line: number): boolean {
    return this.#bytes[line] === 1;
  }
}

export interface ImportReport {
  file: string;
  /** Lines read, blank ones aside. */
  lines: number;
  dry_run: boolean;
  /** Keys to write: not in the table yet. */
  to_import: number;
  /** Of those: revoked (come over refused), expired (likewise), and partner keys given the default limits. */
  revoked: number;
  expired: number;
  default_limits: number;
  /** In the table already, as the line says. */
  already_there: number;
  /** In the table already, different from the line: left as they are. */
  conflict_count: number;
  conflicts: { line: number; key_id: string; differs: string[] }[];
  /** Lines refused (nothing is written when there is one), and up to 200 of them with their problems. */
  refused_count: number;
  refused: { line: number; problems: FieldProblem[] }[];
  /** Owners of the keys to write; those that will hold more usable keys than the cap. */
  owners: number;
  cap: number;
  owners_over_cap: { owner: string; usable_keys: number }[];
  /** Keys written by this run (null: none were to be, or a dry run); those found written meanwhile. */
  imported: number | null;
  seconds: number;
}

/** Everything the check pass keeps while it streams the file. */
interface Check {
  /** A context whose calls end by a deadline of their own (one per batch of calls). */
  fresh: () => AdminContext;
  context: LineContext;
  report: ImportReport;
  /** Each key's hash → its line: a duplicate is refused, and the write pass finds the line it checked. */
  seen: Map<string, number>;
  externalIds: Map<string, number>;
  loads: Map<string, OwnerLoad>;
  /** An owner's first line with a key to write: where a ledger that would not fit is reported. */
  ownerLines: Map<string, { first: number; count: number }>;
  pending: { number: number; line: ImportLine }[];
  toWrite: LinesToWrite;
  /** The comparisons in flight (COMPARING at most). */
  comparing: ReturnType<typeof bounded>;
}

function refuse(check: Check, line: number, problems: FieldProblem[]): void {
  check.report.refused_count++;
  if (check.report.refused.length < KEPT) check.report.refused.push({ line, problems });
}

/** A line's problems, or its check passed: JSON, a key line, not a duplicate of an earlier one (key or old id). */
function lineProblems(
  check: Check,
  { number, text, unreadable }: FileLine,
): FieldProblem[] | ImportLine | undefined {
  if (unreadable) return [{ field: 'line', problem: unreadable }];
  if (text === undefined || text.trim() === '') return undefined;
  check.report.lines++;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return [{ field: 'line', problem: 'is not JSON: one JSON object a line' }];
  }
  const parsed = parseImportLine(value, check.context);
  if (!parsed.ok) return parsed.problems;
  const { record } = parsed.value;
  const first = check.seen.get(record.keyHash);
  if (first !== undefined) return [{ field: 'key', problem: `is the key of line ${first}` }];
  check.seen.set(record.keyHash, number);
  const external = record.externalId === undefined ? undefined : check.externalIds.get(record.externalId);
  if (external !== undefined) return [{ field: 'external_id', problem: `is the id of line ${external}` }];
  if (record.externalId !== undefined) check.externalIds.set(record.externalId, number);
  return parsed.value;
}

/** Check a line: refused with its problems, or kept to be compared with the table. */
function checkLine(check: Check, line: FileLine): void {
  const checked = lineProblems(check, line);
  if (Array.isArray(checked)) refuse(check, line.number, checked);
  else if (checked) check.pending.push({ number: line.number, line: checked });
}

/** Compare the pending lines with the table (one BatchGetItem, beside up to COMPARING - 1 others). */
function comparePending(check: Check): Promise<void> {
  const { pending } = check;
  check.pending = [];
  if (pending.length === 0) return Promise.resolve();
  // Its context (and deadline) made when it starts, not while it waits for its turn.
  return check.comparing.add(() => retried(() => compareBatch(check, pending, check.fresh())));
}

/** The lines of one batch against what the table holds: to write, there as they say, or different. */
async function compareBatch(
  check: Check,
  pending: readonly { number: number; line: ImportLine }[],
  ctx: AdminContext,
): Promise<void> {
  const { report, context } = check;
  const stored = await storedKeys(
    ctx.tables,
    pending.map(({ line }) => line),
  );
  for (const { number, line } of pending) {
    const found = compared(stored.get(line.record.keyHash), line);
    if (found?.outcome === 'already_there') report.already_there++;
    else if (found?.outcome === 'conflict') {
      report.conflict_count++;
      if (report.conflicts.length < KEPT)
        report.conflicts.push({ line: number, key_id: found.keyId, differs: found.differs });
    } else {
      report.to_import++;
      check.toWrite.add(number);
      if (line.record.status === 'revoked') report.revoked++;
      else if (!keyAccepted(line.record, context.now.getTime())) report.expired++;
      if (line.defaultLimits) report.default_limits++;
      if (counted(line.record, context.now)) {
        addLoad(check.loads, line.record);
        const lines = check.ownerLines.get(line.record.owner) ?? { first: number, count: 0 };
        lines.first = Math.min(lines.first, number);
        lines.count++;
        check.ownerLines.set(line.record.owner, lines);
      }
    }
  }
}

/** The owners' ledgers after the import: those that would not fit refuse their lines; those over the cap are said. */
async function checkOwners(check: Check): Promise<void> {
  const { report } = check;
  const { tooBig, overCap } = await ownersAfter(() => check.fresh().tables, check.loads, report.cap);
  report.owners = check.loads.size;
  report.owners_over_cap = overCap.map(({ owner, keys }) => ({ owner, usable_keys: keys }));
  for (const { owner, keys } of tooBig as OwnerAfter[]) {
    const lines = check.ownerLines.get(owner)!;
    const problem = `${owner} would hold ${keys} usable keys (its ${lines.count} lines refused), more than its ledger (one DynamoDB item) holds: import some of them revoked, or without an owner`;
    report.refused_count += lines.count;
    if (report.refused.length < KEPT)
      report.refused.push({ line: lines.first, problems: [{ field: 'owner', problem }] });
  }
}

/** How a long import says how far it got (stderr): at most every PROGRESS_MS. */
export type Progress = (text: string) => void;

function throttled(progress: Progress): Progress {
  let last = performance.now();
  return (text) => {
    if (performance.now() - last < PROGRESS_MS) return;
    last = performance.now();
    progress(text);
  };
}

/** What an import is run with: the file, a context per batch (each with its own deadline), the clock. */
export interface ImportRun {
  file: string;
  dryRun: boolean;
  /** A fresh context for each batch: its table calls end by a deadline of their own (ADMIN_DEADLINE_MS). */
  ctx: () => AdminContext;
  now: Date;
  progress: Progress;
}

/** The check pass: every line read and checked, the keys compared with the table, the owners' ledgers read. */
async function checkFile(run: ImportRun, report: ImportReport): Promise<Check & { digest: string }> {
  const check: Check = {
    fresh: run.ctx,
    context: { now: run.now, partnerDefaults: run.ctx().settings.partnerDefaults },
    report,
    seen: new Map(),
    externalIds: new Map(),
    loads: new Map(),
    ownerLines: new Map(),
    pending: [],
    toWrite: new LinesToWrite(),
    comparing: bounded(COMPARING),
  };
  const digest = createHash('sha256');
  const progress = throttled(run.progress);
  for await (const line of fileLines(run.file, digest)) {
    checkLine(check, line);
    if (check.pending.length >= BATCH) {
      await comparePending(check);
      progress(`checked ${line.number.toLocaleString('en-US')} lines`);
    }
  }
  await comparePending(check);
  await check.comparing.done();
  report.conflicts.sort((a, b) => a.line - b.line);
  await checkOwners(check);
  return { ...check, digest: digest.digest('hex') };
}

/** The file changed between the passes: what was checked is not what would be written. */
export class FileChangedError extends Error {
  override name = 'FileChangedError';
}

/** The write pass: the file read again, each key to write checked again (the same key on the same line), in batches. */
async function writeFile(
  run: ImportRun,
  check: Check & { digest: string },
  report: ImportReport,
): Promise<void> {
  const changed = () =>
    new FileChangedError(
      `${run.file} changed while it was imported: run the import again (it writes nothing twice)`,
    );
  const digest = createHash('sha256');
  const progress = throttled(run.progress);
  let batch: ImportLine[] = [];
  let written = 0;
  const writing = bounded(WRITING);
  const write = () => {
    const lines = batch;
    batch = [];
    return writing.add(async () => {
      const outcomes: KeyOutcome[] = await retried(() => writeKeys(() => run.ctx().tables, lines, run.now));
      // Not in the table when the file was checked: there now as its line says, it was written by this run
      // (a batch tried again finds what its first try wrote), or by another run at the same time.
      written += outcomes.filter((outcome) => outcome.outcome !== 'conflict').length;
      for (const outcome of outcomes) if (outcome.outcome === 'conflict') report.conflict_count++;
      progress(
        `imported ${written.toLocaleString('en-US')} of ${report.to_import.toLocaleString('en-US')} keys`,
      );
    });
  };
  for await (const { number, text } of fileLines(run.file, digest)) {
    if (!check.toWrite.has(number)) continue;
    const parsed = text === undefined ? undefined : parseImportLine(JSON.parse(text), check.context);
    if (!parsed?.ok || check.seen.get(parsed.value.record.keyHash) !== number) throw changed();
    batch.push(parsed.value);
    if (batch.length >= WRITE_BATCH) await write();
  }
  if (batch.length > 0) await write();
  await writing.done();
  report.imported = written;
  if (digest.digest('hex') !== check.digest) throw changed();
}

/**
 * Import a JSON Lines file of keys: check every line (nothing is written when one is refused), then, unless a
 * dry run, write the keys not in the table yet. Throws on a table fault (a run cut short is finished by
 * running it again) and when the file changed between the passes.
 * @example const report = await importFile({ file: 'keys.jsonl', dryRun: true, ctx, now: new Date(), progress: console.error });
 */
export async function importFile(run: ImportRun): Promise<ImportReport> {
  const started = performance.now();
  const report: ImportReport = {
    file: run.file,
    lines: 0,
    dry_run: run.dryRun,
    to_import: 0,
    revoked: 0,
    expired: 0,
    default_limits: 0,
    already_there: 0,
    conflict_count: 0,
    conflicts: [],
    refused_count: 0,
    refused: [],
    owners: 0,
    cap: run.ctx().settings.maxKeysPerOwner,
    owners_over_cap: [],
    imported: null,
    seconds: 0,
  };
  const before = statSync(run.file);
  const check = await checkFile(run, report);
  report.refused.sort((a, b) => a.line - b.line);
  if (report.refused_count === 0 && !run.dryRun && report.to_import > 0) {
    const now = statSync(run.file);
    if (now.size !== before.size || now.mtimeMs !== before.mtimeMs) {
      throw new FileChangedError(`${run.file} changed while it was checked: run the import again`);
    }
    await writeFile(run, check, report);
  }
  report.seconds = Math.round((performance.now() - started) / 100) / 10;
  return report;
}

const plural = (count: number, one: string, many = `${one}s`) =>
  `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;

/** The parts of `to import`: what comes over refused, and partner keys given the default limits. */
function toImportNotes(report: ImportReport): string {
  const notes = [
    report.revoked > 0 ? `${report.revoked} revoked` : '',
    report.expired > 0 ? `${report.expired} expired` : '',
  ].filter(Boolean);
  const refused = notes.length ? `${notes.join(', ')}: they come over refused` : '';
  const defaults =
    report.default_limits > 0
      ? `${plural(report.default_limits, 'partner key')} given the default limits`
      : '';
  const all = [refused, defaults].filter(Boolean).join('; ');
  return all ? ` (${all})` : '';
}

/** What an import found and did, as `npm run keys -- import` prints it (never a key, never a line's text). */
export function reportText(report: ImportReport): string {
  const lines = [`${report.file}: ${plural(report.lines, 'line')}`];
  if (report.refused_count > 0) {
    lines.push(`  refused: ${plural(report.refused_count, 'line')}: nothing written`);
    for (const { line, problems } of report.refused)
      lines.push(`    line ${line}: ${problems.map((p) => `${p.field} ${p.problem}`).join('; ')}`);
    if (report.refused_count > report.refused.length)
      lines.push(`    … and ${plural(report.refused_count - report.refused.length, 'more line')}`);
    return lines.join('\n');
  }
  lines.push(`  to import:     ${plural(report.to_import, 'key')}${toImportNotes(report)}`);
  lines.push(`  already there: ${plural(report.already_there, 'key')} (as the file says)`);
  if (report.conflict_count > 0) {
    lines.push(
      `  different:     ${plural(report.conflict_count, 'key')} in the table already, not as the file says: left as they are`,
    );
    for (const { line, key_id, differs } of report.conflicts)
      lines.push(`    line ${line}: ${key_id} differs in ${differs.join(', ')}`);
  }
  const over = report.owners_over_cap;
  lines.push(
    `  owners:        ${report.owners}${over.length ? `, ${over.length} over the cap of ${report.cap}: they come over whole, and get no new key until they hold fewer than ${report.cap} usable keys` : ''}`,
  );
  for (const { owner, usable_keys } of over) lines.push(`    ${owner}: ${usable_keys} usable keys`);
  if (report.dry_run) lines.push('dry run: nothing written');
  else if (report.imported !== null)
    lines.push(`imported ${plural(report.imported, 'key')} in ${report.seconds} s`);
  else lines.push('nothing to import');
  return lines.join('\n');
}
