/**
 * Record fragments: every record of the snapshot serialised once, as the `"key":<json>` fragments of its
 * kind's schema (FRAGMENTS in store/schema.ts). Variants share these buffers, so a module that appears in
 * sixty lists is stringified once.
 */
import stringify from 'fast-json-stable-stringify';
import {
  FRAGMENTS,
  MANUFACTURER_FIELDS,
  MODULE_FIELDS,
  STANDARD_FIELDS,
  TAG_FIELDS,
} from '../../store/schema.js';
import { fragment, type PackedRecord, packStrings, type RecordFragments } from '../../store/segments.js';
import type { Manufacturer, Module, Standard, Tag } from '../snapshot/snapshot.js';

/** A field value as JSON with a stable key order inside objects (plain JSON.stringify for scalars, faster). */
function json(value: unknown): string {
  return typeof value === 'object' && value !== null ? stringify(value) : JSON.stringify(value);
}

function fieldFragments<T>(record: T, fields: readonly (keyof T & string)[]): Buffer[] {
  return fields.map((field) => fragment(field, json(record[field])));
}

/**
 * Keys of the closed nested records (validation refuses any other key and any missing one), in code-unit
 * order: what fast-json-stable-stringify gives. Their values are strings, numbers or null.
 */
const JACK_KEYS = ['name', 'signal'];
const PANEL_KEYS = ['color', 'hp', 'name'];
const TAG_KEYS = ['id', 'name', 'type'];

/**
 * JSON of an array of closed records with `keys` in that order: exactly `json(records)` for validated records
 * (a test compares them on every fixture and generated module), written directly because it is the hottest
 * serialisation of a build (three arrays a module).
 * @example closedJson([{ signal: 'cv', name: 'In' }], ['name', 'signal']) // → '[{"name":"In","signal":"cv"}]'
 */
export function closedJson(records: readonly object[], keys: readonly string[]): string {
  let out = '[';
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as Record<string, unknown>;
    out += i === 0 ? '{"' : ',{"';
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k]!;
      out += `${k === 0 ? '' : ',"'}${key}":${JSON.stringify(record[key])}`;
    }
    out += '}';
  }
  return `${out}]`;
}

/** The public form of a tag, as modules carry it in `tags`. */
function tagRecord(tag: Tag): { id: number; name: string; type: Tag['type'] } {
  return { id: tag.id, name: tag.name, type: tag.type };
}

/** `"key":` of every module fragment, serialised once. */
const MODULE_KEYS = FRAGMENTS.module.map((key) => `${JSON.stringify(key)}:`);

/**
 * The JSON of each tag as modules carry it in `tags`, by id: serialised once per build, not once per module.
 * @example tagJsonById([{ id: 3, name: 'VCO', type: 'source' }]).get(3) // → '{"id":3,"name":"VCO","type":"source"}'
 */
export function tagJsonById(tags: readonly Tag[]): Map<number, string> {
  return new Map(tags.map((tag) => [tag.id, closedJson([tagRecord(tag)], TAG_KEYS).slice(1, -1)]));
}

/**
 * Fragments of one module, packed: the fields of MODULE_FIELDS in order, then ins, outs, tags, panels.
 * `tagJson` (from {@link tagJsonById}) resolves its tag ids (validated to exist).
 * @example moduleFragments(module, tagJsonById(tags)).bytes.toString() // → '"id":42"name":"VCO"…'
 */
export function moduleFragments(module: Module, tagJson: ReadonlyMap<number, string>): PackedRecord {
  // Strings first, one buffer at the end: a 25,000-module build makes 350,000 fragments.
  const fields = MODULE_FIELDS.map((field, k) => `${MODULE_KEYS[k]}${json(module[field])}`);
  const tagIds = module.tag_ids.length > 1 ? [...module.tag_ids].sort((a, b) => a - b) : module.tag_ids;
  const relations = [
    closedJson(module.ins, JACK_KEYS),
    closedJson(module.outs, JACK_KEYS),
    `[${tagIds.map((id) => tagJson.get(id)!).join(',')}]`,
    closedJson(module.panels, PANEL_KEYS),
  ].map((value, r) => `${MODULE_KEYS[MODULE_FIELDS.length + r]}${value}`);
  const fragments = [...fields, ...relations];
  if (fragments.length !== FRAGMENTS.module.length) throw new Error('module fragment schema drifted');
  return packStrings(fragments);
}

/**
 * Fragments of a manufacturer as the manufacturers list shows it.
 * @example manufacturerFragments({ id: 1, name: 'Doepfer', country: 'DE' })[2].toString() // → '"country":"DE"'
 */
export function manufacturerFragments(manufacturer: Manufacturer): RecordFragments {
  return fieldFragments(manufacturer, MANUFACTURER_FIELDS);
}

/**
 * Fragments of a manufacturer detail: its own fields (`manufacturer`, its packed list record), then
 * `modules`, the top-level fields of its modules (packed, already ordered by id by the caller) as `{…}`
 * records, copied from their fragments.
 * @example manufacturerDetailFragments(maker, [packed]).at(-1).toString() // → '"modules":[{"id":1,…}]'
 */
export function manufacturerDetailFragments(
  manufacturer: PackedRecord,
  modules: readonly PackedRecord[],
): RecordFragments {
  const fields = MODULE_FIELDS.length;
  const head = '"modules":[';
  // Brackets and the commas between records; per record its braces, its fields and the commas between them.
  let size = head.length + 1 + Math.max(0, modules.length - 1);
  for (const { offsets } of modules) size += 2 + offsets[fields]! + fields - 1;
  const bytes = Buffer.allocUnsafe(size); // every byte is written below
  let at = bytes.write(head, 'latin1');
  for (let i = 0; i < modules.length; i++) {
    const { bytes: record, offsets } = modules[i]!;
    if (i > 0) bytes[at++] = COMMA;
    bytes[at++] = OPEN_BRACE;
    for (let k = 0; k < fields; k++) {
      if (k > 0) bytes[at++] = COMMA;
      at += record.copy(bytes, at, offsets[k], offsets[k + 1]);
    }
    bytes[at++] = CLOSE_BRACE;
  }
  bytes[at++] = CLOSE_BRACKET;
  if (at !== size) throw new Error('manufacturer detail size drifted');
  const own = manufacturer.offsets;
  const ownFragments = Array.from({ length: own.length - 1 }, (_, k) =>
    manufacturer.bytes.subarray(own[k], own[k + 1]),
  );
  return [...ownFragments, bytes];
}

const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Fragments of a standard.
 * @example standardFragments({ id: 0, name: 'Eurorack 3U', height_mm: 128.5 })[0].toString() // → '"id":0'
 */
export function standardFragments(standard: Standard): RecordFragments {
  return fieldFragments(standard, STANDARD_FIELDS);
}

/**
 * Fragments of a tag: exactly id, name, type.
 * @example tagFragments({ id: 3, name: 'VCO', type: 'source' })[2].toString() // → '"type":"source"'
 */
export function tagFragments(tag: Tag): RecordFragments {
  return fieldFragments(tagRecord(tag), TAG_FIELDS);
}

/**
 * Index positions of `records` in name order (docs/api.md#parameters: natural, ties by id), computed once.
 * @example nameOrder([{ id: 1, name: 'VCO 10' }, { id: 2, name: 'vco 2' }], nameCollator) // → [1, 0]
 */
export function nameOrder(
  records: readonly { id: number; name: string }[],
  compare: Intl.Collator,
): number[] {
  const order = records.map((_, i) => i);
  // Comparing collation keys is the hot part of a 25k-module build; the collator object is reused.
  return order.sort(
    (a, b) => compare.compare(records[a]!.name, records[b]!.name) || records[a]!.id - records[b]!.id,
  );
}

/**
 * Index positions of `records` in id order.
 * @example idOrder([{ id: 9 }, { id: 4 }]) // → [1, 0]
 */
export function idOrder(records: readonly { id: number }[]): number[] {
  return records.map((_, i) => i).sort((a, b) => records[a]!.id - records[b]!.id);
}
