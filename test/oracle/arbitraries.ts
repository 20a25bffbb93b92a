/**
 * fast-check arbitraries: valid catalogue snapshots with the corners that break sorting, paging and joins,
 * and valid queries against a given snapshot (filters that match and that do not, sorts, limits, sparse
 * fields and includes in any order with repeats, as comma lists or repeated parameters, details, unknown ids, cursor walks).
 */
import fc from 'fast-check';
import type {
  Jack,
  Manufacturer,
  Module,
  Panel,
  Snapshot,
  Standard,
  Tag,
} from '../../builder/snapshot/snapshot.js';
import { FORBIDDEN_VALUE } from '../../builder/snapshot/validate.js';
import { JACK_SIGNALS, MODULE_FIELDS, MODULE_RELATIONS, TAG_TYPES } from '../../store/schema.js';
import { textProblem } from '../../store/text.js';

/** Names that collide under a case-, accent-insensitive, numeric collation, and some that do not. */
const NAME_POOL = [
  'Alpha',
  'alpha',
  'ALPHA',
  'Älpha',
  'Ålpha',
  'Osc 1',
  'Osc 2',
  'osc 02',
  'Osc 10',
  'OSC 9',
  'Échelle',
  'echelle',
  'Maths',
  'Mäths',
  'maths',
  'Zeta',
  'zéta',
  '4ms',
  '10ms',
  'a-b',
  'a b',
  'ab',
  'Æther',
  'Ω Filter',
  'Ürzwerg',
  'Zürich',
  'Plaits',
  'Rings',
  'Ring 3',
  'Ring 30',
  'Ring 300',
  'v1.2',
  'v1.10',
  'Qu"ote',
  'Back\\slash',
  '😀 Emoji',
  '日本',
  'Ǆ',
];

/**
 * Not a value validation refuses: a link or an image file name (a random `!.pNG` is one), or text that is not
 * printable (store/text.ts: a control, format or private-use character, a lone surrogate, a blank…).
 */
const publishable = (s: string, lineBreaks = false) =>
  !FORBIDDEN_VALUE.test(s.trim()) && textProblem(s, { lineBreaks }) === undefined;

export const nameArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...NAME_POOL) },
  {
    weight: 2,
    arbitrary: fc
      .string({ minLength: 1, maxLength: 12, unit: 'grapheme' })
      .filter((s) => s.trim().length > 0 && s === s.trim() && publishable(s)),
  },
);

/** Numbers as a catalogue has them, plus the ones whose JSON form is unusual (`1e+21`, `5e-7`, `0.1`). */
const measureArb = (min: 0 | 1): fc.Arbitrary<number> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min, max: 500 }) },
    { weight: 1, arbitrary: fc.constantFrom(128.5, 0.1, 25.25, 1e21, 5e-7, 2 ** 53 - 1) },
  );

const nullable = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 3, arbitrary: arb });

/** Distinct ids drawn from [min, max], as a sorted-free array of the given length bounds. */
const idsArb = (min: number, max: number, minLength: number, maxLength: number) =>
  fc.uniqueArray(fc.integer({ min, max }), { minLength, maxLength });

const jackArb: fc.Arbitrary<Jack> = fc.record({
  name: fc.constantFrom('In', 'Out', 'CV', 'V/Oct', 'Gate', 'Clock', 'Ä', 'in 2', 'in 10'),
  signal: fc.constantFrom(...JACK_SIGNALS),
});

const panelArb: fc.Arbitrary<Panel> = fc.record({
  name: fc.constantFrom('Black', 'Silver', '1U tile', 'Weiß'),
  hp: fc.integer({ min: 1, max: 42 }),
  color: nullable(fc.constantFrom('black', 'silver', '#ffffff')),
});

export interface SnapshotShape {
  /** Most modules a snapshot gets (some runs go past one segment of 100). */
  maxModules: number;
  /** Fewest modules (when > 0, every snapshot has a standard and a manufacturer). */
  minModules?: number;
}

/**
 * Valid snapshots: every reference resolves, ids are distinct, and every edge the brief names turns up
 * often (empty lists, one module, ties in names, many tags, modules without relations, standard 0, ...).
 */
export function snapshotArb(shape: SnapshotShape = { maxModules: 40 }): fc.Arbitrary<Snapshot> {
  const minModules = shape.minModules ?? 0;
  const least = minModules > 0 ? 1 : 0;
  const standards = idsArb(0, 6, least, 4).chain((ids) =>
    fc
      .tuple(...ids.map(() => fc.record({ name: nameArb, height_mm: measureArb(1) })))
      .map((rest): Standard[] => rest.map((r, i) => ({ id: ids[i]!, ...r }))),
  );
  const tags = fc
    .oneof(idsArb(1, 40, 0, 6), idsArb(1, 400, 20, 40))
    .chain((ids) =>
      fc
        .tuple(...ids.map(() => fc.record({ name: nameArb, type: nullable(fc.constantFrom(...TAG_TYPES)) })))
        .map((rest): Tag[] => rest.map((r, i) => ({ id: ids[i]!, ...r }))),
    );
  const manufacturers = idsArb(1, 50, least, 6).chain((ids) =>
    fc
      .tuple(
        ...ids.map(() =>
          fc.record({ name: nameArb, country: nullable(fc.constantFrom('DE', 'US', 'GB', 'FR')) }),
        ),
      )
      .map((rest): Manufacturer[] => rest.map((r, i) => ({ id: ids[i]!, ...r }))),
  );
  const moduleCount =
    minModules > 0
      ? fc.integer({ min: minModules, max: shape.maxModules })
      : fc.oneof(
          { weight: 2, arbitrary: fc.constantFrom(0, 1) },
          { weight: 6, arbitrary: fc.integer({ min: 2, max: Math.min(shape.maxModules, 40) }) },
          { weight: 1, arbitrary: fc.integer({ min: 1, max: shape.maxModules }) },
        );

  return fc.tuple(standards, tags, manufacturers, moduleCount).chain(([st, tg, mf, count]) => {
    if (st.length === 0 || mf.length === 0 || count === 0) {
      return fc.constant<Snapshot>({ standards: st, tags: tg, manufacturers: mf, modules: [] });
    }
    // Idle makers: a few manufacturers may end up without modules because picks are random.
    const moduleArb = (id: number): fc.Arbitrary<Module> =>
      fc.record({
        id: fc.constant(id),
        name: nameArb,
        manufacturer_id: fc.constantFrom(...mf.map((m) => m.id)),
        hp: fc.oneof(fc.constantFrom(2, 4, 8), fc.integer({ min: 1, max: 84 })),
        standard: fc.constantFrom(...st.map((s) => s.id)),
        depth_mm: nullable(measureArb(1)),
        power_12v_ma: nullable(measureArb(0)),
        power_m12v_ma: nullable(fc.integer({ min: 0, max: 500 })),
        power_5v_ma: nullable(fc.constantFrom<number>(0, 5, 60)),
        description: nullable(
          fc.oneof(
            nameArb,
            fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== '' && publishable(s, true)),
            // JSON escaping corners that are printable text: quotes, backslashes, line breaks, `</`, astral
            // characters (control characters and lone surrogates are refused: store/text.ts).
            fc
              .array(
                fc.constantFrom('"', '\\', '\n', '/', '</', "'", '&', 'é', '😀', '𝄞', 'a', ' ', '\u2603'),
                {
                  minLength: 1,
                  maxLength: 20,
                },
              )
              .map((parts) => parts.join(''))
              .filter((s) => s.trim() !== '' && publishable(s, true)),
          ),
        ),
        tag_ids:
          tg.length === 0
            ? fc.constant<number[]>([])
            : fc.oneof(
                fc.constant<number[]>([]),
                fc.shuffledSubarray(
                  tg.map((t) => t.id),
                  { maxLength: Math.min(12, tg.length) },
                ),
              ),
        ins: fc.array(jackArb, { maxLength: 3 }),
        outs: fc.array(jackArb, { maxLength: 3 }),
        panels: fc.array(panelArb, { maxLength: 2 }),
      });
    return idsArb(1, Math.max(count * 3, 20), count, count)
      .chain((ids) => fc.tuple(...ids.map(moduleArb)))
      .map((modules): Snapshot => ({ standards: st, tags: tg, manufacturers: mf, modules }));
  });
}

// ---------------------------------------------------------------------------------------------------------
// Queries

export interface Query {
  path: string;
  /** Parameters in the order they are sent. */
  params: [string, string][];
}

/** The query string of `params`, with some values percent-encoded as clients do (`,` → `%2C`). */
export function queryString(params: readonly [string, string][], encode = false): string {
  return params.map(([k, v]) => `${k}=${encode ? encodeURIComponent(v) : v}`).join('&');
}

/**
 * A list-valued parameter: a non-empty list of names from `names`, in random order, with repeats, sent as one
 * comma list (`fields=hp,name`), as the parameter repeated (`fields=hp&fields=name`, what OpenAPI generators
 * send by default; sometimes as axios spells it, `fields[]=hp&fields[]=name`), or a mix of both
 * (`fields=hp,name&fields=id`).
 */
const nameListArb = (parameter: string, names: readonly string[]): fc.Arbitrary<[string, string][]> =>
  fc.array(fc.constantFrom(...names), { minLength: 1, maxLength: names.length + 2 }).chain((list) =>
    fc
      .oneof(
        { weight: 2, arbitrary: fc.constant(list.map(() => false)) },
        { weight: 1, arbitrary: fc.constant(list.map(() => true)) },
        { weight: 1, arbitrary: fc.array(fc.boolean(), { minLength: list.length, maxLength: list.length }) },
      )
      .map((cuts) => {
        // A cut before member i starts a new parameter; the first member always starts one.
        const groups: string[][] = [];
        list.forEach((name, i) => {
          if (i === 0 || cuts[i]) groups.push([name]);
          else groups.at(-1)!.push(name);
        });
        // Repeated, the name is sometimes spelled as axios spells it (`fields[]`).
        const name = groups.length > 1 && cuts[0] ? `${parameter}[]` : parameter;
        return groups.map((group): [string, string] => [name, group.join(',')]);
      }),
  );

/** `arb` or absent; absent once in `freq` draws. */
const optional = <T>(arb: fc.Arbitrary<T>, freq = 2): fc.Arbitrary<T | undefined> =>
  fc.option(arb, { nil: undefined, freq });

const limitArb = fc.oneof(
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 100 }) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 7 }) },
  { weight: 1, arbitrary: fc.constantFrom(1, 99, 100) },
);
const sortArb = fc.constantFrom('id', 'name');

/** `[name, value]` pairs in a random order. */
function shuffled(pairs: [string, string | undefined][]): fc.Arbitrary<[string, string][]> {
  const present = pairs.filter((p): p is [string, string] => p[1] !== undefined);
  return fc.shuffledSubarray(present, { minLength: present.length, maxLength: present.length });
}

/** Filters of the module list: values taken from real modules (matching) or arbitrary (mostly not). */
export function moduleFiltersArb(
  snapshot: Snapshot,
  /** A filter is present once in `presence` draws. */
  presence = 2,
): fc.Arbitrary<[string, string | undefined][]> {
  const some = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
    fc.oneof({ weight: presence - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });
  const seen = (values: number[], fallback: fc.Arbitrary<number>) =>
    values.length === 0 ? fallback : fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...values) }, fallback);
  const ms = snapshot.modules;
  const matching = ms.length === 0 ? fc.constant(undefined) : fc.constantFrom(...ms);
  // Half the time the filters are all taken from one module, so that combinations match.
  return fc.tuple(matching, fc.boolean()).chain(([module, coherent]) => {
    const value = (name: 'manufacturer_id' | 'hp' | 'standard', min: number) =>
      coherent && module
        ? fc.constant(module[name])
        : seen(
            ms.map((m) => m[name]),
            fc.integer({ min, max: 200 }),
          );
    const tag =
      coherent && module && module.tag_ids.length > 0
        ? fc.constantFrom(...module.tag_ids)
        : seen(
            snapshot.tags.map((t) => t.id),
            fc.integer({ min: 1, max: 500 }),
          );
    return fc
      .record({
        manufacturer_id: some(value('manufacturer_id', 1)),
        hp: some(value('hp', 1)),
        standard: some(value('standard', 0)),
        tag: some(tag),
      })
      .map((f) =>
        (['manufacturer_id', 'hp', 'standard', 'tag'] as const).map((name): [string, string | undefined] => [
          name,
          f[name] === undefined ? undefined : String(f[name]),
        ]),
      );
  });
}

/** The per-page parameters that may change along a cursor walk (module list: also fields and include). */
export function pageParamsArb(modules: boolean): fc.Arbitrary<[string, string | undefined][]> {
  return fc
    .record({
      limit: optional(limitArb.map(String), 8),
      fields: modules ? optional(nameListArb('fields', MODULE_FIELDS)) : fc.constant(undefined),
      include: modules ? optional(nameListArb('include', MODULE_RELATIONS)) : fc.constant(undefined),
    })
    .map((p): [string, string | undefined][] => [
      ['limit', p.limit],
      ...(p.fields ?? []),
      ...(p.include ?? []),
    ]);
}

export interface Walk {
  path: string;
  /** Filters and sort, sent with every page. */
  fixed: [string, string | undefined][];
  /** Page parameters for page i (cycled). */
  pages: [string, string | undefined][][];
}

/** A cursor walk over a list endpoint: fixed filters/sort, page parameters varying page by page. */
export function walkArb(snapshot: Snapshot): fc.Arbitrary<Walk> {
  const endpoint = fc.oneof(
    { weight: 5, arbitrary: fc.constant('modules') },
    { weight: 1, arbitrary: fc.constantFrom('manufacturers', 'standards', 'tags') },
  );
  return endpoint.chain((endpoint) => {
    const modules = endpoint === 'modules';
    return fc.record({
      path: fc.constant(`/v1/${endpoint}`),
      fixed: fc
        .tuple(modules ? moduleFiltersArb(snapshot, 5) : fc.constant([]), optional(sortArb))
        .map(([filters, sort]): [string, string | undefined][] => [...filters, ['sort', sort]]),
      pages: fc.array(pageParamsArb(modules), { minLength: 1, maxLength: 4 }),
    });
  });
}

/** Pairs of one page request of a walk, shuffled. */
export function pageRequestArb(walk: Walk, page: number, cursor: string | undefined) {
  return shuffled([...walk.fixed, ...walk.pages[page % walk.pages.length]!, ['cursor', cursor]]);
}

/** Any single valid request: a first list page or a detail (existing or unknown id), params shuffled. */
export function queryArb(snapshot: Snapshot): fc.Arbitrary<Query> {
  const ids = (values: number[]) =>
    values.length === 0
      ? fc.integer({ min: 1, max: 1000 })
      : fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...values) }, fc.integer({ min: 1, max: 1000 }));
  const list = walkArb(snapshot).chain((walk) =>
    shuffled([...walk.fixed, ...walk.pages[0]!]).map((params): Query => ({ path: walk.path, params })),
  );
  const moduleDetail = fc
    .tuple(ids(snapshot.modules.map((m) => m.id)), optional(nameListArb('include', MODULE_RELATIONS)))
    .map(([id, include]): Query => ({ path: `/v1/modules/${id}`, params: include ?? [] }));
  const manufacturerDetail = fc
    .tuple(ids(snapshot.manufacturers.map((m) => m.id)), optional(nameListArb('include', ['modules'])))
    .map(([id, include]): Query => ({ path: `/v1/manufacturers/${id}`, params: include ?? [] }));
  return fc.oneof(
    { weight: 5, arbitrary: list },
    { weight: 2, arbitrary: moduleDetail },
    { weight: 2, arbitrary: manufacturerDetail },
  );
}
