/** Validation problems: where (file, record, field) and why, printed one per line; counted in full, kept up to a cap. */
import { BLANKS, UNPRINTABLE } from '../../store/text.js';

export interface Problem {
  /** Snapshot file name, e.g. `modules.json`. */
  file: string;
  /** The record's id when it has a usable one. */
  id?: number;
  /** The record's position in the file when its id is unusable. */
  index?: number;
  /** Field path inside the record, e.g. `ins[2].signal`. */
  field?: string;
  reason: string;
}

/**
 * Problems kept of a refused snapshot: every problem is counted, the first this many are kept (and listed by
 * `validate`, the report and the event). A bad export can have millions (a 10 MiB `modules.json` of `{}`
 * has 49 million): keeping them all is what once took the builder to 4.4 GB.
 */
export const PROBLEM_CAP = 1000;

/**
 * Problems as they are found: the first {@link PROBLEM_CAP} kept in order, all of them counted. Appending is
 * one push or one increment; never a spread (a spread of 130,000 problems overflows the stack).
 * @example const problems = new ProblemList(); problems.add({ file: 'tags.json', reason: 'file is missing' }); problems.count // → 1
 */
export class ProblemList {
  readonly kept: Problem[] = [];
  #count = 0;
  constructor(readonly cap = PROBLEM_CAP) {}

  /** Every problem added, kept or not. */
  get count(): number {
    return this.#count;
  }

  /** Whether another problem would be kept (callers skip building one that would not). */
  get keeping(): boolean {
    return this.kept.length < this.cap;
  }

  /** Count `problem`, and keep it while there is room. */
  add(problem: Problem): void {
    this.#count++;
    if (this.kept.length >= this.cap) return;
    this.kept.push(clipped(problem));
  }

  /**
   * Count `problem` and keep it first: a problem of a whole file (too many records), found only once every
   * record was counted, matters more than any one record's.
   */
  addFirst(problem: Problem): void {
    this.#count++;
    this.kept.unshift(clipped(problem));
    if (this.kept.length > this.cap) this.kept.pop();
  }

  /** Count `count` problems that were not built (beyond the cap). */
  countMore(count: number): void {
    this.#count += count;
  }

  /** Take over another list's problems after this one's (its kept ones while there is room, all counted). */
  append(other: ProblemList): void {
    for (const problem of other.kept) {
      if (this.kept.length >= this.cap) break;
      this.kept.push(problem);
    }
    this.#count += other.count;
  }
}

/** Longest name (a file, a field path) a problem keeps; longer ones are cut (with `…`): a problem never carries unbounded input. */
export const NAME_MAX_CHARACTERS = 200;

const clipTo = (name: string, max: number) => (name.length > max ? `${name.slice(0, max)}…` : name);
/**
 * A name as a problem keeps it: cut to {@link NAME_MAX_CHARACTERS} (then `…`).
 * @example clipName('a'.repeat(300)).length // → 201
 */
export const clipName = (name: string): string => clipTo(name, NAME_MAX_CHARACTERS);

/** A problem as it is kept: its file and field cut to {@link NAME_MAX_CHARACTERS}. */
function clipped(problem: Problem): Problem {
  problem.file = clipName(problem.file);
  if (problem.field !== undefined) problem.field = clipName(problem.field);
  return problem;
}

/**
 * Characters a line shows as `\uXXXX`: every one that does not print as itself (store/text.ts UNPRINTABLE:
 * controls, line separators, bidirectional and zero-width marks — what would let a name forge or hide a line —
 * lone surrogates, private-use and unassigned code points) and the blanks that print as nothing.
 */
const ESCAPED = new RegExp(`${UNPRINTABLE.source}|${BLANKS.source}`, 'gu');

/**
 * Text from an upload (an object key, a tar entry's name, a field name) as a log line may print it: controls,
 * line separators, bidi and zero-width marks as `\uXXXX`, names cut to {@link NAME_MAX_CHARACTERS}. A name can
 * then never forge a second log line or hide part of one.
 * @example printable('modules.json\nupload x: published') // → 'modules.json\\u000aupload x: published'
 */
export function printable(text: string, max = NAME_MAX_CHARACTERS): string {
  return clipTo(text, max).replace(ESCAPED, (character) => {
    let escaped = '';
    for (let i = 0; i < character.length; i++) {
      escaped += `\\u${character.charCodeAt(i).toString(16).padStart(4, '0')}`;
    }
    return escaped;
  });
}

/**
 * One line per problem, stable enough for a publisher to grep and for tests to match; whatever a name in it
 * holds, one line ({@link printable}).
 * @example formatProblem({ file: 'modules.json', id: 7, field: 'hp', reason: 'must be a positive integer (got -4)' })
 * // → 'modules.json: record 7: hp: must be a positive integer (got -4)'
 */
export function formatProblem(problem: Problem): string {
  const where = [printable(problem.file)];
  if (problem.id !== undefined) where.push(`record ${problem.id}`);
  else if (problem.index !== undefined) where.push(`record at index ${problem.index}`);
  if (problem.field !== undefined) where.push(printable(problem.field));
  return `${where.join(': ')}: ${printable(problem.reason, Number.POSITIVE_INFINITY)}`;
}

/**
 * A short rendering of a value for messages: type and a clipped JSON form.
 * @example describeValue('8') // → 'string "8"'
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value) ?? String(value);
  const clipped = json.length > 40 ? `${json.slice(0, 37)}...` : json;
  if (value === null) return 'null';
  if (Array.isArray(value)) return `array ${clipped}`;
  return `${typeof value} ${clipped}`;
}
