/**
 * The progress a terminal shows (the CLI, `npm start`): a bar with the objects done and the time left, from
 * `cli-progress`. Apart from progress.ts so that what runs without a terminal (the upload builder's Lambda
 * function, which imports progress.ts) never bundles it: test/infra/upload-builder.test.ts checks the bundle.
 */
import cliProgress from 'cli-progress';
import type { PublishProgress } from '../publish/types.js';
import {
  type ClosableProgress,
  formatRemaining,
  type LogProgressOptions,
  logProgress,
  type RemainingEstimate,
  remainingEstimate,
} from './progress.js';

/** Options of the terminal bar. */
export interface TerminalProgressOptions {
  /** Milliseconds from any origin; tests inject one. */
  now?: () => number;
}

/**
 * A progress bar on `stream` when it is a terminal, otherwise nothing (logs get the summary line only). The
 * bar shows the objects done and the time left.
 * @example const progress = terminalProgress(process.stderr);
 */
export function terminalProgress(
  stream: NodeJS.WriteStream,
  options: TerminalProgressOptions = {},
): PublishProgress | undefined {
  if (!stream.isTTY) return undefined;
  const now = options.now ?? (() => performance.now());
  let bar: cliProgress.SingleBar | undefined;
  let estimate: RemainingEstimate | undefined;
  let shownAt = 0;
  return {
    note(step) {
      stream.write(`${step}…\n`);
    },
    start(phase, total) {
      estimate = remainingEstimate(total, now());
      bar = new cliProgress.SingleBar(
        {
          stream,
          // The bar's own ETA averages the last few updates, far too few at hundreds a second.
          format: `${phase} [{bar}] {percentage}% | {value}/{total} objects | {duration_formatted} | {left}`,
          hideCursor: true,
          clearOnComplete: true,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(total, 0, { left: formatRemaining(undefined) });
    },
    update(done) {
      const at = now();
      estimate?.observe(done, at);
      // Formatting the estimate each update would cost more than the bar: once a second is enough.
      if (at - shownAt >= 1000) {
        shownAt = at;
        bar?.update(done, { left: formatRemaining(estimate?.remainingMs(at)) });
      } else bar?.update(done);
    },
    stop() {
      bar?.stop();
      bar = undefined;
      estimate = undefined;
    },
  };
}

/**
 * The progress `npm start` shows on `stream`: the bar on a terminal, lines in a log. `close` it after the
 * publish.
 * @example
 * const progress = publishProgress(process.stderr);
 * try { await publishCatalogue({ ...options, progress }); } finally { progress.close(); }
 */
export function publishProgress(
  stream: NodeJS.WriteStream,
  options: LogProgressOptions = {},
): ClosableProgress {
  const bar = terminalProgress(stream, options.now ? { now: options.now } : {});
  return bar ? { ...bar, close: () => bar.stop() } : logProgress(stream, options);
}
