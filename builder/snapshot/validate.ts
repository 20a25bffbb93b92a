/**
 * Snapshot validation (docs/design.md#what-the-builder-guarantees, 4): every problem at once, before anything is written.
 * Records are closed: unknown fields are refused, and fields that would publish images, prices or store data
 * are refused with a reason of their own, at any depth.
 */

import { didYouMean } from '../../cli/suggest.js';
import { JACK_SIGNALS, TAG_TYPES } from '../../store/schema.js';
import { type TextRuleOptions, textProblem } from '../../store/text.js';
import { describeValue, PROBLEM_CAP, type Problem, ProblemList } from './problems.js';
import { SNAPSHOT_FILES, type Snapshot } from './snapshot.js';

/** Keys that would carry images, prices or shop data; never published, so never accepted. */
export const FORBIDDEN_KEY =
  /image|img|photo|picture|filename|url|price|cost|currency|store|shop|listing|sku/i;
/**
 * Whole values that are links or image file names (a panel "name" of `front.png` is an image reference).
 * Narrow on purpose: prose that merely contains "//" or a dot stays valid.
 */
export const FORBIDDEN_VALUE =
  /^(?:(?:https?|ftp):\/\/|\/\/[\w-]+\.|www\.[\w-]+\.|data:image\/)\S*$|^\S+\.(?:png|jpe?g|gif|webp|svg|avif|bmp|tiff?|heic)$/i;

export const FORBIDDEN_KEY_REASON = 'forbidden field: images, prices and store data are never published';
export const FORBIDDEN_VALUE_REASON =
  'forbidden value: looks like a link or an image file name; images and links are never published';

/** A field check: a reason when the value is wrong. */
type Check = (value: unknown) => string | undefined;
type Schema = Record<string, Check>;

const isInteger = (v: unknown): v is number => Number.isSafeInteger(v);
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const got = (v: unknown) => ` (got ${describeValue(v)})`;

/** An integer too large for a double to hold exactly (written with an exponent: exact.ts refuses the others). */
const unsafe = (v: unknown) => Number.isInteger(v) && !Number.isSafeInteger(v);
const beyondSafe = (what: string, v: unknown) =>
  `must be ${what} of at most 9007199254740991, the largest a double holds exactly (got number ${(v as number).toExponential()})`;
const positiveInteger: Check = (v) =>
  isInteger(v) && v > 0
    ? undefined
    : unsafe(v) && (v as number) > 0
      ? beyondSafe('a positive integer', v)
      : `must be a positive integer${got(v)}`;
const nonnegativeInteger: Check = (v) =>
  isInteger(v) && v >= 0
    ? undefined
    : unsafe(v) && (v as number) > 0
      ? beyondSafe('a nonnegative integer', v)
      : `must be a nonnegative integer${got(v)}`;
/** Why a non-empty string is not printable text (store/text.ts: the rule key labels follow too), or undefined. */
const printableText = (v: string, options?: TextRuleOptions) => {
  const problem = textProblem(v, options);
  return problem === undefined ? undefined : `must be printable text: it ${problem}`;
};
const text: Check = (v) =>
  typeof v === 'string' && v.trim() !== '' ? printableText(v) : `must be a non-empty string${got(v)}`;
/** Text or null; `lineBreaks`: prose, which may hold line breaks (a description). */
const nullableText =
  (options?: TextRuleOptions): Check =>
  (v) =>
    v === null
      ? undefined
      : typeof v === 'string' && v.trim() !== ''
        ? printableText(v, options)
        : `must be a non-empty string or null${got(v)}`;
const nullable =
  (check: Check, what: string): Check =>
  (v) =>
    v === null || check(v) === undefined ? undefined : `must be ${what} or null${got(v)}`;
const positiveNumber: Check = (v) =>
  isNumber(v) && v > 0 ? undefined : `must be a positive number${got(v)}`;
const nonnegativeNumber: Check = (v) =>
  isNumber(v) && v >= 0 ? undefined : `must be a nonnegative number${got(v)}`;
const oneOf =
  (values: readonly string[], orNull: boolean): Check =>
  (v) =>
    (typeof v === 'string' && values.includes(v)) || (orNull && v === null)
      ? undefined
      : `must be one of ${values.join(', ')}${orNull ? ', or null' : ''}${got(v)}`;
const countryCode: Check = (v) =>
  v === null || (typeof v === 'string' && /^[A-Z]{2}$/.test(v))
    ? undefined
    : `must be an ISO 3166-1 alpha-2 code (two capital letters) or null${got(v)}`;

const JACK: Schema = { name: text, signal: oneOf(JACK_SIGNALS, false) };
const PANEL: Schema = { name: text, hp: positiveInteger, color: nullableText() };

const SCHEMAS = {
  standards: { id: nonnegativeInteger, name: text, height_mm: positiveNumber },
  tags: { id: positiveInteger, name: text, type: oneOf(TAG_TYPES, true) },
  manufacturers: { id: positiveInteger, name: text, country: countryCode },
  modules: {
    id: positiveInteger,
    name: text,
    manufacturer_id: positiveInteger,
    hp: positiveInteger,
    standard: nonnegativeInteger,
    depth_mm: nullable(positiveNumber, 'a positive number'),
    power_12v_ma: nullable(nonnegativeNumber, 'a nonnegative number'),
    power_m12v_ma: nullable(nonnegativeNumber, 'a nonnegative number'),
    power_5v_ma: nullable(nonnegativeNumber, 'a nonnegative number'),
    description: nullableText({ lineBreaks: true }),
    // Lists are checked element by element below; here only their shape.
    tag_ids: (v) => (Array.isArray(v) ? undefined : `must be an array of tag ids${got(v)}`),
    ins: (v) => (Array.isArray(v) ? undefined : `must be an array of jacks${got(v)}`),
    outs: (v) => (Array.isArray(v) ? undefined : `must be an array of jacks${got(v)}`),
    panels: (v) => (Array.isArray(v) ? undefined : `must be an array of panels${got(v)}`),
  },
} as const satisfies Record<keyof Snapshot, Schema>;

export type Kind = keyof Snapshot;
type Raw = Record<string, unknown>;

const isRecord = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The problems of the record being checked, by field path. Once the file's problems reach the cap, `keeping`
 * is false: a problem is then only counted, and a check skips building what would be thrown away (a field
 * path, a "did you mean" among the fields).
 */
class Report {
  file = '';
  id: number | undefined;
  index = 0;
  constructor(readonly problems: ProblemList) {}

  get keeping(): boolean {
    return this.problems.keeping;
  }

  add(field: string, reason: string): void {
    const { file, id, index } = this;
    this.problems.add(id !== undefined ? { file, id, field, reason } : { file, index, field, reason });
  }

  /** Count a problem without building it (beyond the cap). */
  count(): void {
    this.problems.countMore(1);
  }
}

/** Only a string holding one of these characters can be a link or an image file name. */
const MAY_BE_FORBIDDEN_VALUE = /[./:]/;

/**
 * Report forbidden keys and values anywhere inside `value`; `path` is the field path so far. Every string of
 * a snapshot passes through here, so the common case (nothing to report) builds no path and no copy.
 */
function findForbidden(value: unknown, path: string, report: Report): void {
  if (typeof value === 'string') {
    if (MAY_BE_FORBIDDEN_VALUE.test(value) && FORBIDDEN_VALUE.test(value.trim()))
      report.add(path, `${FORBIDDEN_VALUE_REASON}${got(value)}`);
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i];
      // Numbers, booleans and null hold nothing forbidden.
      if (typeof item === 'object' ? item !== null : typeof item === 'string')
        findForbidden(item, `${path}[${i}]`, report);
    }
  } else if (isRecord(value)) {
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const item = value[key];
      if (FORBIDDEN_KEY.test(key)) report.add(path ? `${path}.${key}` : key, FORBIDDEN_KEY_REASON);
      else if (typeof item === 'object' ? item !== null : typeof item === 'string')
        findForbidden(item, path ? `${path}.${key}` : key, report);
    }
  }
}

/** Check `record` against a closed schema; nested field names are prefixed with `path`. */
/** Each schema's field names, listed once (a record's check runs for every record of a file). */
const FIELDS = new WeakMap<Schema, readonly string[]>();
const fieldsOf = (schema: Schema): readonly string[] => {
  const known = FIELDS.get(schema);
  if (known) return known;
  const fields = Object.keys(schema);
  FIELDS.set(schema, fields);
  return fields;
};

function checkFields(record: Raw, schema: Schema, path: string, report: Report) {
  for (const key in record) {
    if (Object.hasOwn(record, key) && !Object.hasOwn(schema, key) && !FORBIDDEN_KEY.test(key)) {
      if (!report.keeping) {
        report.count();
        continue;
      }
      const fields = fieldsOf(schema);
      const missing = fields.filter((field) => !Object.hasOwn(record, field));
      // The suggestion is among the fields the record lacks: a misspelt field leaves its right name missing.
      const hint = didYouMean(key, missing.length > 0 ? missing : fields);
      report.add(`${path}${key}`, `unknown field${hint || ` (allowed: ${fields.join(', ')})`}`);
    }
  }
  for (const field of fieldsOf(schema)) {
    if (!Object.hasOwn(record, field)) {
      if (report.keeping) report.add(`${path}${field}`, 'is missing');
      else report.count();
      continue;
    }
    const reason = schema[field]!(record[field]);
    if (reason) report.add(`${path}${field}`, reason);
  }
}

function checkModuleLists(record: Raw, report: Report): void {
  for (const relation of ['ins', 'outs', 'panels'] as const) {
    const list = record[relation];
    if (!Array.isArray(list)) continue;
    const schema = relation === 'panels' ? PANEL : JACK;
    for (let i = 0; i < list.length; i++) {
      const item: unknown = list[i];
      if (!isRecord(item)) report.add(`${relation}[${i}]`, `must be an object${got(item)}`);
      else checkFields(item, schema, `${relation}[${i}].`, report);
    }
  }
  const tagIds = record.tag_ids;
  if (!Array.isArray(tagIds)) return;
  const seen = new Set<unknown>();
  for (let i = 0; i < tagIds.length; i++) {
    const tagId: unknown = tagIds[i];
    const reason = positiveInteger(tagId);
    if (reason) report.add(`tag_ids[${i}]`, reason);
    else if (seen.has(tagId)) report.add(`tag_ids[${i}]`, `repeats tag ${tagId}`);
    seen.add(tagId);
  }
}

/** What validation knows of a file's records: valid ids, for references (undefined: not known). */
interface FileCheck {
  ids: ReadonlySet<number> | undefined;
}

/** Module references to the other files; only well-typed values are looked up (a wrong type was reported). */
function checkReferences(record: Raw, known: Partial<Record<Kind, FileCheck>>, report: Report): void {
  // A file that failed to load cannot say what exists: no reference into it is reported.
  const dangling = (kind: Kind, value: unknown) => {
    const ids = known[kind]?.ids;
    return ids !== undefined && isInteger(value) && !ids.has(value);
  };
  const say = (kind: Kind, value: unknown, what: string) =>
    `references ${what} ${value}, which is not in ${SNAPSHOT_FILES[kind]}`;
  if (dangling('manufacturers', record.manufacturer_id)) {
    report.add('manufacturer_id', say('manufacturers', record.manufacturer_id, 'manufacturer'));
  }
  if (dangling('standards', record.standard)) {
    report.add('standard', say('standards', record.standard, 'standard'));
  }
  const tagIds = record.tag_ids;
  if (!Array.isArray(tagIds)) return;
  for (let i = 0; i < tagIds.length; i++) {
    if (dangling('tags', tagIds[i])) report.add(`tag_ids[${i}]`, say('tags', tagIds[i], 'tag'));
  }
}

/**
 * The records of one file, checked one at a time as they are read (builder/snapshot/load.ts) or handed over
 * (validateSnapshot): each against its closed schema, its id against the ones before, a module's references
 * against the files checked before it. Problems go to the file's own list (counted in full, kept up to the cap).
 */
export class FileValidator {
  readonly problems = new ProblemList();
  readonly #schema: Schema;
  readonly #firstIndexOfId = new Map<number, number>();
  readonly #report = new Report(this.problems);
  /** A record was refused unread: its id is unknown. */
  #unread = false;

  constructor(
    readonly kind: Kind,
    readonly known: Partial<Record<Kind, FileCheck>>,
  ) {
    this.#schema = SCHEMAS[kind];
    this.#report.file = SNAPSHOT_FILES[kind];
  }

  /** The file is not an array (`value`, or a description of it when it was not parsed): no record to read. */
  notArray(got: string): void {
    this.#unread = true;
    this.problems.add({
      file: SNAPSHOT_FILES[this.kind],
      reason: `must be a JSON array of records (got ${got})`,
    });
  }

  /**
   * A problem of the record at `index` as a whole, or of its `field`, found before it could be checked (it was
   * not read: too large, or not readable exactly). A record not read has an id
   * anyone can know: references into this file are no longer judged (they would be reported wrongly).
   */
  refuseRecord(index: number, reason: string, field?: string): void {
    this.#unread = true;
    const file = SNAPSHOT_FILES[this.kind];
    this.problems.add(field === undefined ? { file, index, reason } : { file, index, field, reason });
  }

  /** A problem of the file's whole value (not an array), in `field` of it when it has one. */
  refuseFile(reason: string, field?: string): void {
    this.#unread = true;
    const file = SNAPSHOT_FILES[this.kind];
    this.problems.add(field === undefined ? { file, reason } : { file, field, reason });
  }

  /**
   * Check the record at `index`. `ownFieldsChecked`: a module validated before by this same builder, unchanged
   * (builder/publish/reuse.ts), whose own fields are not checked again; its id and references are.
   */
  record(record: unknown, index: number, ownFieldsChecked = false): void {
    if (!isRecord(record)) {
      // Not an object: it has no id, and the others' ids are all known.
      this.problems.add({
        file: SNAPSHOT_FILES[this.kind],
        index,
        reason: `must be an object${got(record)}`,
      });
      return;
    }
    const id = this.#schema.id!(record.id) === undefined ? (record.id as number) : undefined;
    const report = this.#report;
    report.id = id;
    report.index = index;
    const modules = this.kind === 'modules';
    if (!ownFieldsChecked) {
      findForbidden(record, '', report);
      checkFields(record, this.#schema, '', report);
      if (modules) checkModuleLists(record, report);
    }
    if (modules) checkReferences(record, this.known, report);
    if (id === undefined) return;
    const first = this.#firstIndexOfId.get(id);
    if (first !== undefined)
      report.add('id', `duplicate id (the record at index ${index} repeats the id of index ${first})`);
    else this.#firstIndexOfId.set(id, index);
  }

  /**
   * What the other files may reference: the ids of this one's records — unless a record could not be read,
   * when no one can say what exists (references into the file are then not judged, as for a file not read).
   */
  finish(): FileCheck {
    return { ids: this.#unread ? undefined : new Set(this.#firstIndexOfId.keys()) };
  }
}

/** The parsed content of each snapshot file; a file that could not be read or parsed is absent. */
export type RawSnapshot = Partial<Record<Kind, unknown>>;

/** The files in the order they are checked: each one's references point at files before it. */
export const KINDS = ['standards', 'tags', 'manufacturers', 'modules'] as const satisfies readonly Kind[];

export type ValidateOutcome =
  | { ok: true; snapshot: Snapshot }
  /** `problems`: the first {@link PROBLEM_CAP}; `problemCount`: all of them. */
  | { ok: false; problems: Problem[]; problemCount: number };

/**
 * Validate parsed snapshot files. Returns the typed snapshot, or the problems found (every one counted, the
 * first {@link PROBLEM_CAP} kept).
 * @example
 * const result = validateSnapshot({ standards: [], tags: [], manufacturers: [], modules: [{ id: 0 }] });
 * // → { ok: false, problems: [{ file: 'modules.json', index: 0, field: 'id', reason: 'must be a positive integer (got number 0)' }, …], problemCount: 14 }
 */
export function validateSnapshot(raw: RawSnapshot): ValidateOutcome {
  const problems = new ProblemList();
  const known: Partial<Record<Kind, FileCheck>> = {};
  for (const kind of KINDS) {
    if (!(kind in raw)) continue;
    const file = new FileValidator(kind, known);
    const records = raw[kind];
    if (Array.isArray(records)) {
      for (let index = 0; index < records.length; index++) file.record(records[index], index);
      known[kind] = file.finish();
    } else {
      file.notArray(describeValue(records));
    }
    problems.append(file.problems);
  }
  if (problems.count > 0 || KINDS.some((kind) => !(kind in raw))) {
    return { ok: false, problems: problems.kept, problemCount: problems.count };
  }
  return { ok: true, snapshot: raw as Snapshot };
}
