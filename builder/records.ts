/**
 * Record fragments: every record of the snapshot serialised once, as the `"key":<json>` fragments of its
 * kind's schema (proxy/format.ts FRAGMENTS). Variants share these buffers, so a module that appears in
 * sixty lists is stringified once.
 */
import stringify from 'fast-json-stable-stringify';
import {
  FRAGMENTS,
  fragment,
  MANUFACTURER_FIELDS,
  MODULE_FIELDS,
  type RecordFragments,
  STANDARD_FIELDS,
  TAG_FIELDS,
} from '../proxy/format.js';
import type { Manufacturer, Module, Standard, Tag } from './snapshot.js';

/** A field value as JSON with a stable key order inside objects (plain JSON.stringify for scalars, faster). */
function json(value: unknown): string {
  return typeof value === 'object' && value !== null ? stringify(value) : JSON.stringify(value);
}

function fieldFragments<T>(record: T, fields: readonly (keyof T & string)[]): Buffer[] {
  return fields.map((field) => fragment(field, json(record[field])));
}

/**
 * Keys of the closed nested records (validation refuses any other key), in code-unit order: what
 * fast-json-stable-stringify would give, from the native serialiser (a key list orders and selects keys).
 * A test compares the two on every module of the fixture and of a generated catalogue.
 */
const JACK_KEYS = ['name', 'signal'];
const PANEL_KEYS = ['color', 'hp', 'name'];
const TAG_KEYS = ['id', 'name', 'type'];

/**
 * JSON of an array of closed records with `keys` sorted; exactly `json(records)` for validated records.
 * @example closedJson([{ signal: 'cv', name: 'In' }], ['name', 'signal']) // → '[{"name":"In","signal":"cv"}]'
 */
export function closedJson(records: readonly object[], keys: readonly string[]): string {
  return JSON.stringify(records, keys as string[]);
}

/** The public form of a tag, as modules carry it in `tags`. */
function tagRecord(tag: Tag): { id: number; name: string; type: Tag['type'] } {
  return { id: tag.id, name: tag.name, type: tag.type };
}

export interface ModuleFragments {
  /** FRAGMENTS.module: the fields of MODULE_FIELDS in order, then ins, outs, tags, panels. */
  fragments: RecordFragments;
  /** `{…}` of the top-level fields only, as a manufacturer detail's `modules` lists it. */
  topLevel: string;
}

/**
 * Fragments of one module; `tagsById` resolves its tag ids (validated to exist).
 * @example moduleFragments(module, tagsById).fragments[0].toString() // → '"id":42'
 */
export function moduleFragments(module: Module, tagsById: ReadonlyMap<number, Tag>): ModuleFragments {
  const fields = fieldFragments(module, MODULE_FIELDS);
  const tags = [...module.tag_ids].sort((a, b) => a - b).map((id) => tagRecord(tagsById.get(id)!));
  const fragments = [
    ...fields,
    fragment('ins', closedJson(module.ins, JACK_KEYS)),
    fragment('outs', closedJson(module.outs, JACK_KEYS)),
    fragment('tags', closedJson(tags, TAG_KEYS)),
    fragment('panels', closedJson(module.panels, PANEL_KEYS)),
  ];
  if (fragments.length !== FRAGMENTS.module.length) throw new Error('module fragment schema drifted');
  return { fragments, topLevel: `{${fields.map((f) => f.toString()).join(',')}}` };
}

/**
 * Fragments of a manufacturer as the manufacturers list shows it.
 * @example manufacturerFragments({ id: 1, name: 'Doepfer', country: 'DE' })[2].toString() // → '"country":"DE"'
 */
export function manufacturerFragments(manufacturer: Manufacturer): RecordFragments {
  return fieldFragments(manufacturer, MANUFACTURER_FIELDS);
}

/**
 * Fragments of a manufacturer detail: its list fragments plus `modules`, the top-level records of its
 * modules (already ordered by id by the caller).
 * @example manufacturerDetailFragments(m, ['{"id":1,…}']).at(-1).toString() // → '"modules":[{"id":1,…}]'
 */
export function manufacturerDetailFragments(
  manufacturer: Manufacturer,
  moduleTopLevels: readonly string[],
): RecordFragments {
  return [...manufacturerFragments(manufacturer), fragment('modules', `[${moduleTopLevels.join(',')}]`)];
}

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
 * Index positions of `records` in name order (DESIGN.md §2: natural, ties by id), computed once.
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
