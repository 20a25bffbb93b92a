/** What the API should answer, computed straight from the snapshot (independently of the builder's code). */
import type { Module, Snapshot } from '../../builder/snapshot/snapshot.js';
import {
  MODULE_FIELDS,
  MODULE_RELATIONS,
  type ModuleField,
  type ModuleFilters,
  type ModuleRelation,
  type SortOrder,
  sortRecords,
} from '../../store/schema.js';

export function filteredModules(
  snapshot: Snapshot,
  filters: ModuleFilters,
  sort: SortOrder = 'id',
): Module[] {
  const matching = snapshot.modules.filter(
    (m) =>
      (filters.manufacturer_id === undefined || m.manufacturer_id === filters.manufacturer_id) &&
      (filters.hp === undefined || m.hp === filters.hp) &&
      (filters.standard === undefined || m.standard === filters.standard) &&
      (filters.tag === undefined || m.tag_ids.includes(filters.tag)),
  );
  return sortRecords(matching, sort);
}

/** A module as the API shows it: `id`, the fields asked for (all by default), the included relations. */
export function moduleRecord(
  snapshot: Snapshot,
  module: Module,
  fields: readonly ModuleField[] | undefined = undefined,
  include: readonly ModuleRelation[] = [],
): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const field of MODULE_FIELDS) {
    if (field === 'id' || !fields || fields.includes(field)) record[field] = module[field];
  }
  for (const relation of MODULE_RELATIONS) {
    if (!include.includes(relation)) continue;
    if (relation === 'tags') {
      record.tags = [...module.tag_ids]
        .sort((a, b) => a - b)
        .map((id) => {
          const tag = snapshot.tags.find((t) => t.id === id)!;
          return { id: tag.id, name: tag.name, type: tag.type };
        });
    } else {
      record[relation] = module[relation];
    }
  }
  return record;
}

export function manufacturerRecord(snapshot: Snapshot, id: number, withModules: boolean) {
  const m = snapshot.manufacturers.find((x) => x.id === id)!;
  const record: Record<string, unknown> = { id: m.id, name: m.name, country: m.country };
  if (withModules) {
    record.modules = filteredModules(snapshot, { manufacturer_id: id }).map((module) =>
      moduleRecord(snapshot, module),
    );
  }
  return record;
}
