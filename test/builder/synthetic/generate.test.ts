import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { type Module, SNAPSHOT_FILES, type Snapshot } from '../../../builder/snapshot/snapshot.js';
import { generateSnapshot, writeSnapshot } from '../../../builder/synthetic/generate.js';
import { JACK_SIGNALS, nameCollator, TAG_TYPES } from '../../../store/schema.js';

const FIXTURE_DIR = fileURLToPath(new URL('../../../fixtures/catalogue/', import.meta.url));
const FORBIDDEN_KEY = /image|img|url|price|store|shop/i;
const LINK_OR_IMAGE = /:\/\/|^www\.|\.(?:png|jpe?g|gif|webp|svg)$/i;

/** Closed records: exactly the fields of builder/snapshot/snapshot.ts. */
const KEYS = {
  standards: ['id', 'name', 'height_mm'],
  tags: ['id', 'name', 'type'],
  manufacturers: ['id', 'name', 'country'],
  modules: [
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
    'tag_ids',
    'ins',
    'outs',
    'panels',
  ],
} as const satisfies Record<keyof Snapshot, readonly string[]>;

/** Every structural rule a snapshot must keep, as a list of broken ones (empty when all hold). */
function structuralProblems(snapshot: Snapshot): string[] {
  const problems: string[] = [];
  const fail = (message: string) => problems.length < 20 && problems.push(message);
  for (const kind of Object.keys(KEYS) as (keyof Snapshot)[]) {
    const ids = new Set<number>();
    let previous = -1;
    for (const record of snapshot[kind]) {
      const where = `${kind} ${record.id}`;
      if (JSON.stringify(Object.keys(record)) !== JSON.stringify(KEYS[kind])) fail(`${where}: keys`);
      const minimum = kind === 'standards' ? 0 : 1;
      if (!Number.isSafeInteger(record.id) || record.id < minimum) fail(`${where}: id`);
      if (ids.has(record.id)) fail(`${where}: duplicate id`);
      if (record.id <= previous) fail(`${where}: not sorted by id`);
      ids.add(record.id);
      previous = record.id;
      if (typeof record.name !== 'string' || record.name.trim() === '') fail(`${where}: name`);
    }
  }
  const standards = new Set(snapshot.standards.map((s) => s.id));
  const manufacturers = new Set(snapshot.manufacturers.map((m) => m.id));
  const tags = new Set(snapshot.tags.map((t) => t.id));
  for (const tag of snapshot.tags) {
    if (tag.type !== null && !(TAG_TYPES as readonly string[]).includes(tag.type))
      fail(`tag ${tag.id}: type`);
  }
  for (const m of snapshot.manufacturers) {
    if (m.country !== null && !/^[A-Z]{2}$/.test(m.country)) fail(`manufacturer ${m.id}: country`);
  }
  const names = new Set<string>();
  for (const m of snapshot.modules) {
    const where = `module ${m.id}`;
    if (!manufacturers.has(m.manufacturer_id)) fail(`${where}: manufacturer ${m.manufacturer_id}`);
    if (!standards.has(m.standard)) fail(`${where}: standard ${m.standard}`);
    if (!Number.isSafeInteger(m.hp) || m.hp <= 0) fail(`${where}: hp`);
    if (m.depth_mm !== null && !(m.depth_mm > 0)) fail(`${where}: depth`);
    for (const power of [m.power_12v_ma, m.power_m12v_ma, m.power_5v_ma]) {
      if (power !== null && !(power >= 0)) fail(`${where}: power`);
    }
    if (m.tag_ids.length > 6 || new Set(m.tag_ids).size !== m.tag_ids.length) fail(`${where}: tag_ids`);
    for (const id of m.tag_ids) if (!tags.has(id)) fail(`${where}: tag ${id}`);
    for (const jack of [...m.ins, ...m.outs]) {
      if (!jack.name || !(JACK_SIGNALS as readonly string[]).includes(jack.signal)) fail(`${where}: jack`);
    }
    for (const list of [m.ins, m.outs, m.panels]) {
      if (new Set(list.map((x) => x.name)).size !== list.length) fail(`${where}: repeated jack/panel name`);
    }
    if (m.panels.length === 0 || m.panels.some((p) => !Number.isSafeInteger(p.hp) || p.hp <= 0)) {
      fail(`${where}: panels`);
    }
    const key = `${m.manufacturer_id}:${m.name}`;
    if (names.has(key)) fail(`${where}: name repeated within its manufacturer`);
    names.add(key);
  }
  return problems;
}

/** Keys matching FORBIDDEN_KEY and string values that look like links or image files, at any depth. */
function forbidden(value: unknown, path = ''): string[] {
  if (typeof value === 'string') return LINK_OR_IMAGE.test(value) ? [path] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => forbidden(item, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, item]) =>
      FORBIDDEN_KEY.test(key) ? [`${path}.${key}`] : forbidden(item, `${path}.${key}`),
    );
  }
  return [];
}

async function readFixture(): Promise<{ snapshot: Snapshot; texts: Record<keyof Snapshot, string> }> {
  const kinds = Object.keys(SNAPSHOT_FILES) as (keyof Snapshot)[];
  const texts = Object.fromEntries(
    await Promise.all(
      kinds.map(async (k) => [k, await readFile(join(FIXTURE_DIR, SNAPSHOT_FILES[k]), 'utf8')]),
    ),
  ) as Record<keyof Snapshot, string>;
  const snapshot = Object.fromEntries(kinds.map((k) => [k, JSON.parse(texts[k])])) as unknown as Snapshot;
  return { snapshot, texts };
}

describe('the structural check used below', () => {
  it('catches dangling references, duplicate ids and extra fields', () => {
    // Prepare
    const snapshot = generateSnapshot({ modules: 20, seed: 3 });
    const [first, second] = snapshot.modules as [Module, Module];
    first.manufacturer_id = 999_999;
    second.id = first.id;
    Object.assign(snapshot.tags[0]!, { image_url: 'front.png' });
    // Act
    const problems = structuralProblems(snapshot);
    // Assess
    expect(problems).toContain(`module ${first.id}: manufacturer 999999`);
    expect(problems).toContain(`modules ${first.id}: duplicate id`);
    expect(problems).toContain(`tags ${snapshot.tags[0]!.id}: keys`);
    expect(forbidden(snapshot)).toEqual(['.tags[0].image_url']);
  });
});

describe('generateSnapshot', () => {
  it('gives the same snapshot for the same seed and another for another seed', () => {
    // Act
    const first = JSON.stringify(generateSnapshot({ modules: 800, seed: 42 }));
    const again = JSON.stringify(generateSnapshot({ modules: 800, seed: 42 }));
    const other = JSON.stringify(generateSnapshot({ modules: 800, seed: 43 }));
    // Assess
    expect(again).toBe(first);
    expect(other).not.toBe(first);
  });

  it.each([0, 1, 15, 500, 5_000])('keeps every structural rule with %i modules', (modules) => {
    // Act
    const snapshot = generateSnapshot({ modules, seed: modules + 7 });
    // Assess
    expect(snapshot.modules).toHaveLength(modules);
    expect(snapshot.manufacturers).toHaveLength(Math.max(15, Math.round(modules / 80)));
    expect(structuralProblems(snapshot)).toEqual([]);
    expect(forbidden(snapshot)).toEqual([]);
  });

  it('has realistic distributions', () => {
    // Act
    const { modules, manufacturers, standards, tags } = generateSnapshot({ modules: 10_000, seed: 2024 });
    // Assess: tags cover every type and an untyped one, and every type is used
    expect(tags.length).toBeGreaterThanOrEqual(110);
    expect(new Set(tags.map((t) => t.type))).toEqual(new Set([...TAG_TYPES, null]));
    const typeOf = new Map(tags.map((t) => [t.id, t.type]));
    const usedTypes = new Set(modules.flatMap((m) => m.tag_ids.map((id) => typeOf.get(id))));
    expect(usedTypes).toEqual(new Set([...TAG_TYPES, null]));
    // Tags per module: 0–6, mean about 2.5
    const meanTags = modules.reduce((sum, m) => sum + m.tag_ids.length, 0) / modules.length;
    expect(meanTags).toBeGreaterThan(2);
    expect(meanTags).toBeLessThan(3.2);
    expect(modules.some((m) => m.tag_ids.length === 0)).toBe(true);
    expect(modules.some((m) => m.tag_ids.length === 6)).toBe(true);
    // Mostly Eurorack 3U, every standard in use
    const onEurorack = modules.filter((m) => m.standard === 0).length / modules.length;
    expect(onEurorack).toBeGreaterThan(0.85);
    expect(onEurorack).toBeLessThan(0.98);
    expect(new Set(modules.map((m) => m.standard))).toEqual(new Set(standards.map((s) => s.id)));
    // Common widths: most Eurorack modules are 4–16 HP
    const euro = modules.filter((m) => m.standard === 0);
    expect(euro.filter((m) => m.hp >= 4 && m.hp <= 16).length / euro.length).toBeGreaterThan(0.6);
    // Skewed manufacturer sizes, nobody empty
    const sizes = manufacturers.map((mf) => modules.filter((m) => m.manufacturer_id === mf.id).length);
    sizes.sort((a, b) => b - a);
    expect(sizes.at(-1)).toBeGreaterThan(0);
    expect(sizes[0]!).toBeGreaterThan(4 * sizes[Math.floor(sizes.length / 2)]!);
    // Jacks and panels
    expect(Math.max(...modules.map((m) => Math.max(m.ins.length, m.outs.length)))).toBe(8);
    expect(modules.some((m) => m.ins.length === 0 && m.outs.length === 0)).toBe(true);
    expect(new Set(modules.flatMap((m) => [...m.ins, ...m.outs].map((j) => j.signal)))).toEqual(
      new Set(JACK_SIGNALS),
    );
    expect(new Set(modules.map((m) => m.panels.length))).toEqual(new Set([1, 2]));
    // Nullable fields are sometimes null, never always
    for (const field of ['depth_mm', 'power_12v_ma', 'power_5v_ma', 'description'] as const) {
      const nulls = modules.filter((m) => m[field] === null).length;
      expect(nulls, field).toBeGreaterThan(0);
      expect(nulls, field).toBeLessThan(modules.length / 2);
    }
    expect(manufacturers.some((m) => m.country === null)).toBe(true);
    // Ids have gaps
    expect(modules.at(-1)!.id).toBeGreaterThan(modules.length);
  });

  it('makes names that exercise the natural, case- and accent-insensitive order', () => {
    // Act
    const names = generateSnapshot({ modules: 3_000, seed: 5 }).modules.map((m) => m.name);
    // Assess
    expect(names.some((n) => /[^\u0020-\u007e]/.test(n))).toBe(true);
    expect(names.some((n) => n !== n.toUpperCase() && n === n.toLowerCase())).toBe(true);
    expect(names.some((n) => /^[A-Z]{2,}$/.test(n))).toBe(true);
    const sorted = [...names].sort(nameCollator.compare);
    expect(sorted).not.toEqual([...names].sort());
  });

  it('generates 25,000 modules well within 5 s', () => {
    // Act
    const started = performance.now();
    const snapshot = generateSnapshot({ modules: 25_000, seed: 1 });
    const elapsed = performance.now() - started;
    // Assess
    expect(snapshot.modules).toHaveLength(25_000);
    expect(snapshot.manufacturers.length).toBeGreaterThanOrEqual(300);
    expect(elapsed).toBeLessThan(5_000);
  });

  it.each([
    { modules: -1, seed: 1 },
    { modules: 1.5, seed: 1 },
    { modules: Number.NaN, seed: 1 },
    { modules: 10, seed: 0.5 },
    { modules: 10, seed: Number.POSITIVE_INFINITY },
  ])('refuses %o', (options) => {
    expect(() => generateSnapshot(options)).toThrow(RangeError);
  });
});

describe('writeSnapshot', () => {
  const directories: string[] = [];
  afterAll(async () => {
    for (const dir of directories) await rm(dir, { recursive: true, force: true });
  });

  it('writes the four snapshot files, which read back to the same snapshot', async () => {
    // Prepare
    const dir = join(await mkdtemp(join(tmpdir(), 'cat-generate-')), 'nested', 'snapshot');
    directories.push(dir);
    const snapshot = generateSnapshot({ modules: 200, seed: 9 });
    // Act
    await writeSnapshot(dir, snapshot);
    // Assess
    for (const kind of Object.keys(SNAPSHOT_FILES) as (keyof Snapshot)[]) {
      const text = await readFile(join(dir, SNAPSHOT_FILES[kind]), 'utf8');
      expect(JSON.parse(text)).toEqual(snapshot[kind]);
    }
  });
});

const fixture = await readFixture();

describe('the committed fixture catalogue', () => {
  const { snapshot, texts } = fixture;
  const { modules, manufacturers, standards, tags } = snapshot;

  it('is well-formed: closed records, sorted unique ids, references that resolve', () => {
    expect(structuralProblems(snapshot)).toEqual([]);
  });

  it('carries no image, link, price or store data', () => {
    expect(forbidden(snapshot)).toEqual([]);
  });

  it('is formatted with two-space indentation, one file per resource', () => {
    for (const kind of Object.keys(SNAPSHOT_FILES) as (keyof Snapshot)[]) {
      expect(texts[kind], kind).toBe(`${JSON.stringify(snapshot[kind], null, 2)}\n`);
    }
  });

  it('is big and varied enough to exercise the API', () => {
    expect(modules.length).toBeGreaterThanOrEqual(150);
    const makers = new Set(modules.map((m) => m.manufacturer_id));
    expect(makers.size).toBeGreaterThanOrEqual(15);
    expect(manufacturers.length - makers.size).toBeLessThanOrEqual(1);
    expect(standards.some((s) => s.id === 0 && s.name === 'Eurorack 3U')).toBe(true);
    expect(new Set(modules.map((m) => m.standard))).toEqual(new Set(standards.map((s) => s.id)));
    expect(new Set(tags.map((t) => t.type))).toEqual(new Set([...TAG_TYPES, null]));
    expect(modules.some((m) => m.ins.length === 0 && m.outs.length === 0)).toBe(true);
    expect(modules.some((m) => m.panels.length === 2)).toBe(true);
    expect(modules.some((m) => m.tag_ids.length >= 5)).toBe(true);
  });

  it('has names that exercise the name order: numbers, accents, ties across manufacturers', () => {
    const names = modules.map((m) => m.name);
    // Natural order puts "… 2HP" before "… 10HP" where plain string order does not.
    const natural = [...names].sort(nameCollator.compare);
    const two = natural.indexOf('Blind Panel 2HP');
    expect(two).toBeGreaterThanOrEqual(0);
    expect(two).toBeLessThan(natural.indexOf('Blind Panel 10HP'));
    expect('Blind Panel 10HP' < 'Blind Panel 2HP').toBe(true);
    expect(names.some((n) => /[^\u0020-\u007e]/.test(n))).toBe(true);
    const tie = modules.filter((m) => nameCollator.compare(m.name, '921B Oscillator') === 0);
    expect(new Set(tie.map((m) => m.manufacturer_id)).size).toBe(2);
  });
});
