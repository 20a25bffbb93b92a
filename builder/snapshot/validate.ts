/**
 * Snapshot validation (docs/design.md#what-the-builder-guarantees, 4): every problem at once, before anything is written.
 * Records are closed: unknown fields are refused, and fields that would publish images, prices or store data
 * are refused with a reason of their own, at any depth.
 */

import { didYouMean } from '../../cli/suggest.js';
import { JACK_SIGNALS, TAG_TYPES } from '../../store/schema.js';
import { describeValue, type Problem } from './problems.js';
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

const positiveInteger: Check = (v) =>
  isInteger(v) && v > 0 ? undefined : `must be a positive integer${got(v)}`;
const nonnegativeInteger: Check = (v) =>
  isInteger(v) && v >= 0 ? undefined : `must be a nonnegative integer${got(v)}`;
const text: Check = (v) =>
  typeof v === 'string' && v.trim() !== '' ? undefined : `must be a non-empty string${got(v)}`;
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
const PANEL: Schema = { name: text, hp: positiveInteger, color: nullable(text, 'a non-empty string') };

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
    description: nullable(text, 'a non-empty string'),
    // Lists are checked element by element below; here only their shape.
    tag_ids: (v) => (Array.isArray(v) ? undefined : `must be an array of tag ids${got(v)}`),
    ins: (v) => (Array.isArray(v) ? undefined : `must be an array of jacks${got(v)}`),
    outs: (v) => (Array.isArray(v) ? undefined : `must be an array of jacks${got(v)}`),
    panels: (v) => (Array.isArray(v) ? undefined : `must be an array of panels${got(v)}`),
  },
} as const satisfies Record<keyof Snapshot, Schema>;

type Kind = keyof Snapshot;
type Raw = Record<string, unknown>;

const isRecord = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

class Collector {
  readonly problems: Problem[] = [];
  constructor(readonly file: string) {}
  add(where: { id?: number | undefined; index: number }, field: string | undefined, reason: string): void {
    const problem: Problem = { file: this.file, reason };
    if (where.id !== undefined) problem.id = where.id;
    else problem.index = where.index;
    if (field !== undefined) problem.field = field;
    this.problems.push(problem);
  }
}

/** Only a string holding one of these characters can be a link or an image file name. */
const MAY_BE_FORBIDDEN_VALUE = /[./:]/;

/**
 * Report forbidden keys and values anywhere inside `value`; `path` is the field path so far. Every string of
 * a snapshot passes through here, so the common case (nothing to report) builds no path and no copy.
 */
function findForbidden(value: unknown, path: string, report: (field: string, reason: string) => void): void {
  if (typeof value === 'string') {
    if (MAY_BE_FORBIDDEN_VALUE.test(value) && FORBIDDEN_VALUE.test(value.trim()))
      report(path, `${FORBIDDEN_VALUE_REASON}${got(value)}`);
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
      if (FORBIDDEN_KEY.test(key)) report(path ? `${path}.${key}` : key, FORBIDDEN_KEY_REASON);
      else if (typeof item === 'object' ? item !== null : typeof item === 'string')
        findForbidden(item, path ? `${path}.${key}` : key, report);
    }
  }
}

/** Check `record` against a closed schema; nested field names are prefixed with `path`. */
function checkFields(
  record: Raw,
  schema: Schema,
  path: string,
  report: (field: string, reason: string) => void,
) {
  for (const key in record) {
    if (Object.hasOwn(record, key) && !Object.hasOwn(schema, key) && !FORBIDDEN_KEY.test(key)) {
      const fields = Object.keys(schema);
      const missing = fields.filter((field) => !Object.hasOwn(record, field));
      // The suggestion is among the fields the record lacks: a misspelt field leaves its right name missing.
      const hint = didYouMean(key, missing.length > 0 ? missing : fields);
      report(`${path}${key}`, `unknown field${hint || ` (allowed: ${fields.join(', ')})`}`);
    }
  }
  for (const field in schema) {
    if (!Object.hasOwn(record, field)) {
      report(`${path}${field}`, 'is missing');
      continue;
    }
    const reason = schema[field]!(record[field]);
    if (reason) report(`${path}${field}`, reason);
  }
}

function checkModuleLists(record: Raw, report: (field: string, reason: string) => void): void {
  for (const relation of ['ins', 'outs', 'panels'] as const) {
    const list = record[relation];
    if (!Array.isArray(list)) continue;
    const schema = relation === 'panels' ? PANEL : JACK;
    list.forEach((item, i) => {
      const path = `${relation}[${i}]`;
      if (!isRecord(item)) report(path, `must be an object${got(item)}`);
      else checkFields(item, schema, `${path}.`, report);
    });
  }
  const tagIds = record.tag_ids;
  if (!Array.isArray(tagIds)) return;
  const seen = new Set<unknown>();
  tagIds.forEach((tagId, i) => {
    const reason = positiveInteger(tagId);
    if (reason) report(`tag_ids[${i}]`, reason);
    else if (seen.has(tagId)) report(`tag_ids[${i}]`, `repeats tag ${tagId}`);
    seen.add(tagId);
  });
}

/** What validation knows of a file's records: valid ones by id, for duplicates and references. */
interface FileCheck {
  ids: Set<number>;
}

function checkFile(
  kind: Kind,
  raw: unknown,
  collector: Collector,
  known: Partial<Record<Kind, FileCheck>>,
  unchanged?: ReadonlySet<number>,
): FileCheck | undefined {
  if (!Array.isArray(raw)) {
    collector.problems.push({
      file: collector.file,
      reason: `must be a JSON array of records${got(raw)}`,
    });
    return undefined;
  }
  const schema: Schema = SCHEMAS[kind];
  const idRule = schema.id!;
  const firstIndexOfId = new Map<number, number>();
  raw.forEach((record, index) => {
    if (!isRecord(record)) {
      collector.add({ index }, undefined, `must be an object${got(record)}`);
      return;
    }
    const id = idRule(record.id) === undefined ? (record.id as number) : undefined;
    const where = { id, index };
    const report = (field: string, reason: string) => collector.add(where, field, reason);
    // A module validated unchanged by this same builder (builder/publish/reuse.ts) skips the checks of its own
    // fields; the checks between records below run for every record.
    if (!(kind === 'modules' && unchanged?.has(index))) {
      findForbidden(record, '', report);
      checkFields(record, schema, '', report);
      if (kind === 'modules') checkModuleLists(record, report);
    }
    if (kind === 'modules') checkReferences(record, known, report);
    if (id !== undefined) {
      const first = firstIndexOfId.get(id);
      if (first !== undefined)
        report('id', `duplicate id (the record at index ${index} repeats the id of index ${first})`);
      else firstIndexOfId.set(id, index);
    }
  });
  return { ids: new Set(firstIndexOfId.keys()) };
}

/** Module references to the other files; only well-typed values are looked up (a wrong type was reported). */
function checkReferences(
  record: Raw,
  known: Partial<Record<Kind, FileCheck>>,
  report: (field: string, reason: string) => void,
): void {
  const dangling = (kind: Kind, value: unknown, field: string, what: string) => {
    // A file that failed to load cannot say what exists: no reference into it is reported.
    const ids = known[kind]?.ids;
    if (ids && isInteger(value) && !ids.has(value)) {
      report(field, `references ${what} ${value}, which is not in ${SNAPSHOT_FILES[kind]}`);
    }
  };
  dangling('manufacturers', record.manufacturer_id, 'manufacturer_id', 'manufacturer');
  dangling('standards', record.standard, 'standard', 'standard');
  if (Array.isArray(record.tag_ids)) {
    record.tag_ids.forEach((tagId, i) => {
      dangling('tags', tagId, `tag_ids[${i}]`, 'tag');
    });
  }
}

/** The parsed content of each snapshot file; a file that could not be read or parsed is absent. */
export type RawSnapshot = Partial<Record<Kind, unknown>>;

const KINDS = ['standards', 'tags', 'manufacturers', 'modules'] as const satisfies readonly Kind[];

export type ValidateOutcome = { ok: true; snapshot: Snapshot } | { ok: false; problems: Problem[] };

export interface ValidateOptions {
  /**
   * Positions in modules.json of modules this same builder validated before, unchanged (builder/publish/reuse.ts
   * unchangedModules): their own fields are not checked again; their ids and references are.
   */
  unchangedModules?: ReadonlySet<number>;
}

/**
 * Validate parsed snapshot files. Returns the typed snapshot, or every problem found.
 * @example
 * const result = validateSnapshot({ standards: [], tags: [], manufacturers: [], modules: [{ id: 0 }] });
 * // → { ok: false, problems: [{ file: 'modules.json', index: 0, field: 'id', reason: 'must be a positive integer (got number 0)' }, …] }
 */
export function validateSnapshot(raw: RawSnapshot, options: ValidateOptions = {}): ValidateOutcome {
  const problems: Problem[] = [];
  const known: Partial<Record<Kind, FileCheck>> = {};
  for (const kind of KINDS) {
    if (!(kind in raw)) continue;
    const collector = new Collector(SNAPSHOT_FILES[kind]);
    const checked = checkFile(kind, raw[kind], collector, known, options.unchangedModules);
    if (checked) known[kind] = checked;
    problems.push(...collector.problems);
  }
  if (problems.length > 0 || KINDS.some((kind) => !(kind in raw))) return { ok: false, problems };
  return { ok: true, snapshot: raw as Snapshot };
}
