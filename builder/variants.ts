/**
 * Module list variants: every combination of the filters manufacturer_id, hp, standard and tag that
 * matches at least one module. Enumerated from the modules (each belongs to 8 subsets of
 * {manufacturer_id, hp, standard} × no tag or one of its tags), never from the cross product of values.
 */
import { type ModuleFilters, variantKey } from '../proxy/format.js';
import type { Module } from './snapshot.js';

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
  const variants = new Map<string, ModuleVariant>();
  const memberships: ModuleVariant[][] = new Array(modules.length);
  for (const position of byId) {
    const module = modules[position]!;
    const joined: ModuleVariant[] = [];
    for (const tag of [undefined, ...module.tag_ids]) {
      for (let subset = 0; subset < 8; subset++) {
        // A cheap grouping key; the canonical variant key is built once per variant below.
        const m = subset & 1 ? module.manufacturer_id : '';
        const h = subset & 2 ? module.hp : '';
        const s = subset & 4 ? module.standard : '';
        const key = `${m},${h},${s},${tag ?? ''}`;
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
