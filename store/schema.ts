/**
 * The catalogue's records as the published objects hold them: which fields and relations each record kind
 * has and in which order its fragments are stored, the filters and sort orders of list variants, and the
 * canonical names ({@link variantKey}, {@link detailKey}) under which the index finds them.
 */

/** Module top-level fields, in the order they appear in every record. `id` is always first. */
export const MODULE_FIELDS = [
  'id',
  'name',
  'manufacturer_id',
  'hp',
  'standard',
  'depth_mm',
  'power_12v_ma',
  'power_m12v_ma',
  'power_5v_ma',
  'description',
] as const;
/** Module relations available with `include`, in record order after the fields. */
export const MODULE_RELATIONS = ['ins', 'outs', 'tags', 'panels'] as const;
export const MANUFACTURER_FIELDS = ['id', 'name', 'country'] as const;
export const MANUFACTURER_RELATIONS = ['modules'] as const;
export const STANDARD_FIELDS = ['id', 'name', 'height_mm'] as const;
export const TAG_FIELDS = ['id', 'name', 'type'] as const;
export const TAG_TYPES = [
  'nature',
  'character',
  'voice',
  'source',
  'filter',
  'modulation',
  'effect',
  'sequencing',
  'utility',
  'blank',
] as const;
export const JACK_SIGNALS = ['audio', 'cv', 'pitch', 'gate', 'trigger', 'clock', 'other'] as const;

export type ModuleField = (typeof MODULE_FIELDS)[number];
export type ModuleRelation = (typeof MODULE_RELATIONS)[number];
export type TagType = (typeof TAG_TYPES)[number];
export type JackSignal = (typeof JACK_SIGNALS)[number];

/** Fragment schema per record kind: the order of fragments inside every stored record. */
export const FRAGMENTS = {
  module: [...MODULE_FIELDS, ...MODULE_RELATIONS],
  manufacturer: [...MANUFACTURER_FIELDS],
  manufacturerDetail: [...MANUFACTURER_FIELDS, ...MANUFACTURER_RELATIONS],
  standard: [...STANDARD_FIELDS],
  tag: [...TAG_FIELDS],
} as const;
export type RecordKind = keyof typeof FRAGMENTS;

export type ListEndpoint = 'modules' | 'manufacturers' | 'standards' | 'tags';
export type SortOrder = 'id' | 'name';
export const MODULE_FILTERS = ['hp', 'manufacturer_id', 'standard', 'tag'] as const;
export type ModuleFilter = (typeof MODULE_FILTERS)[number];
export type ModuleFilters = Partial<Record<ModuleFilter, number>>;

/**
 * Canonical name of a list variant: endpoint, filters in alphabetical order, sort always explicit
 * (an omitted sort is `id`).
 * @example variantKey('modules', { tag: 5, hp: 4 }, 'name') === 'modules?hp=4&sort=name&tag=5'
 * @example variantKey('tags', {}, 'id') === 'tags?sort=id'
 */
export function variantKey(endpoint: ListEndpoint, filters: ModuleFilters, sort: SortOrder): string {
  const params: [string, string][] = [['sort', sort]];
  for (const name of MODULE_FILTERS) {
    const value = filters[name];
    if (value !== undefined) params.push([name, String(value)]);
  }
  params.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  return `${endpoint}?${params.map(([k, v]) => `${k}=${v}`).join('&')}`;
}

/**
 * The index key of a detail; list variants use their {@link variantKey}. The two never collide (`/` vs `?`).
 * @example detailKey('modules', 101) === 'modules/101'
 */
export function detailKey(resource: 'modules' | 'manufacturers', id: number | string): string {
  return `${resource}/${id}`;
}

/** Name order of docs/api.md#parameters: natural, case- and accent-insensitive; callers break ties by id. */
export const nameCollator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

/** Sort records by `sort`, ties (and `id` order) by id ascending. Returns a new array. */
export function sortRecords<T extends { id: number; name: string }>(
  records: readonly T[],
  sort: SortOrder,
): T[] {
  const copy = [...records];
  if (sort === 'id') return copy.sort((a, b) => a.id - b.id);
  return copy.sort((a, b) => nameCollator.compare(a.name, b.name) || a.id - b.id);
}
