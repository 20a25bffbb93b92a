/**
 * Bench section 15's verdict on npm start's memory, from its RSS samples: pure, so that what "flat" means is
 * tested (soak-verdict.test.ts) apart from an hour of load.
 */
import { slope } from './stats.js';

/** npm start's RSS, sampled: along the warm-up ('fill'), idle after it ('warm'), along the load, and idle after it. */
export interface RssSample {
  seconds: number;
  rss: number;
  /** Bytes of its local DynamoDB's data directory. */
  dynamodb: number;
  phase: 'fill' | 'warm' | 'load' | 'idle';
}

/** "Flat": RSS idle after the soak, and the floor of every sixth of the load, within this much above RSS idle after the warm-up. */
export const RSS_BOUND_BYTES = 32 * 2 ** 20;

export interface SoakFigures {
  /** Samples along the warm-up, when the byte cache fills and V8 sizes its heap: shown, not judged. */
  fill: RssSample[];
  /** The last sample idle after the warm-up: the baseline. */
  warm: RssSample;
  idle: RssSample;
  peak: number;
  peakData: number;
  /** Least-squares trend of every sample over the load's second half, bytes per hour. */
  perHour: number;
  /** The lowest sample of each of FLOOR_SPANS equal spans of the load: the sawtooth's floor. */
  floors: RssSample[];
  /** Least-squares trend of the floors, bytes per hour: shown, not judged (a dip early in the load makes it steep). */
  floorPerHour: number;
  ok: boolean;
}

/**
 * Under load RSS drops at each major collection and climbs again, on teeth of minutes (five in an 8-minute run)
 * or as a plateau with a few deep dips (an hour's run: 379 and 401 MiB in its first two sixths, 510-515 MiB
 * after). A single sample says where the last collection fell; a trend over a few dips says when they fell.
 * The lowest RSS of each sixth of the load is what the process holds after a collection there, and a leak
 * raises it above what the process held idle after the warm-up: that is what is judged.
 */
const FLOOR_SPANS = 6;

export function floorsOf(loaded: readonly RssSample[]): RssSample[] {
  const size = Math.max(1, Math.ceil(loaded.length / FLOOR_SPANS));
  const floors: RssSample[] = [];
  for (let i = 0; i < loaded.length; i += size) {
    floors.push(loaded.slice(i, i + size).reduce((low, s) => (s.rss < low.rss ? s : low)));
  }
  return floors;
}

export function soakFigures(samples: readonly RssSample[]): SoakFigures {
  const warm = samples.filter((s) => s.phase === 'warm').at(-1)!;
  const idle = samples.at(-1)!;
  const loaded = samples.filter((s) => s.phase === 'load');
  const secondHalf = loaded.slice(loaded.length >> 1);
  const perHour = slope(secondHalf.map((s) => ({ x: s.seconds / 3600, y: s.rss })));
  const floors = floorsOf(loaded);
  const floorPerHour = floors.length > 1 ? slope(floors.map((s) => ({ x: s.seconds / 3600, y: s.rss }))) : 0;
  const highestFloor = Math.max(...floors.map((s) => s.rss));
  return {
    fill: samples.filter((s) => s.phase === 'fill'),
    warm,
    idle,
    peak: Math.max(...samples.map((s) => s.rss)),
    peakData: Math.max(...samples.map((s) => s.dynamodb)),
    perHour,
    floors,
    floorPerHour,
    ok: idle.rss - warm.rss <= RSS_BOUND_BYTES && highestFloor - warm.rss <= RSS_BOUND_BYTES,
  };
}
