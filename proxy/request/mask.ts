/**
 * Fragment masks: which of a record's stored fragments an answer keeps (bit k = fragment k of the record kind's
 * schema in store/schema.ts). `fields` and `include` become one mask in the plan; composing a page keeps the
 * fragments whose bit is set.
 */
import {
  FRAGMENTS,
  MODULE_FIELDS,
  type ModuleField,
  type ModuleRelation,
  type RecordKind,
} from '../../store/schema.js';

/** Mask of every fragment of a record kind. */
export function fullMask(kind: RecordKind): number {
  return (1 << FRAGMENTS[kind].length) - 1;
}

/** Mask for module fields/include: `id` always, `fields` (all when undefined), the included relations. */
export function moduleMask(
  fields: readonly ModuleField[] | undefined,
  include: readonly ModuleRelation[],
): number {
  let mask = 1; // id
  const schema = FRAGMENTS.module as readonly string[];
  for (const name of fields ?? MODULE_FIELDS) mask |= 1 << schema.indexOf(name);
  for (const name of include) mask |= 1 << schema.indexOf(name);
  return mask;
}
