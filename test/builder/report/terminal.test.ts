/**
 * The progress of the CLI and `npm start` by where it goes: lines in a log, the bar on a terminal; and that
 * the bar's package stays out of what the upload builder's Lambda function imports.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { publishProgress } from '../../../builder/report/terminal.js';

/** A stream that records what is written, a terminal or not. */
function stream(isTTY: boolean) {
  const written: string[] = [];
  const fake = {
    isTTY,
    columns: 120,
    write: (text: string) => {
      written.push(text);
      return true;
    },
    cursorTo: () => true,
    clearLine: () => true,
    moveCursor: () => true,
    on: () => fake,
    removeListener: () => fake,
  };
  return { written, stream: fake as unknown as NodeJS.WriteStream };
}

describe('publishProgress', () => {
  it('is lines in a log when the stream is not a terminal (npm start in a log)', () => {
    const { written, stream: log } = stream(false);
    let now = 0;
    const progress = publishProgress(log, { now: () => now, every: () => () => {} });
    progress.start('rendering and uploading', 3);
    now += 5000;
    progress.update(2);
    progress.close();

    expect(written).toEqual([
      'rendering and uploading: 3 to do… (objects)\n',
      'rendering and uploading: 2 / 3 objects (66 %), 5 s, about 5 s left\n',
    ]);
  });

  it('is a bar with the objects done when the stream is a terminal', () => {
    const { written, stream: terminal } = stream(true);
    const progress = publishProgress(terminal, { now: () => 0 });
    progress.note('listing what the target holds');
    progress.start('rendering and uploading', 4);
    progress.update(1);
    progress.stop();
    progress.close();

    expect(written[0]).toBe('listing what the target holds…\n');
    expect(written.join('')).toContain('rendering and uploading [');
    expect(written.join('')).toContain('1/4 objects');
  });
});

describe('the terminal code', () => {
  it('is imported by the CLIs only, never by what the upload builder function imports', () => {
    const imports = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), 'utf8');

    expect(imports('builder/report/progress.ts')).not.toMatch(/from 'cli-progress'|terminal\.js/);
    expect(imports('builder/lambda.ts')).not.toContain('terminal.js');
    expect(imports('builder/report/terminal.ts')).toContain("from 'cli-progress'");
  });
});
