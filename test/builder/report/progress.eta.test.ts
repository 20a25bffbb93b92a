/**
 * The time left that progress shows, replayed on a recorded 25,000-module first start (first-start-25k.trace.json)
 * with an injected clock. Counted in render jobs, as before, the share done ran far behind the share of time
 * (three quarters of the jobs repeat an object and come last, at almost no cost) and the time left came out 3 to
 * 5 times too long; counted in the distinct objects a first start writes, both track the time.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { logProgress, remainingEstimate } from '../../../builder/report/progress.js';

interface Trace {
  objects: number;
  jobs: number;
  phase_seconds: number;
  /** [seconds into the phase, distinct objects written, render jobs done] */
  points: [number, number, number][];
}

const trace = JSON.parse(
  readFileSync(join(import.meta.dirname, 'first-start-25k.trace.json'), 'utf8'),
) as Trace;
const end = trace.phase_seconds;

/** Estimated ÷ actual time left at each tenth of the phase from 10 % to 90 %, counting with `count`. */
function ratios(count: (point: [number, number, number]) => number, total: number): number[] {
  const estimate = remainingEstimate(total, 0);
  const found: number[] = [];
  let next = 0.1;
  for (const point of trace.points) {
    const ms = point[0] * 1000;
    estimate.observe(count(point), ms);
    if (point[0] >= next * end && next < 0.95) {
      found.push(estimate.remainingMs(ms)! / 1000 / (end - point[0]));
      next += 0.1;
    }
  }
  return found;
}

describe('the time left on a recorded 25,000-module first start', () => {
  it('counted in objects, the share done stays within 7 points of the share of time; in jobs it was 39 behind', () => {
    const behind = (count: (point: [number, number, number]) => number, total: number) =>
      Math.max(...trace.points.map((point) => Math.abs(count(point) / total - point[0] / end)));

    expect(behind(([, objects]) => objects, trace.objects)).toBeLessThan(0.07);
    expect(behind(([, , jobs]) => jobs, trace.jobs)).toBeGreaterThan(0.38);
  });

  it('counted in objects, the estimate is within -40 % / +30 % of the real time left from 10 % to 90 % of the phase', () => {
    const byObjects = ratios(([, objects]) => objects, trace.objects);
    const byJobs = ratios(([, , jobs]) => jobs, trace.jobs);

    expect(byObjects).toHaveLength(9);
    for (const ratio of byObjects) expect(ratio).toBeGreaterThan(0.6);
    for (const ratio of byObjects) expect(ratio).toBeLessThan(1.3);
    // The old count: 2.9 to 5 times the real time left.
    expect(Math.min(...byJobs)).toBeGreaterThan(2.5);
  });

  it('prints the time left in the log lines, with the clock injected', () => {
    const lines: string[] = [];
    let now = 0;
    const progress = logProgress(
      { write: (text: string) => lines.push(text.trim()) },
      {
        now: () => now,
        every: () => () => {},
      },
    );
    progress.start('rendering and uploading', trace.objects);
    for (const [seconds, objects] of trace.points) {
      now = seconds * 1000;
      progress.update(objects);
    }
    progress.stop();
    progress.close();

    expect(lines[0]).toBe('rendering and uploading: 79,569 to do… (objects)');
    expect(lines[1]).toMatch(
      /^rendering and uploading: [\d,]+ \/ 79,569 objects \(\d+ %\), 5 s, about \d+ min( \d+ s)? left$/,
    );
    const halfway = lines.find((line) => / 18\d s, /.test(line));
    expect(halfway).toMatch(/ about [23] min( \d+ s)? left$/); // 182 s were left
    expect(lines.at(-1)).toMatch(/^rendering and uploading: 79,569 \/ 79,569 objects \(100 %\), 36\d s$/);
  });
});
