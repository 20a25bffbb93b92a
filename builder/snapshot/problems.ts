/** Validation problems: where (file, record, field) and why, printed one per line. */

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
 * One line per problem, stable enough for a publisher to grep and for tests to match.
 * @example formatProblem({ file: 'modules.json', id: 7, field: 'hp', reason: 'must be a positive integer (got -4)' })
 * // → 'modules.json: record 7: hp: must be a positive integer (got -4)'
 */
export function formatProblem(problem: Problem): string {
  const where = [problem.file];
  if (problem.id !== undefined) where.push(`record ${problem.id}`);
  else if (problem.index !== undefined) where.push(`record at index ${problem.index}`);
  if (problem.field !== undefined) where.push(problem.field);
  return `${where.join(': ')}: ${problem.reason}`;
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
