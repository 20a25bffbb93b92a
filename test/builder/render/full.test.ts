import stringify from 'fast-json-stable-stringify';
import { describe, expect, it } from 'vitest';
import { renderCatalogue, renderInFull } from '../../../builder/render/full.js';
import { closedJson } from '../../../builder/render/records.js';
import type { Module } from '../../../builder/snapshot/snapshot.js';
import { validateSnapshot } from '../../../builder/snapshot/validate.js';
import { generateSnapshot } from '../../../builder/synthetic/generate.js';
import { pushRecord } from '../../../proxy/catalogue/compose.js';
import { fullMask, moduleMask } from '../../../proxy/request/mask.js';
import { objectIdFor } from '../../../store/layout.js';
import {
  FRAGMENTS,
  MODULE_FILTERS,
  type ModuleFilters,
  sortRecords,
  variantKey,
} from '../../../store/schema.js';
import {
  decodePackedVariant,
  decodeSegment,
  encodeVariant,
  FormatError,
  SEGMENT_SIZE,
} from '../../../store/segments.js';
import { fixtureSnapshot } from '../../helpers/builder.js';

/** Every record of an object, decoded through the proxy's own reader and parsed. */
function recordsOf(bytes: Buffer, kind: keyof typeof FRAGMENTS, mask = fullMask(kind)): unknown[] {
  const records: unknown[] = [];
  let at = 0;
  while (at < bytes.byteLength) {
    const segment = decodeSegment(bytes, at);
    for (let r = 0; r < segment.count; r++) {
      const out: Uint8Array[] = [];
      pushRecord(out, segment, r, mask);
      records.push(JSON.parse(Buffer.concat(out).toString('utf8')));
    }
    at += segment.byteLength;
  }
  return records;
}

function matches(module: Module, filters: ModuleFilters): boolean {
  return (
    (filters.manufacturer_id === undefined || module.manufacturer_id === filters.manufacturer_id) &&
    (filters.hp === undefined || module.hp === filters.hp) &&
    (filters.standard === undefined || module.standard === filters.standard) &&
    (filters.tag === undefined || module.tag_ids.includes(filters.tag))
  );
}

/** The variant keys a module belongs to: 8 subsets of {manufacturer, hp, standard} × (no tag | a tag) × 2 sorts. */
function variantsOf(module: Module): string[] {
  const keys: string[] = [];
  for (const tag of [undefined, ...module.tag_ids]) {
    for (let subset = 0; subset < 8; subset++) {
      const filters: ModuleFilters = {};
      if (subset & 1) filters.manufacturer_id = module.manufacturer_id;
      if (subset & 2) filters.hp = module.hp;
      if (subset & 4) filters.standard = module.standard;
      if (tag !== undefined) filters.tag = tag;
      keys.push(variantKey('modules', filters, 'id'), variantKey('modules', filters, 'name'));
    }
  }
  return keys;
}

const fixture = fixtureSnapshot();
const rendered = renderCatalogue(fixture);

describe('rendering the fixture', () => {
  it('is valid to begin with', () => {
    expect(validateSnapshot(fixtureSnapshot()).ok).toBe(true);
  });

  it('is deterministic: two renders are byte-identical', () => {
    const again = renderCatalogue(fixtureSnapshot());

    expect(again.pointerBytes.equals(rendered.pointerBytes)).toBe(true);
    expect([...again.objects.keys()].sort()).toEqual([...rendered.objects.keys()].sort());
    for (const [id, bytes] of again.objects) expect(bytes.equals(rendered.objects.get(id)!)).toBe(true);
  });

  it('has exactly the module variants with at least one module, with the right members in order', () => {
    const expected = new Set(fixture.modules.flatMap(variantsOf));
    const actual = Object.keys(rendered.index.lists).filter((key) => key.startsWith('modules?'));

    expect(new Set(actual)).toEqual(expected);
    for (const key of actual) {
      const params = new URLSearchParams(key.slice('modules?'.length));
      const filters: ModuleFilters = {};
      for (const name of MODULE_FILTERS) if (params.has(name)) filters[name] = Number(params.get(name));
      const sort = params.get('sort') as 'id' | 'name';
      const [objectId, count] = rendered.index.lists[key]!;
      const ids = (recordsOf(rendered.objects.get(objectId)!, 'module', 1) as { id: number }[]).map(
        (r) => r.id,
      );
      const members = sortRecords(
        fixture.modules.filter((m) => matches(m, filters)),
        sort,
      ).map((m) => m.id);
      expect(ids, key).toEqual(members);
      expect(count, key).toBe(members.length);
    }
  });

  it('round-trips module records through the proxy reader, fields in schema order', () => {
    const tagsById = new Map(fixture.tags.map((t) => [t.id, t]));
    for (const module of fixture.modules) {
      const objectId = rendered.index.modules[String(module.id)]!;
      const [record] = recordsOf(rendered.objects.get(objectId)!, 'module') as Record<string, unknown>[];
      expect(Object.keys(record!)).toEqual([...FRAGMENTS.module]);
      expect(record).toEqual({
        id: module.id,
        name: module.name,
        manufacturer_id: module.manufacturer_id,
        hp: module.hp,
        standard: module.standard,
        depth_mm: module.depth_mm,
        power_12v_ma: module.power_12v_ma,
        power_m12v_ma: module.power_m12v_ma,
        power_5v_ma: module.power_5v_ma,
        description: module.description,
        ins: module.ins,
        outs: module.outs,
        tags: [...module.tag_ids].sort((a, b) => a - b).map((id) => tagsById.get(id)),
        panels: module.panels,
      });
    }
  });

  it('composes sparse records from fragments: id always, then the asked fields and relations', () => {
    const [objectId] = rendered.index.lists['modules?sort=name']!;
    const segment = decodeSegment(rendered.objects.get(objectId)!, 0);
    const out: Uint8Array[] = [];

    pushRecord(out, segment, 0, moduleMask(['hp'], ['tags']));

    expect(Object.keys(JSON.parse(Buffer.concat(out).toString()))).toEqual(['id', 'hp', 'tags']);
  });

  it('splits long lists into segments of 100 whose header points at the next ones', () => {
    const [objectId, count, segment0End] = rendered.index.lists['modules?sort=id']!;
    const bytes = rendered.objects.get(objectId)!;
    const first = decodeSegment(bytes, 0);
    const second = decodeSegment(bytes, segment0End);

    expect(count).toBe(fixture.modules.length);
    expect(first.count).toBe(SEGMENT_SIZE);
    expect(first.byteLength).toBe(segment0End);
    expect(first.next[0]).toBe(segment0End);
    expect(second.index).toBe(1);
    expect(second.total).toBe(count);
  });

  it('renders manufacturer details with their modules (top-level fields, by id)', () => {
    for (const maker of fixture.manufacturers) {
      const objectId = rendered.index.manufacturers[String(maker.id)]!;
      const [record] = recordsOf(rendered.objects.get(objectId)!, 'manufacturerDetail') as {
        modules: Record<string, unknown>[];
      }[];
      const own = fixture.modules.filter((m) => m.manufacturer_id === maker.id).sort((a, b) => a.id - b.id);
      expect(record!.modules.map((m) => m.id)).toEqual(own.map((m) => m.id));
      for (const module of record!.modules)
        expect(Object.keys(module)).toEqual(FRAGMENTS.module.slice(0, 10));
    }
  });

  it('renders the other lists in both orders, and leaves empty lists out of the index', () => {
    const empty = renderCatalogue({ ...fixtureSnapshot(), tags: [], modules: [] });
    const tagsByName = recordsOf(rendered.objects.get(rendered.index.lists['tags?sort=name']![0])!, 'tag');

    expect(tagsByName).toEqual(
      sortRecords(fixture.tags, 'name').map(({ id, name, type }) => ({ id, name, type })),
    );
    expect(Object.keys(rendered.index.lists).filter((k) => !k.startsWith('modules?'))).toEqual(
      expect.arrayContaining(['standards?sort=id', 'standards?sort=name', 'manufacturers?sort=name']),
    );
    expect(Object.keys(empty.index.lists).sort()).toEqual([
      'manufacturers?sort=id',
      'manufacturers?sort=name',
      'standards?sort=id',
      'standards?sort=name',
    ]);
  });
});

describe('the builder fast paths give the shared format bytes', () => {
  it('the one encoder round-trips every record and fragment, for every length around segment borders', () => {
    const records = Array.from({ length: 305 }, (_, i) =>
      ['"id":', '"name":', '"x":'].map((key, k) =>
        Buffer.from(`${key}${JSON.stringify(`${i}-${k}`.repeat(i % 7))}`),
      ),
    );
    for (const length of [0, 1, 2, 99, 100, 101, 199, 200, 201, 300, 305]) {
      const members = Array.from({ length }, (_, i) => (i * 37) % records.length);
      const { bytes, segment0End } = encodeVariant(
        members.map((i) => records[i]!),
        3,
      );
      let at = 0;
      let position = 0;
      while (at < bytes.byteLength) {
        const segment = decodeSegment(bytes, at);
        if (at === 0) expect(segment0End).toBe(segment.byteLength);
        expect(segment.total).toBe(length);
        for (let r = 0; r < segment.count; r++, position++) {
          for (let k = 0; k < 3; k++) {
            expect(
              segment.fragment(r, k).equals(records[members[position]!]![k]!),
              `${length}:${position}`,
            ).toBe(true);
          }
        }
        at += segment.byteLength;
      }
      expect(position).toBe(length);
      // And back: the packed records, as a publish takes them over from the version it replaces.
      const decoded = decodePackedVariant(bytes, 3);
      expect(decoded).toHaveLength(length);
      decoded.forEach(({ bytes: recordBytes, offsets }, i) => {
        const fragments = records[members[i]!]!;
        expect(recordBytes.equals(Buffer.concat(fragments)), `${length}:${i}`).toBe(true);
        expect([...offsets]).toEqual(
          [0, 1, 2, 3].map((k) => Buffer.concat(fragments.slice(0, k)).byteLength),
        );
      });
    }
    expect(() => decodePackedVariant(Buffer.from('not a variant, not at all'), 3)).toThrow(FormatError);
    const { bytes } = encodeVariant([records[1]!, records[2]!], 3);
    expect(() => decodePackedVariant(bytes, 4)).toThrow(FormatError);
    expect(() => decodePackedVariant(bytes.subarray(0, bytes.byteLength - 1), 3)).toThrow(FormatError);
  });

  it('the pointer and every shard equal fast-json-stable-stringify of their content', () => {
    expect(rendered.pointerBytes.toString()).toBe(stringify(rendered.pointer));
    const { version, ...unversioned } = rendered.pointer;
    expect(version).toBe(objectIdFor(Buffer.from(stringify(unversioned))));
    const entries = new Map<string, unknown>();
    for (const id of rendered.pointer.shards) {
      const bytes = rendered.objects.get(id)!;
      const shard = JSON.parse(bytes.toString());
      expect(bytes.toString()).toBe(stringify(shard));
      expect(objectIdFor(bytes)).toBe(id);
      for (const [key, entry] of Object.entries(shard.entries)) entries.set(key, entry);
    }
    const index = rendered.index;
    expect(entries.size).toBe(
      Object.keys(index.lists).length +
        Object.keys(index.modules).length +
        Object.keys(index.manufacturers).length,
    );
    for (const [key, entry] of Object.entries(index.lists)) expect(entries.get(key)).toEqual(entry);
    for (const [id, entry] of Object.entries(index.modules)) expect(entries.get(`modules/${id}`)).toBe(entry);
  });
});

describe('bounds', () => {
  it('editing one module changes only objects that contain it (incremental bound)', () => {
    const edited = fixtureSnapshot();
    const target = edited.modules[17]!;
    target.description = `${target.description ?? ''} Revised.`;
    const after = renderCatalogue(edited);

    const shards = new Set(after.pointer.shards);
    const changed = [...after.objects.keys()].filter((id) => !rendered.objects.has(id) && !shards.has(id));
    // Lists holding the module, its detail, and its manufacturer's detail (which embeds its fields).
    const containing = variantsOf(target).length + 2;
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.length).toBeLessThanOrEqual(containing);
    const holding = new Set(variantsOf(target));
    for (const [key, entry] of Object.entries(after.index.lists)) {
      if (!holding.has(key)) expect(entry[0], key).toBe(rendered.index.lists[key]![0]);
    }
  });

  it('total bytes stay within a constant of Σ over variants of their full records (key-space bound)', () => {
    const kindOf = (key: string): keyof typeof FRAGMENTS =>
      key.startsWith('modules?') ? 'module' : (key.slice(0, key.indexOf('?') - 1) as 'tag');
    const variants: [objectId: string, kind: keyof typeof FRAGMENTS][] = [
      ...Object.entries(rendered.index.lists).map(([key, [id]]): [string, keyof typeof FRAGMENTS] => [
        id,
        kindOf(key),
      ]),
      ...Object.values(rendered.index.modules).map((id): [string, 'module'] => [id, 'module']),
      ...Object.values(rendered.index.manufacturers).map((id): [string, 'manufacturerDetail'] => [
        id,
        'manufacturerDetail',
      ]),
    ];
    const recordBytes = new Map<string, number>(); // object id → Σ of its full records' JSON
    let sumOfVariants = 0;
    for (const [id, kind] of variants) {
      if (!recordBytes.has(id)) {
        const records = recordsOf(rendered.objects.get(id)!, kind);
        recordBytes.set(
          id,
          records.reduce<number>((sum, r) => sum + Buffer.byteLength(JSON.stringify(r)), 0),
        );
      }
      sumOfVariants += recordBytes.get(id)!;
    }
    const shards = new Set(rendered.pointer.shards);
    const total = [...rendered.objects]
      .filter(([id]) => !shards.has(id))
      .reduce((sum, [, bytes]) => sum + bytes.byteLength, 0);
    // The index grows with the number of variants, not with their records: ~100 bytes an entry.
    const indexBytes = [...shards].reduce((sum, id) => sum + rendered.objects.get(id)!.byteLength, 0);
    expect(indexBytes).toBeLessThanOrEqual(100 * variants.length);

    // C = 1.5. Per record the format adds 4 bytes of offset per fragment (14 × 4 = 56 for a module) and
    // per segment 32 bytes of header plus 4: at most 92 bytes on top of a module record, which is never
    // below ~200 bytes of JSON (ten fields with their names), so ≤ 1.46× even for one-record objects;
    // fragments drop the record's braces and commas, and identical variants are stored once, which only
    // lowers the total. Nothing multiplies by limit, fields or include: those select bytes at read time.
    expect(total).toBeLessThanOrEqual(1.5 * sumOfVariants);
    expect(total).toBeGreaterThan(0);
  });
});

describe('closed records serialise as fast-json-stable-stringify does', () => {
  it('jacks, panels and tags of every fixture and generated module', () => {
    const modules = [...fixtureSnapshot().modules, ...generateSnapshot({ modules: 500, seed: 3 }).modules];
    for (const module of modules) {
      expect(closedJson(module.ins, ['name', 'signal'])).toBe(stringify(module.ins));
      expect(closedJson(module.outs, ['name', 'signal'])).toBe(stringify(module.outs));
      expect(closedJson(module.panels, ['color', 'hp', 'name'])).toBe(stringify(module.panels));
    }
    const tags = fixtureSnapshot().tags.map(({ id, name, type }) => ({ type, name, id }));
    expect(closedJson(tags, ['id', 'name', 'type'])).toBe(stringify(tags));
  });
});

describe('the progress count of a full render', () => {
  it.each([
    ['the fixture', () => fixtureSnapshot()],
    ['a generated catalogue', () => generateSnapshot({ modules: 400, seed: 3 })],
  ])('counts, before rendering, exactly the distinct objects %s renders', (_, snapshot) => {
    const render = renderInFull(snapshot());
    const total = render.jobs;

    let yielded = 0;
    for (const _object of render.objects()) yielded++;

    expect(yielded).toBe(total);
    expect(render.encoded).toBe(total);
    // Far fewer than the jobs (index keys): identical variants are one object.
    expect(total).toBeLessThan(render.result().entries.size);
  });
});
