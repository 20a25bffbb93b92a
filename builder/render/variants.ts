/**
 * Module list variants: every combination of the filters manufacturer_id, hp, standard and tag that
 * matches at least one module. Enumerated from the modules (each belongs to 8 subsets of
 * {manufacturer_id, hp, standard} × no tag or one of its tags), never from the cross product of values.
 */
import { type ModuleFilters, variantKey } from '../../store/schema.js';
import type { Module } from '../snapshot/snapshot.js';

export interface ModuleVariant {
  /** Canonical variant key for sort=id; the sort=name key differs only in `sort`. */
  filters: ModuleFilters;
  /** Module positions in id order. */
  byId: number[];
  /** Module positions in name order. */
  byName: number[];
}

/**
 * Group modules into their list variants. Members come out already ordered because modules are visited in
 * id order, then in name order: no per-variant sort, only two passes over the memberships.
 * @example
 * const variants = moduleVariants(modules, idOrder(modules), nameOrder(modules, nameCollator));
 * variants.get('modules?manufacturer_id=3&sort=id')?.byName // → positions of maker 3's modules by name
 */
export function moduleVariants(
  modules: readonly Module[],
  byId: readonly number[],
  byName: readonly number[],
): Map<string, ModuleVariant> {
  // Grouping keys are numbers (a mixed radix over dense value indexes, 0 = filter absent): 800,000 Map
  // lookups on fresh strings were the slowest part of a 25k-module render.
  const manufacturerIndex = denseIndex(modules.map((m) => m.manufacturer_id));
  const hpIndex = denseIndex(modules.map((m) => m.hp));
  const standardIndex = denseIndex(modules.map((m) => m.standard));
  const tagIndex = denseIndex(modules.flatMap((m) => m.tag_ids));
  const radixH = hpIndex.size + 1;
  const radixS = standardIndex.size + 1;
  const radixT = tagIndex.size + 1;
  if (manufacturerIndex.size * radixH * radixS * radixT >= Number.MAX_SAFE_INTEGER) {
    throw new RangeError('too many distinct filter values to group');
  }
  const variants = new Map<number, ModuleVariant>();
  const memberships: ModuleVariant[][] = new Array(modules.length);
  for (const position of byId) {
    const module = modules[position]!;
    const m = manufacturerIndex.get(module.manufacturer_id)!;
    const h = hpIndex.get(module.hp)!;
    const s = standardIndex.get(module.standard)!;
    const joined: ModuleVariant[] = [];
    for (let t = -1; t < module.tag_ids.length; t++) {
      const tag = t < 0 ? undefined : module.tag_ids[t]!;
      const tagKey = tag === undefined ? 0 : tagIndex.get(tag)!;
      for (let subset = 0; subset < 8; subset++) {
        const key =
          (((subset & 1 ? m : 0) * radixH + (subset & 2 ? h : 0)) * radixS + (subset & 4 ? s : 0)) * radixT +
          tagKey;
        let variant = variants.get(key);
        if (!variant) {
          const filters: ModuleFilters = {};
          if (subset & 1) filters.manufacturer_id = module.manufacturer_id;
          if (subset & 2) filters.hp = module.hp;
          if (subset & 4) filters.standard = module.standard;
          if (tag !== undefined) filters.tag = tag;
          variant = { filters, byId: [], byName: [] };
          variants.set(key, variant);
        }
        variant.byId.push(position);
        joined.push(variant);
      }
    }
    memberships[position] = joined;
  }
  for (const position of byName) {
    for (const variant of memberships[position]!) variant.byName.push(position);
  }
  const byKey = new Map<string, ModuleVariant>();
  for (const variant of variants.values()) byKey.set(variantKey('modules', variant.filters, 'id'), variant);
  return byKey;
}

/** 1-based dense index of each distinct value (0 stands for "no filter"). */
function denseIndex(values: readonly number[]): Map<number, number> {
  const index = new Map<number, number>();
  for (const value of values) if (!index.has(value)) index.set(value, index.size + 1);
  return index;
}
