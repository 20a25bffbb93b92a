/** Section 15's verdict: a sawtooth is not a leak; a rising floor is, and so is memory kept after the load. */
import { describe, expect, it } from 'vitest';
import { floorsOf, type RssSample, soakFigures } from '../soak-verdict.js';

const MiB = 2 ** 20;
const HOUR = 3600;

/**
 * An hour sampled every 10 s: RSS climbs 100 MiB over each 5-minute tooth and drops back at a major collection,
 * from a floor that rises `floorPerHour` MiB an hour. The baseline (the last sample idle after the warm-up) and
 * the last idle sample sit on the floor at their time.
 */
function sawtooth(floorPerHour: number, idleAbove = 0): RssSample[] {
  const at = (seconds: number, phase: RssSample['phase'], extra: number): RssSample => ({
    seconds,
    rss: (300 + (floorPerHour * seconds) / HOUR + extra) * MiB,
    dynamodb: 4 * MiB,
    phase,
  });
  // The warm-up climbs well above where the load later settles, and the first idle sample is still high.
  const samples = [at(-660, 'fill', -150), at(-600, 'fill', -50), at(-70, 'warm', 80), at(0, 'warm', 0)];
  for (let t = 10; t <= HOUR; t += 10) samples.push(at(t, 'load', ((t % 300) / 300) * 100));
  samples.push(at(HOUR + 60, 'idle', idleAbove));
  return samples;
}

describe('soakFigures', () => {
  it('calls a sawtooth on a level floor flat, wherever its last tooth ends', () => {
    for (const samples of [
      sawtooth(0),
      sawtooth(0).filter((s) => s.phase !== 'load' || s.seconds < HOUR - 120),
    ]) {
      const figures = soakFigures(samples);
      expect(figures.floors).toHaveLength(6);
      expect(Math.abs(figures.floorPerHour)).toBeLessThan(MiB);
      expect(figures.peak).toBeGreaterThan(390 * MiB);
      expect(figures.ok).toBe(true);
    }
  });

  it('calls a floor that rises more than 32 MiB above the baseline growth, though every tooth looks alike', () => {
    const figures = soakFigures(sawtooth(48));
    expect(figures.floorPerHour / MiB).toBeCloseTo(48, 0);
    expect(figures.ok).toBe(false);
    expect(soakFigures(sawtooth(16)).ok).toBe(true);
  });

  it('calls a plateau with deep dips early in the load flat (the hour run of 2026-11-28, its sixths floors)', () => {
    const floors = [379.3, 401.2, 501.5, 510.7, 511.4, 514.7];
    const samples: RssSample[] = [{ seconds: 0, rss: 521.5 * MiB, dynamodb: 0, phase: 'warm' }];
    for (const [i, floor] of floors.entries()) {
      for (let k = 0; k < 60; k++) {
        const rss = k === 30 ? floor : Math.max(floor, 515 + (k % 3));
        samples.push({ seconds: i * 600 + k * 10 + 10, rss: rss * MiB, dynamodb: 0, phase: 'load' });
      }
    }
    samples.push({ seconds: HOUR + 60, rss: 514.9 * MiB, dynamodb: 0, phase: 'idle' });
    const figures = soakFigures(samples);
    expect(figures.floors.map((s) => s.rss / MiB)).toEqual(floors);
    expect(figures.floorPerHour / MiB).toBeGreaterThan(150);
    expect(figures.ok).toBe(true);
  });

  it('takes the last sample idle after the warm-up as the baseline, and judges nothing along the warm-up', () => {
    const figures = soakFigures(sawtooth(0));
    expect(figures.warm.seconds).toBe(0);
    expect(figures.fill).toHaveLength(2);
    expect(figures.ok).toBe(true);
  });

  it('calls memory kept after the load growth, even on a level floor', () => {
    expect(soakFigures(sawtooth(0, 40)).ok).toBe(false);
    expect(soakFigures(sawtooth(0, 20)).ok).toBe(true);
  });
});

describe('floorsOf', () => {
  it('takes the lowest sample of each sixth, in time order', () => {
    const loaded = sawtooth(12).filter((s) => s.phase === 'load');
    const floors = floorsOf(loaded);
    expect(floors.map((s) => s.seconds)).toEqual([...floors.map((s) => s.seconds)].sort((a, b) => a - b));
    for (const [i, floor] of floors.entries()) {
      const span = loaded.slice(i * 60, (i + 1) * 60);
      expect(floor.rss).toBe(Math.min(...span.map((s) => s.rss)));
    }
  });

  it('keeps every sample of a run shorter than six', () => {
    const loaded = sawtooth(0)
      .filter((s) => s.phase === 'load')
      .slice(0, 4);
    expect(floorsOf(loaded)).toEqual(loaded);
  });
});
