/**
 * Synthetic catalogues for load tests and benchmarks: `generateSnapshot` makes a snapshot of any size that
 * looks like the real catalogue (skewed manufacturer sizes, common widths, mostly Eurorack, a few tags per
 * module, names that exercise the natural, case- and accent-insensitive name order), and `writeSnapshot`
 * stores it as a snapshot directory.
 *
 * Deterministic: the output depends only on the options. The generator carries its own seeded PRNG
 * (mulberry32) and never iterates anything whose order could vary between runs or Node versions.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JackSignal, TagType } from '../../store/schema.js';
import {
  type Jack,
  type Manufacturer,
  type Module,
  type Panel,
  SNAPSHOT_FILES,
  type Snapshot,
  type Standard,
  type Tag,
} from '../snapshot/snapshot.js';
import vocabularyJson from './vocabulary.json' with { type: 'json' };

export interface GenerateOptions {
  /** Number of modules (a nonnegative integer). */
  modules: number;
  /** Any safe integer; the same seed always gives the same snapshot. */
  seed: number;
}

// ---------------------------------------------------------------------------------------------------------
// Randomness

/** mulberry32: small, fast and good enough for test data; a 32-bit state. */
class Rng {
  private state: number;

  constructor(seed: number) {
    // Fold the whole safe-integer seed into 32 bits, then scramble so that nearby seeds diverge at once.
    const low = seed >>> 0;
    const high = Math.floor(seed / 2 ** 32) >>> 0;
    let h = Math.imul(low ^ 0x85ebca6b, 0xcc9e2d51) ^ Math.imul(high ^ 0x27d4eb2f, 0x1b873593);
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    this.state = (h ^ (h >>> 16)) >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** Index drawn from cumulative weights (ascending, last = total). */
  weighted(cumulative: readonly number[]): number {
    const x = this.next() * cumulative[cumulative.length - 1]!;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! > x) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** A weighted choice, prepared once: `pickFrom(rng, table)`. */
interface Table<T> {
  values: readonly T[];
  cumulative: readonly number[];
}

function table<T>(entries: readonly (readonly [T, number])[]): Table<T> {
  let total = 0;
  return {
    values: entries.map(([value]) => value),
    cumulative: entries.map(([, weight]) => (total += weight)),
  };
}

function pickFrom<T>(rng: Rng, from: Table<T>): T {
  return from.values[rng.weighted(from.cumulative)]!;
}

// ---------------------------------------------------------------------------------------------------------
// Vocabulary: the words, shares and profiles in vocabulary.json, as tables ready to draw from.

type Kind = Exclude<TagType, 'nature' | 'character'>;
type JackPool = readonly (readonly [string, JackSignal])[];
type Weighted<T> = readonly (readonly [T, number])[];

interface KindProfile {
  weight: number;
  /** Share of digital designs. */
  digital: number;
  nouns: readonly string[];
  phrases: readonly string[];
  features: readonly string[];
  ins: JackPool;
  outs: JackPool;
  insRange: readonly [number, number];
  outsRange: readonly [number, number];
  /** Typical +12 V draw before the width term, mA. */
  baseCurrent: number;
}

/** vocabulary.json as written: a kind's jacks are `'V/Oct:p|FM:c'` (codes in SIGNAL_CODES). */
interface Vocabulary {
  standards: Standard[];
  standardShare: Weighted<number>;
  eurorackHp: Weighted<number>;
  otherHp: Record<string, Weighted<number>>;
  tags: [TagType | null, string[]][];
  kinds: Record<Kind, Omit<KindProfile, 'ins' | 'outs'> & { ins: string; outs: string }>;
  tagCount: Weighted<number>;
  adjectives: string[];
  proper: string[];
  roman: string[];
  numbers: number[];
  letters: string;
  makerWords: string[];
  makerSuffixes: string[];
  countries: Weighted<string>;
  panelFinishes: [string, string | null][];
}

const VOCABULARY = vocabularyJson as unknown as Vocabulary;

const SIGNAL_CODES: Record<string, JackSignal> = {
  a: 'audio',
  c: 'cv',
  p: 'pitch',
  g: 'gate',
  t: 'trigger',
  k: 'clock',
  o: 'other',
};
/** `'V/Oct:p|FM:c'` → jack names with their signals (codes above); `''` → none. */
const jackPool = (spec: string): JackPool =>
  spec === ''
    ? []
    : spec.split('|').map((entry) => {
        const [name, code] = entry.split(':') as [string, string];
        return [name, SIGNAL_CODES[code]!] as const;
      });

/** The real panel standards, shared with the hand-curated fixture (fixtures/make-fixture.ts). */
export const STANDARDS: readonly Standard[] = VOCABULARY.standards;
const EURORACK = 0;
const ONE_U = new Set([1, 2]);

/** Mostly Eurorack 3U; the other formats are a few per cent together. */
const STANDARD_SHARE = table(VOCABULARY.standardShare);
/** Widths in each standard's own units; Eurorack weighted toward 4–16 HP. */
const EURORACK_HP = table(VOCABULARY.eurorackHp);
const OTHER_HP: Record<number, Table<number>> = Object.fromEntries(
  Object.entries(VOCABULARY.otherHp).map(([standard, widths]) => [standard, table(widths)]),
);
/** About 120 tags: every type of TAG_TYPES, plus untyped ones. */
const TAG_NAMES = VOCABULARY.tags;
const KINDS = Object.fromEntries(
  Object.entries(VOCABULARY.kinds).map(([kind, profile]) => [
    kind,
    { ...profile, ins: jackPool(profile.ins), outs: jackPool(profile.outs) },
  ]),
) as Record<Kind, KindProfile>;
const KIND_SHARE = table((Object.keys(KINDS) as Kind[]).map((kind) => [kind, KINDS[kind].weight] as const));
/** How many tags a module carries: 0–6, mean about 2.6. */
const TAG_COUNT = table(VOCABULARY.tagCount);
const ADJECTIVES = VOCABULARY.adjectives;
/** Words for proper names; some carry accents so that the accent-insensitive order is exercised. */
const PROPER = VOCABULARY.proper;
const ROMAN = VOCABULARY.roman;
const NUMBERS = VOCABULARY.numbers;
const LETTERS = [...VOCABULARY.letters];
const MAKER_WORDS = VOCABULARY.makerWords;
const MAKER_SUFFIXES = VOCABULARY.makerSuffixes;
const COUNTRIES = table(VOCABULARY.countries);
const PANEL_FINISHES = VOCABULARY.panelFinishes;

// ---------------------------------------------------------------------------------------------------------
// Records

function makeTags(rng: Rng): { tags: Tag[]; byType: Map<TagType | null, number[]>; nonBlank: number[] } {
  const tags: Tag[] = [];
  const byType = new Map<TagType | null, number[]>();
  let id = 0;
  for (const [type, names] of TAG_NAMES) {
    const ids: number[] = [];
    for (const name of names) {
      id += rng.chance(0.1) ? rng.int(2, 4) : 1;
      tags.push({ id, name, type });
      ids.push(id);
    }
    byType.set(type, ids);
  }
  const nonBlank = tags.filter((tag) => tag.type !== 'blank').map((tag) => tag.id);
  return { tags, byType, nonBlank };
}

function makeManufacturers(rng: Rng, count: number): Manufacturer[] {
  const seen = new Set<string>();
  const manufacturers: Manufacturer[] = [];
  let id = 0;
  for (let i = 0; i < count; i++) {
    let name = `${rng.pick(MAKER_WORDS)} ${rng.pick(MAKER_SUFFIXES)}`;
    if (rng.chance(0.08)) name = name.toLowerCase();
    for (let n = 2; seen.has(name.toLowerCase()); n++) name = `${name.replace(/ \d+$/, '')} ${n}`;
    seen.add(name.toLowerCase());
    id += rng.chance(0.1) ? rng.int(2, 5) : 1;
    manufacturers.push({ id, name, country: rng.chance(0.05) ? null : pickFrom(rng, COUNTRIES) });
  }
  return manufacturers;
}

/**
 * Zipf-like sizes (Zipf–Mandelbrot): the manufacturer of rank `r` (1-based, shuffled) gets weight
 * 1 / (r + 2.7), so a few large makers, a long tail of small ones, and each at least one module.
 */
function assignManufacturers(rng: Rng, manufacturers: readonly Manufacturer[], modules: number): number[] {
  const ranked = manufacturers.map((m) => m.id);
  for (let i = ranked.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [ranked[i], ranked[j]] = [ranked[j]!, ranked[i]!];
  }
  const zipf = table(ranked.map((id, rank) => [id, 1 / (rank + 1 + 2.7)] as const));
  const owners: number[] = [];
  for (let i = 0; i < modules; i++) owners.push(i < ranked.length ? ranked[i]! : pickFrom(rng, zipf));
  // Spread the guaranteed first modules over the id range instead of leaving them at the front.
  for (let i = owners.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [owners[i], owners[j]] = [owners[j]!, owners[i]!];
  }
  return owners;
}

function moduleName(rng: Rng, kind: Kind, hp: number): string {
  const noun = rng.pick(KINDS[kind].nouns);
  if (kind === 'blank') return rng.chance(0.5) ? `${noun} ${hp}HP` : `${noun} ${rng.pick(PROPER)}`;
  const roll = rng.next();
  if (roll < 0.2) return rng.pick(PROPER);
  if (roll < 0.35) return `${rng.pick(PROPER)} ${noun}`;
  if (roll < 0.55) return `${rng.pick(ADJECTIVES)} ${noun}`;
  if (roll < 0.67) return `${noun} ${rng.pick(NUMBERS)}`;
  if (roll < 0.77) {
    const letters = rng.pick(LETTERS) + (rng.chance(0.4) ? rng.pick(LETTERS) : '');
    return `${letters}-${rng.int(1, 300)}${rng.chance(0.2) ? rng.pick(['a', 'b', 'e', 't']) : ''}`;
  }
  if (roll < 0.85) return `${rng.pick(PROPER)} ${rng.pick(ROMAN)}`;
  if (roll < 0.93) {
    let acronym = '';
    for (let i = rng.int(2, 4); i > 0; i--) acronym += rng.pick(LETTERS);
    return acronym;
  }
  return `${rng.pick(PROPER)}${rng.chance(0.5) ? '' : ` ${noun}`}`.toLowerCase();
}

/** Distinct jacks drawn from `pool` in the pool's panel order (selection sampling, Knuth's algorithm S). */
function pickJacks(rng: Rng, pool: JackPool, range: readonly [number, number]): Jack[] {
  let needed = Math.min(rng.int(range[0], range[1]), pool.length);
  const jacks: Jack[] = [];
  for (let i = 0; needed > 0; i++) {
    if (rng.next() * (pool.length - i) < needed) {
      const [name, signal] = pool[i]!;
      jacks.push({ name, signal });
      needed--;
    }
  }
  return jacks;
}

function pickTags(rng: Rng, kind: Kind, digital: boolean, tagIndex: ReturnType<typeof makeTags>): number[] {
  const { byType, nonBlank } = tagIndex;
  const count = pickFrom(rng, TAG_COUNT);
  const chosen = new Set<number>();
  if (count >= 1) chosen.add(rng.pick(byType.get(kind)!));
  if (count >= 2 && kind !== 'blank') {
    const nature = byType.get('nature')!;
    // "Analog" and "Digital" lead the nature list; the rarer natures now and then.
    chosen.add(rng.chance(0.85) ? nature[digital ? 1 : 0]! : rng.pick(nature));
  }
  const pool = kind === 'blank' ? [...byType.get('blank')!, ...byType.get(null)!] : nonBlank;
  for (let guard = 0; chosen.size < count && guard < 50; guard++) chosen.add(rng.pick(pool));
  return [...chosen].sort((a, b) => a - b);
}

function describeModule(rng: Rng, kind: Kind, digital: boolean): string | null {
  const profile = KINDS[kind];
  if (kind === 'blank' || rng.chance(0.15)) return null;
  const nature = digital ? 'Digital' : 'Analog';
  const [first, second] = [rng.pick(profile.features), rng.pick(profile.features)];
  const features = first === second ? first : `${first} and ${second}`;
  return `${nature} ${rng.pick(profile.phrases)} with ${features}.`;
}

function makePanels(rng: Rng, standard: number, hp: number): Panel[] {
  if (ONE_U.has(standard)) return [{ name: '1U tile', hp, color: rng.pick(['black', 'silver']) }];
  const first = rng.pick(PANEL_FINISHES);
  const panels: Panel[] = [{ name: first[0], hp, color: first[1] }];
  if (rng.chance(0.15)) {
    const second = rng.pick(PANEL_FINISHES);
    if (second[0] !== first[0]) panels.push({ name: second[0], hp, color: second[1] });
  }
  return panels;
}

function makeModule(
  rng: Rng,
  id: number,
  manufacturer_id: number,
  tagIndex: ReturnType<typeof makeTags>,
  names: Map<string, number>,
): Module {
  const kind = pickFrom(rng, KIND_SHARE);
  const profile = KINDS[kind];
  const standard = pickFrom(rng, STANDARD_SHARE);
  const hp = pickFrom(rng, OTHER_HP[standard] ?? EURORACK_HP);
  const digital = rng.chance(profile.digital);
  // Names are unique within a manufacturer (compared exactly, as a catalogue editor would see them): a few
  // fresh draws, then a model suffix counted per base name, so a large maker costs no quadratic search.
  const key = (candidate: string) => `${manufacturer_id}:${candidate}`;
  let name = moduleName(rng, kind, hp);
  for (let tries = 0; tries < 3 && names.has(key(name)); tries++) name = moduleName(rng, kind, hp);
  const base = name;
  while (names.has(key(name))) {
    const n = names.get(key(base))! + 1;
    names.set(key(base), n);
    name = `${base} mk${n}`;
  }
  names.set(key(name), 1);

  const passive = kind === 'blank' || (kind === 'utility' && rng.chance(0.15));
  const eurorackRails = standard === EURORACK || ONE_U.has(standard);
  let power: [number | null, number | null, number | null] = [null, null, null];
  if (passive) power = [0, 0, 0];
  else if (eurorackRails && !rng.chance(0.05)) {
    const plus = Math.round((profile.baseCurrent + hp * rng.next() * 6) / 5) * 5;
    const minus = Math.round((plus * (digital ? 0.1 + rng.next() * 0.2 : 0.6 + rng.next() * 0.4)) / 5) * 5;
    const five = digital && rng.chance(0.3) ? rng.int(2, 12) * 5 : rng.chance(0.05) ? null : 0;
    power = [plus, minus, five];
  }
  const knownDepth = kind !== 'blank' && (eurorackRails ? !rng.chance(0.08) : rng.chance(0.4));
  return {
    id,
    name,
    manufacturer_id,
    hp,
    standard,
    depth_mm: knownDepth ? rng.int(eurorackRails ? 15 : 40, eurorackRails ? 60 : 90) : null,
    power_12v_ma: power[0],
    power_m12v_ma: power[1],
    power_5v_ma: power[2],
    description: describeModule(rng, kind, digital),
    tag_ids: pickTags(rng, kind, digital, tagIndex),
    ins: pickJacks(rng, profile.ins, profile.insRange),
    outs: pickJacks(rng, profile.outs, profile.outsRange),
    panels: makePanels(rng, standard, hp),
  };
}

// ---------------------------------------------------------------------------------------------------------
// Public API

/**
 * A realistic synthetic catalogue of `modules` modules, the same for the same options.
 * Manufacturers: max(15, round(modules / 80)), with Zipf-like sizes; about 120 tags covering every tag type
 * and untyped tags; ids positive with gaps.
 * @example
 * const snapshot = generateSnapshot({ modules: 25_000, seed: 1 });
 * await writeSnapshot('.local/snapshot-25k', snapshot);
 */
export function generateSnapshot(options: GenerateOptions): Snapshot {
  const { modules: count, seed } = options;
  if (!Number.isSafeInteger(count) || count < 0) {
    throw new RangeError(`modules must be a nonnegative integer (got ${count})`);
  }
  if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer (got ${seed})`);
  const rng = new Rng(seed);
  const tagIndex = makeTags(rng);
  const manufacturers = makeManufacturers(rng, Math.max(15, Math.round(count / 80)));
  const owners = assignManufacturers(rng, manufacturers, count);
  const names = new Map<string, number>();
  const modules: Module[] = [];
  let id = 0;
  for (const owner of owners) {
    id += rng.chance(0.08) ? rng.int(2, 6) : 1;
    modules.push(makeModule(rng, id, owner, tagIndex, names));
  }
  return { standards: STANDARDS.map((s) => ({ ...s })), tags: tagIndex.tags, manufacturers, modules };
}

/**
 * Write `snapshot` as a snapshot directory (the four SNAPSHOT_FILES, compact JSON), creating `dir`.
 * @example
 * await writeSnapshot('/tmp/catalogue', generateSnapshot({ modules: 1000, seed: 7 }));
 */
export async function writeSnapshot(dir: string, snapshot: Snapshot): Promise<void> {
  await mkdir(dir, { recursive: true });
  const kinds = Object.keys(SNAPSHOT_FILES) as (keyof Snapshot)[];
  await Promise.all(
    kinds.map((kind) => writeFile(join(dir, SNAPSHOT_FILES[kind]), `${JSON.stringify(snapshot[kind])}\n`)),
  );
}
