/**
 * What `npm start` prints while it publishes into a log (not a terminal): steps, the total, a count line at
 * most every interval, a last line; and the notice before a big first publish. The clock is injected.
 */
import { describe, expect, it } from 'vitest';
import {
  BIG_CATALOGUE_MODULES,
  firstPublishNotice,
  logProgress,
  publishProgress,
} from '../../builder/progress.js';

function recorder() {
  const lines: string[] = [];
  let now = 1_000;
  return {
    lines,
    sink: { write: (text: string) => lines.push(text) },
    clock: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('logProgress', () => {
  it('prints the total, then done / total at most every interval, then the end', () => {
    const { lines, sink, clock, advance } = recorder();
    const progress = logProgress(sink, { intervalMs: 5000, now: clock });

    progress.note('listing what the target holds');
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
    progress.note('collecting unreferenced objects');

    expect(lines).toEqual([
      'listing what the target holds…\n',
      'rendering and uploading: 80,000 to do…\n',
      'rendering and uploading: 12,345 / 80,000 (15 %), 5 s\n',
      'rendering and uploading: 30,001 / 80,000 (37 %), 10 s\n',
      'rendering and uploading: 80,000 / 80,000 (100 %), 17 s\n',
      'collecting unreferenced objects…\n',
    ]);
  });

  it('ends a phase with the count reached since the last line', () => {
    const { lines, sink, clock, advance } = recorder();
    const progress = logProgress(sink, { intervalMs: 5000, now: clock });

    progress.start('rendering', 900);
    advance(2500);
    progress.update(640);
    progress.stop();

    expect(lines).toEqual(['rendering: 900 to do…\n', 'rendering: 640 / 900 (71 %), 3 s\n']);
  });

  it('says nothing for updates outside a phase, nor at the end of a phase with nothing rendered', () => {
    const { lines, sink, clock, advance } = recorder();
    const progress = logProgress(sink, { now: clock });

    advance(60_000);
    progress.update(5);
    progress.stop();
    progress.start('rendering', 74_000); // a publish that reuses every object: no update at all
    advance(60_000);
    progress.stop();
    progress.stop();

    expect(lines).toEqual(['rendering: 74,000 to do…\n']);
  });

  it('is what npm start uses when stderr is not a terminal', () => {
    const { lines, clock } = recorder();
    const stream = {
      isTTY: false,
      write: (text: string) => lines.push(text),
    } as unknown as NodeJS.WriteStream;

    const progress = publishProgress(stream, { now: clock });
    progress.start('rendering and uploading', 3);

    expect(lines).toEqual(['rendering and uploading: 3 to do…\n']);
  });
});

describe('firstPublishNotice', () => {
  it(`says how long a first start takes above ${BIG_CATALOGUE_MODULES} modules, and nothing below`, () => {
    expect(firstPublishNotice(204)).toBeUndefined();
    expect(firstPublishNotice(BIG_CATALOGUE_MODULES)).toBeUndefined();
    expect(firstPublishNotice(25_000)).toBe(
      'first start: publishing 25,000 modules takes a few minutes; later starts reuse what is published',
    );
  });
});
