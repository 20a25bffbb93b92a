/**
 * What `npm start` prints while it publishes into a log (not a terminal): steps, the total, a line at most
 * (and, by the timer, at least) every interval, a last line; and the notice before a big first publish. The
 * clock and the timer are injected: the test ticks by hand.
 */
import { describe, expect, it } from 'vitest';
import {
  BIG_CATALOGUE_MODULES,
  firstPublishNotice,
  type LogProgressOptions,
  logProgress,
} from '../../../builder/report/progress.js';

function recorder() {
  const lines: string[] = [];
  let now = 1_000;
  const timer = { tick: undefined as (() => void) | undefined, intervalMs: 0, cancelled: false };
  const options: LogProgressOptions = {
    intervalMs: 5000,
    now: () => now,
    every: (ms, tick) => {
      timer.tick = tick;
      timer.intervalMs = ms;
      return () => {
        timer.cancelled = true;
      };
    },
  };
  return {
    lines,
    sink: { write: (text: string) => lines.push(text) },
    options,
    timer,
    advance: (ms: number) => {
      now += ms;
    },
    /** Advance the clock and fire the timer, as an interval timer would. */
    tick: (ms = 5000) => {
      now += ms;
      timer.tick?.();
    },
  };
}

describe('logProgress', () => {
  it('prints the total, then done / total at most every interval, then the end', () => {
    const { lines, sink, options, advance } = recorder();
    const progress = logProgress(sink, options);

    progress.start('rendering and uploading', 80_000);
    advance(1000);
    progress.update(2_000); // 1 s after the last line: quiet
    advance(4000);
    progress.update(12_345); // 5 s: a line
    advance(4999);
    progress.update(30_000); // 4.999 s: quiet
    advance(1);
    progress.update(30_001); // 5 s: a line
    advance(7000);
    progress.update(80_000);
    progress.stop();

    expect(lines).toEqual([
      'rendering and uploading: 80,000 to do… (objects)\n',
      'rendering and uploading: 12,345 / 80,000 objects (15 %), 5 s, about 25 s left\n',
      'rendering and uploading: 30,001 / 80,000 objects (37 %), 10 s, about 15 s left\n',
      'rendering and uploading: 80,000 / 80,000 objects (100 %), 17 s\n',
    ]);
  });

  it('keeps a log alive on the timer: the time so far in a step, the count in a stalled phase', () => {
    const { lines, sink, options, timer, tick } = recorder();
    const progress = logProgress(sink, options);

    progress.note('listing what the target holds');
    tick(2000); // not due yet
    tick(3000);
    tick(4500); // a little early (a busy loop delays ticks unevenly): still due
    tick(3000); // not due
    progress.start('rendering and uploading', 900);
    progress.update(300);
    tick(); // no update for 5 s (say, a slow upload): the count anyway
    progress.stop();
    progress.note('collecting unreferenced objects');
    progress.close();
    tick();

    expect(timer.intervalMs).toBe(5000);
    expect(timer.cancelled).toBe(true);
    expect(lines).toEqual([
      'listing what the target holds…\n',
      'listing what the target holds: 5 s so far\n',
      'listing what the target holds: 10 s so far\n',
      'rendering and uploading: 900 to do… (objects)\n',
      'rendering and uploading: 300 / 900 objects (33 %), 5 s, about 10 s left\n',
      'collecting unreferenced objects…\n',
    ]);
  });

  it('ends a phase with the count reached since the last line', () => {
    const { lines, sink, options, advance } = recorder();
    const progress = logProgress(sink, options);

    progress.start('rendering', 900);
    advance(2500);
    progress.update(640);
    progress.stop();

    expect(lines).toEqual([
      'rendering: 900 to do… (objects)\n',
      'rendering: 640 / 900 objects (71 %), 3 s, estimating the time left\n',
    ]);
  });

  it('says nothing for updates outside a phase, nor at the end of a phase with nothing rendered', () => {
    const { lines, sink, options, advance } = recorder();
    const progress = logProgress(sink, options);

    advance(60_000);
    progress.update(5);
    progress.stop();
    progress.start('rendering', 74_000); // a publish that reuses every object: no update at all
    advance(4000);
    progress.stop();
    progress.stop();

    expect(lines).toEqual(['rendering: 74,000 to do… (objects)\n']);
  });

  it('quietStart (the CLI in a log): nothing until a step or phase has lasted the interval, then a line every interval', () => {
    const { lines, sink, options, tick } = recorder();
    const progress = logProgress(sink, { ...options, quietStart: true });

    progress.note('reading the current version');
    progress.note('validating my-catalogue'); // quick steps: nothing
    progress.start('rendering and uploading', 900);
    progress.update(100);
    progress.stop(); // a quick phase: not even its end
    progress.note('listing what the target holds');
    tick(3000); // not due
    tick(2000); // 5 s into the step
    progress.start('rendering and uploading', 80_000);
    progress.update(8_000);
    tick(); // 5 s into the phase
    progress.update(80_000);
    progress.stop();
    progress.close();

    expect(lines).toEqual([
      'listing what the target holds: 5 s so far\n',
      'rendering and uploading: 8,000 / 80,000 objects (10 %), 5 s, about 45 s left\n',
      'rendering and uploading: 80,000 / 80,000 objects (100 %), 5 s\n',
    ]);
  });

  it('starts no timer until it is used', () => {
    const { sink, options, timer } = recorder();

    logProgress(sink, options).close();

    expect(timer.tick).toBeUndefined();
  });
});

describe('firstPublishNotice', () => {
  it(`says how long a first start takes above ${BIG_CATALOGUE_MODULES} modules, and nothing below`, () => {
    expect(firstPublishNotice(204)).toBeUndefined();
    expect(firstPublishNotice(BIG_CATALOGUE_MODULES)).toBeUndefined();
    expect(firstPublishNotice(25_000)).toBe(
      'first start: publishing 25,000 modules takes a few minutes; later starts serve what is published',
    );
    expect(firstPublishNotice(25_000, 1.7e9)).toBe(
      'first start: publishing 25,000 modules takes a few minutes and about 1.7 GB of disk; later starts serve what is published',
    );
  });
});
