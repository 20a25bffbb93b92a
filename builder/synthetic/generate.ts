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
// Vocabulary

/** The real panel standards, shared with the hand-curated fixture (fixtures/make-fixture.ts). */
export const STANDARDS: readonly Standard[] = [
  { id: 0, name: 'Eurorack 3U', height_mm: 128.5 },
  { id: 1, name: 'Intellijel 1U', height_mm: 39.65 },
  { id: 2, name: 'Pulp Logic 1U', height_mm: 43.18 },
  { id: 3, name: 'Buchla 200', height_mm: 177.8 },
  { id: 4, name: 'Serge 4U', height_mm: 177.8 },
  { id: 5, name: '5U (MU)', height_mm: 222.25 },
];
const EURORACK = 0;
const ONE_U = new Set([1, 2]);

/** Mostly Eurorack 3U; the other formats are a few per cent together. */
const STANDARD_SHARE = table([
  [0, 930],
  [1, 25],
  [2, 10],
  [3, 10],
  [4, 10],
  [5, 15],
]);

/** Widths in each standard's own units; Eurorack weighted toward 4–16 HP. */
const EURORACK_HP = table([
  [2, 3],
  [4, 10],
  [6, 12],
  [8, 14],
  [10, 12],
  [12, 12],
  [14, 9],
  [16, 8],
  [18, 5],
  [20, 5],
  [24, 3],
  [26, 2],
  [28, 2],
  [32, 1.5],
  [34, 1.2],
  [36, 1],
  [42, 1],
]);
const OTHER_HP: Record<number, Table<number>> = {
  3: table([
    [1, 5],
    [2, 4],
    [4, 1],
  ]),
  4: table([
    [4, 8],
    [8, 2],
    [16, 1],
  ]),
  5: table([
    [1, 3],
    [2, 6],
    [4, 2],
    [8, 1],
  ]),
};

/** About 120 tags: every type of TAG_TYPES, plus untyped ones. */
const TAG_NAMES: [TagType | null, string[]][] = [
  ['nature', ['Analog', 'Digital', 'Hybrid', 'Discrete', 'Vactrol', 'Tube', 'Through-hole', 'FPGA']],
  [
    'character',
    [
      'West Coast',
      'East Coast',
      'Lo-fi',
      'Experimental',
      'Clone',
      'Vintage',
      'Generative',
      'Performance',
      'Ambient',
      'Industrial',
      'Chaotic',
      'Polyphonic',
    ],
  ],
  [
    'voice',
    [
      'Drum',
      'Synth voice',
      'Kick',
      'Snare',
      'Hi-hat',
      'Cymbal',
      'Clap',
      'Tom',
      'Percussion',
      'Physical modelling',
    ],
  ],
  [
    'source',
    [
      'Oscillator',
      'Noise',
      'Sampler',
      'Wavetable',
      'Complex oscillator',
      'Additive',
      'FM',
      'Sub-oscillator',
      'Chord oscillator',
      'Drone',
      'Supersaw',
      'Phase distortion',
      'Karplus-Strong',
      'Speech',
    ],
  ],
  [
    'filter',
    [
      'Filter',
      'Low-pass gate',
      'Filter bank',
      'Resonator',
      'Low-pass',
      'High-pass',
      'Band-pass',
      'Comb filter',
      'Formant filter',
      'Vocoder',
    ],
  ],
  [
    'modulation',
    [
      'Envelope',
      'LFO',
      'Random',
      'Function generator',
      'Slew limiter',
      'Envelope follower',
      'Sample and hold',
      'Chaos',
      'Modulation matrix',
      'Burst generator',
      'Macro controller',
      'Touch controller',
      'Joystick',
      'Ribbon',
    ],
  ],
  [
    'effect',
    [
      'Reverb',
      'Delay',
      'Distortion',
      'Granular',
      'Looper',
      'Ring modulator',
      'Chorus',
      'Phaser',
      'Flanger',
      'Wavefolder',
      'Bitcrusher',
      'Compressor',
      'Frequency shifter',
      'Pitch shifter',
      'Tape',
      'Spring reverb',
    ],
  ],
  [
    'sequencing',
    [
      'Sequencer',
      'Clock',
      'Logic',
      'Quantizer',
      'Euclidean',
      'Trigger sequencer',
      'Clock divider',
      'Arpeggiator',
      'Probability',
      'Switch',
      'Shift register',
      'Gate delay',
    ],
  ],
  [
    'utility',
    [
      'Utility',
      'VCA',
      'Mixer',
      'Multiple',
      'Attenuverter',
      'Audio I/O',
      'MIDI',
      'Power',
      'Headphone amp',
      'Crossfader',
      'Precision adder',
      'Offset',
      'Expander',
      'Matrix mixer',
      'Preamp',
      'Envelope to CV',
    ],
  ],
  ['blank', ['Blank panel', 'Spacer panel', 'Art panel']],
  [null, ['Discontinued', 'DIY kit', 'Stereo', 'Open source', 'Limited edition']],
];

type Kind = Exclude<TagType, 'nature' | 'character'>;
type JackPool = readonly (readonly [string, JackSignal])[];

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

const SIGNAL_CODES: Record<string, JackSignal> = {
  a: 'audio',
  c: 'cv',
  p: 'pitch',
  g: 'gate',
  t: 'trigger',
  k: 'clock',
  o: 'other',
};
/** `'V/Oct:p|FM:c'` → jack names with their signals (codes above). */
const jackPool = (spec: string): JackPool =>
  spec.split('|').map((entry) => {
    const [name, code] = entry.split(':') as [string, string];
    return [name, SIGNAL_CODES[code]!] as const;
  });

const KINDS: Record<Kind, KindProfile> = {
  source: {
    weight: 18,
    digital: 0.45,
    nouns: ['VCO', 'Oscillator', 'Osc', 'Wave', 'Tone', 'Drone', 'Harmonics', 'Spectrum'],
    phrases: ['oscillator', 'complex oscillator', 'wavetable oscillator', 'macro oscillator', 'noise source'],
    features: [
      'linear FM',
      'hard sync',
      'a sub output',
      'a wavefolder',
      'through-zero FM',
      'morphing shapes',
    ],
    ins: jackPool(
      'V/Oct:p|FM:c|Lin FM:a|Exp FM:c|TZFM:a|Sync:a|PWM:c|Shape:c|Timbre:c|Fold:c|Index:c|Reset:t',
    ),
    outs: jackPool('Saw:a|Square:a|Triangle:a|Sine:a|Pulse:a|Sub:a|Main:a|Aux:a|Mix:a|Fold:a'),
    insRange: [1, 8],
    outsRange: [1, 6],
    baseCurrent: 40,
  },
  filter: {
    weight: 12,
    digital: 0.15,
    nouns: ['VCF', 'Filter', 'Ladder', 'Gate', 'Resonator', 'Formant', 'Comb', 'Sweep'],
    phrases: ['low-pass filter', 'multimode filter', 'low-pass gate', 'resonant filter bank', 'comb filter'],
    features: [
      'self-oscillation',
      'voltage-controlled resonance',
      'a drive stage',
      'stereo spread',
      'a ping input',
    ],
    ins: jackPool('In:a|In 2:a|V/Oct:p|Cutoff:c|FM:c|Res:c|Mode:c|Drive:c|Ping:t|Spread:c'),
    outs: jackPool('LP:a|BP:a|HP:a|Notch:a|Out:a|Left Out:a|Right Out:a|Peak:a'),
    insRange: [1, 6],
    outsRange: [1, 5],
    baseCurrent: 30,
  },
  modulation: {
    weight: 18,
    digital: 0.5,
    nouns: ['Envelope', 'LFO', 'Function', 'Slope', 'Contour', 'Random', 'Chaos', 'Slew', 'Flux', 'Tides'],
    phrases: ['envelope generator', 'LFO', 'function generator', 'random source', 'slew generator'],
    features: ['looping stages', 'end-of-cycle gates', 'clock sync', 'quadrature outputs', 'shape control'],
    ins: jackPool(
      'Trig:t|Gate:g|Clock:k|Reset:t|Rate:c|Rise:c|Fall:c|Shape:c|Attack:c|Release:c|Cycle:g|In:c',
    ),
    outs: jackPool('Out:c|Env:c|Inv:c|EOC:g|EOR:g|Sine:c|Triangle:c|Square:c|Random:c|Stepped:c|Smooth:c'),
    insRange: [0, 8],
    outsRange: [1, 8],
    baseCurrent: 30,
  },
  effect: {
    weight: 10,
    digital: 0.8,
    nouns: ['Delay', 'Verb', 'Echo', 'Fold', 'Crush', 'Shifter', 'Chorus', 'Space', 'Tape', 'Grain'],
    phrases: ['stereo delay', 'reverb', 'granular processor', 'distortion', 'looper', 'multi-effect'],
    features: ['tap tempo', 'a freeze input', 'feedback control', 'wet/dry mixing', 'clock sync'],
    ins: jackPool('In L:a|In R:a|Time:c|Feedback:c|Mix:c|Size:c|Clock:k|Freeze:g|Tone:c|Pitch:p'),
    outs: jackPool('Out L:a|Out R:a|Wet:a|Send:a|Out:a'),
    insRange: [1, 8],
    outsRange: [1, 4],
    baseCurrent: 90,
  },
  sequencing: {
    weight: 10,
    digital: 0.85,
    nouns: ['Sequencer', 'Clock', 'Step', 'Logic', 'Quantizer', 'Euclid', 'Pattern', 'Divider', 'Pulse'],
    phrases: ['step sequencer', 'clock divider', 'trigger sequencer', 'quantizer', 'logic module'],
    features: ['ratchets', 'probability per step', 'scale memory', 'swing', 'pattern chaining'],
    ins: jackPool('Clock:k|Reset:t|Run:g|Direction:g|Transpose:p|Length:c|Pattern:c|Probability:c|Mutate:c'),
    outs: jackPool('CV 1:p|CV 2:p|Gate 1:g|Gate 2:g|Trig 1:t|Trig 2:t|Trig 3:t|Clock:k|EOC:t|Accent:t|Mod:c'),
    insRange: [0, 6],
    outsRange: [1, 8],
    baseCurrent: 70,
  },
  utility: {
    weight: 20,
    digital: 0.2,
    nouns: ['Mixer', 'VCA', 'Mult', 'Attenuator', 'Offset', 'I/O', 'Buffer', 'Switch', 'Matrix', 'Output'],
    phrases: ['VCA', 'mixer', 'buffered multiple', 'attenuverter', 'output module', 'MIDI interface'],
    features: ['a headphone output', 'linear and exponential response', 'offset knobs', 'chained outputs'],
    ins: jackPool('In 1:a|In 2:a|In 3:a|In 4:a|CV 1:c|CV 2:c|CV 3:c|CV 4:c|MIDI In:o|USB:o'),
    outs: jackPool('Out 1:a|Out 2:a|Out 3:a|Out 4:a|Mix:a|Inv:a|Thru:o|Left:a|Right:a|Headphones:a'),
    insRange: [0, 8],
    outsRange: [0, 8],
    baseCurrent: 20,
  },
  voice: {
    weight: 6,
    digital: 0.5,
    nouns: ['Kick', 'Snare', 'Hats', 'Clap', 'Drum', 'Voice', 'Perc', 'Tom', 'Cymbal'],
    phrases: ['bass drum', 'snare voice', 'hi-hat voice', 'percussion voice', 'complete synth voice'],
    features: ['accent input', 'pitch envelope', 'noise blend', 'decay control'],
    ins: jackPool('Trig:t|Accent:t|V/Oct:p|Decay:c|Tone:c|Snap:c|Pitch:c|Gate:g|Velocity:c'),
    outs: jackPool('Out:a|Aux:a|Env:c|Noise:a'),
    insRange: [1, 8],
    outsRange: [1, 3],
    baseCurrent: 50,
  },
  blank: {
    weight: 4,
    digital: 0,
    nouns: ['Blank', 'Blank Panel', 'Spacer'],
    phrases: ['blank panel'],
    features: [],
    ins: [],
    outs: [],
    insRange: [0, 0],
    outsRange: [0, 0],
    baseCurrent: 0,
  },
};
const KIND_SHARE = table((Object.keys(KINDS) as Kind[]).map((kind) => [kind, KINDS[kind].weight] as const));

/** How many tags a module carries: 0–6, mean about 2.6. */
const TAG_COUNT = table([
  [0, 5],
  [1, 15],
  [2, 30],
  [3, 25],
  [4, 15],
  [5, 7],
  [6, 3],
]);

const ADJECTIVES = [
  'Dual',
  'Quad',
  'Triple',
  'Mini',
  'Micro',
  'Stereo',
  'Precision',
  'Dark',
  'Bright',
  'Liquid',
  'Harmonic',
  'Chaotic',
  'Smooth',
  'Stepped',
  'Poly',
  'Twin',
  'Hexa',
  'Octa',
  'Deep',
  'Wide',
];
/** Words for proper names; some carry accents so that the accent-insensitive order is exercised. */
const PROPER = [
  'Atlas',
  'Borealis',
  'Cascade',
  'Delta',
  'Ember',
  'Falcon',
  'Granite',
  'Helix',
  'Ion',
  'Juniper',
  'Kestrel',
  'Lumen',
  'Meridian',
  'Nova',
  'Orbit',
  'Prism',
  'Quasar',
  'Rift',
  'Sable',
  'Tundra',
  'Umbra',
  'Vortex',
  'Willow',
  'Xenon',
  'Yarrow',
  'Zephyr',
  'Zürich',
  'Malmö',
  'Kraków',
  'Éclair',
  'Ñandú',
  'Fjörd',
  'Ångström',
  'Sølv',
  'Café',
  'Déjà',
  'Übel',
  'Łódź',
  'Señal',
  'Brûlée',
  'Naïve',
  'Façade',
  'Crème',
  'Mañana',
  'Čaj',
  'Žar',
  'Ørbit',
  'Église',
];
const ROMAN = ['II', 'III', 'IV', 'mk2', 'mk3', 'MkII', 'XL', 'Pro', 'Plus', 'Jr.'];
const NUMBERS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 20, 24, 32, 64, 100, 128, 303, 808, 2600];
const LETTERS = [...'ABCDEFGHJKLMNPQRSTVWXZ'];

const MAKER_WORDS = [
  'Nordic',
  'Black Forest',
  'Copper',
  'Signal',
  'Lunar',
  'Analogue',
  'Harbour',
  'Fractal',
  'Vector',
  'Patch',
  'Circuit',
  'Static',
  'Magnetic',
  'Solar',
  'Quiet',
  'Wild',
  'Hidden',
  'Iron',
  'Paper',
  'Glass',
  'Orchard',
  'Meadow',
  'Thunder',
  'Tidal',
  'Crystal',
  'Rusty',
  'Velvet',
  'Neon',
  'Electric',
  'Modular',
  'Bürger',
  'Élan',
  'Åsa',
  'Ñu',
  'Škola',
  'Fête',
  'Kōhō',
  'Grün',
  'Sørby',
  'Mérida',
  'Kiło',
  'Größe',
];
const MAKER_SUFFIXES = [
  'Audio',
  'Modular',
  'Instruments',
  'Electronics',
  'Synths',
  'Devices',
  'Circuits',
  'Labs',
  'Sound',
  'Systems',
  'Works',
  'Audio Design',
  'Synthesizers',
  'Electronic Music',
];
const COUNTRIES = table([
  ['US', 25],
  ['DE', 12],
  ['GB', 8],
  ['FR', 5],
  ['IT', 4],
  ['ES', 4],
  ['JP', 4],
  ['PL', 3],
  ['CZ', 3],
  ['NL', 3],
  ['SE', 3],
  ['CA', 3],
  ['AU', 2],
  ['BE', 2],
  ['UA', 2],
  ['CH', 2],
  ['CN', 2],
  ['LV', 1],
  ['FI', 1],
  ['NO', 1],
  ['DK', 1],
  ['AT', 1],
  ['GR', 1],
  ['KR', 1],
  ['BR', 1],
  ['AR', 1],
  ['NZ', 1],
  ['PT', 1],
  ['HU', 1],
  ['SI', 1],
]);
const PANEL_FINISHES: readonly (readonly [string, string | null])[] = [
  ['Black', 'black'],
  ['Silver', 'silver'],
  ['White', 'white'],
  ['Aluminium', 'silver'],
  ['Oak', 'brown'],
  ['Limited Edition', null],
  ['Gold', 'gold'],
];

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
