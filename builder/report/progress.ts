/**
 * Progress and summary output of the CLI and `npm start`: a bar on a terminal; for `npm start` in a log, a
 * line every few seconds; then one summary line.
 */
import cliProgress from 'cli-progress';
import type { IndexEntry } from '../../store/pointer.js';
import type { PublishProgress, PublishSummary } from '../publish/types.js';

/**
 * A progress bar on `stream` when it is a terminal, otherwise nothing (logs get the summary line only).
 * @example const progress = terminalProgress(process.stderr);
 */
export function terminalProgress(stream: NodeJS.WriteStream): PublishProgress | undefined {
  if (!stream.isTTY) return undefined;
  let bar: cliProgress.SingleBar | undefined;
  return {
    note(step) {
      stream.write(`${step}…\n`);
    },
    start(phase, total) {
      bar = new cliProgress.SingleBar(
        {
          stream,
          format: `${phase} [{bar}] {percentage}% | {value}/{total} | {duration_formatted}`,
          hideCursor: true,
          clearOnComplete: true,
        },
        cliProgress.Presets.shades_classic,
      );
      bar.start(total, 0);
    },
    update(done) {
      bar?.update(done);
    },
    stop() {
      bar?.stop();
      bar = undefined;
    },
  };
}

/** Where progress lines go: a stream, or anything with its `write` (tests). */
export interface LineSink {
  write(text: string): unknown;
}

export interface LogProgressOptions {
  /** At most one line per interval (default 5 s). */
  intervalMs?: number;
  /** Milliseconds from any origin; tests inject one. */
  now?: () => number;
  /**
   * Call `tick` every `ms` until the returned function is called. Default: an unref'd `setInterval`, so a
   * forgotten `close` never keeps the process alive. Tests inject one and tick by hand.
   */
  every?: (ms: number, tick: () => void) => () => void;
}

/** Progress that may hold a timer: `close` it when the publish is over (done or failed). */
export interface ClosableProgress extends PublishProgress {
  close(): void;
}

const count = (value: number) => value.toLocaleString('en-US');

function everyInterval(ms: number, tick: () => void): () => void {
  const timer = setInterval(tick, ms);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Progress as plain lines for a log or a pipe: each step, the phase and its total when it starts, then a line
 * every `intervalMs` (done / total in a phase, the time so far in a step without a count, such as listing),
 * and the count reached when the phase ends (unless the last line said it already, or nothing needed
 * rendering: a publish that reuses everything). So a log is never silent for longer than the interval. The
 * unit is the publisher's (today: variants and details to render, identical ones counted separately, so more
 * than the distinct objects of the summary line), hence no unit in the line.
 * @example
 * const progress = logProgress(process.stderr);
 * // listing what the target holds…
 * // listing what the target holds: 5 s so far
 * // rendering and uploading: 80,000 to do…
 * // rendering and uploading: 12,345 / 80,000 (15 %), 5 s
 * progress.close();
 */
export function logProgress(sink: LineSink, options: LogProgressOptions = {}): ClosableProgress {
  const intervalMs = options.intervalMs ?? 5000;
  const now = options.now ?? (() => performance.now());
  let step: string | undefined;
  let phase: string | undefined;
  let total = 0;
  let done = 0;
  let started = 0;
  let printedAt = 0;
  let printedDone = 0;
  let cancel: (() => void) | undefined;
  const write = (text: string) => {
    sink.write(`${text}\n`);
    printedAt = now();
  };
  const seconds = () => Math.round((now() - started) / 1000);
  const line = () => {
    const percent = total === 0 ? 100 : Math.floor((done * 100) / total);
    write(`${phase}: ${count(done)} / ${count(total)} (${percent} %), ${seconds()} s`);
    printedDone = done;
  };
  const due = (slack = 0) => now() - printedAt >= intervalMs - slack;
  const tick = () => {
    // A tick a little early (the last line came from an update between ticks) still counts, or the
    // interval would double.
    if (!due(intervalMs / 5)) return;
    if (phase !== undefined) line();
    else if (step !== undefined) write(`${step}: ${seconds()} s so far`);
  };
  const begin = () => {
    started = now();
    cancel ??= (options.every ?? everyInterval)(intervalMs, tick);
  };
  return {
    note(name) {
      step = name;
      begin();
      write(`${name}…`);
    },
    start(name, planned) {
      phase = name;
      total = planned;
      done = printedDone = 0;
      begin();
      write(`${phase}: ${count(total)} to do…`);
    },
    update(value) {
      done = value;
      // Also here, not only on the timer: a busy render loop may hold timers back.
      if (phase !== undefined && due()) line();
    },
    stop() {
      if (phase !== undefined && done !== printedDone) line();
      phase = undefined;
      step = undefined;
    },
    close() {
      cancel?.();
      cancel = undefined;
      phase = step = undefined;
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
  const bar = terminalProgress(stream);
  return bar ? { ...bar, close: () => bar.stop() } : logProgress(stream, options);
}

/** Above this many modules a first publish takes minutes (≈198 s at 25,000 on 2 cores), so say so first. */
export const BIG_CATALOGUE_MODULES = 5000;

/**
 * What to say before the first publish of a big catalogue, or undefined for a small one.
 * @example firstPublishNotice(25_000)
 * // → 'first start: publishing 25,000 modules takes a few minutes; later starts reuse what is published'
 */
export function firstPublishNotice(modules: number): string | undefined {
  if (modules <= BIG_CATALOGUE_MODULES) return undefined;
  return `first start: publishing ${count(modules)} modules takes a few minutes; later starts reuse what is published`;
}

/**
 * Bytes for humans, in powers of 1000 like most storage consoles.
 * @example formatBytes(1_234_567) // → '1.2 MB'
 */
export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/**
 * The one-line summary of a publish or a dry run.
 * @example
 * summaryLine(summary, 's3://bucket/catalogue/')
 * // → 'published Vx… to s3://bucket/catalogue/: 12 objects added (48.1 kB), 871 unchanged, 12 removed (47.9 kB), 1 version file removed, 0.8 s'
 */
export function summaryLine(summary: PublishSummary, target: string): string {
  const { objects, bytes } = summary;
  const versions = `${summary.versionsRemoved} version file${summary.versionsRemoved === 1 ? '' : 's'}`;
  const seconds = `${summary.seconds.toFixed(1)} s`;
  if (summary.dryRun) {
    return (
      `dry run for ${target}: version ${summary.version}${summary.pointerChanged ? '' : ' (already current)'}; ` +
      `would add ${objects.added} objects (${formatBytes(bytes.added)}), keep ${objects.unchanged} unchanged, ` +
      `remove ${objects.removed} objects (${formatBytes(bytes.removed)}) and ${versions}; nothing written, ${seconds}`
    );
  }
  return (
    `${summary.pointerChanged ? 'published' : 'already current:'} ${summary.version} to ${target}: ` +
    `${objects.added} objects added (${formatBytes(bytes.added)}), ${objects.unchanged} unchanged, ` +
    `${objects.removed} removed (${formatBytes(bytes.removed)}), ${versions} removed, ${seconds}`
  );
}

const describeEntry = (entry: IndexEntry) =>
  typeof entry === 'string' ? entry : `${entry[0]} (${entry[1]} record${entry[1] === 1 ? '' : 's'})`;

/**
 * What `--verbose` prints before the summary: one line per changed index key, then one per upload.
 * @example
 * explainLines(summary)
 * // → ['changed  modules?sort=id: AAA… (204 records) → BBB… (205 records)', …, 'upload   BBB… 61.2 kB', …]
 */
export function explainLines(summary: PublishSummary): string[] {
  const lines: string[] = [];
  const verb = summary.dryRun ? 'would ' : '';
  if (summary.changes === undefined) lines.push('(no previous version to compare with: every key is new)');
  for (const { indexKey: key, before, after } of summary.changes ?? []) {
    if (before === undefined) lines.push(`added    ${key}: ${describeEntry(after!)}`);
    else if (after === undefined) lines.push(`removed  ${key}: ${describeEntry(before)}`);
    else lines.push(`changed  ${key}: ${describeEntry(before)} → ${describeEntry(after)}`);
  }
  for (const { objectId, size } of summary.uploads ?? []) {
    lines.push(`${verb}upload ${objectId} ${formatBytes(size)}`);
  }
  if (summary.mode !== 'incremental') {
    lines.push(`full build${summary.fullBuildReason ? ` (${summary.fullBuildReason})` : ''}`);
  }
  if (summary.modulesReused > 0) {
    lines.push(`${count(summary.modulesReused)} unchanged modules taken over from the current version`);
  }
  return lines;
}
