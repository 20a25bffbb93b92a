/**
 * Progress and summary output of the CLI, `npm start` and the upload builder: in a log, a line every few
 * seconds; then one summary line. Both say how much is left, estimated from the recent pace. The bar a terminal
 * shows is terminal.ts's, kept apart so the upload builder's Lambda bundle carries no terminal code.
 *
 * The count is of distinct objects (builder/render/full.ts): a first publish spends its time writing objects,
 * one write each, so the share of objects done tracks the share of time, and a pace in objects per second
 * predicts the rest. (Counted in render jobs, a 25,000-module first start showed 7 % after 60 s of ~170 and
 * 51 % after 140 s: three quarters of the jobs repeat an object and come last, costing almost nothing.)
 */
import type { IndexEntry } from '../../store/pointer.js';
import type { PublishProgress, PublishSummary } from '../publish/types.js';

/** The pace is measured over the last half of the phase, and at least this long. */
const PACE_WINDOW_MIN_MS = 30_000;
/** No estimate before this much of a phase has passed: the first seconds say little about the pace. */
const ESTIMATE_AFTER_MS = 5_000;

/** Estimates the time left in a counted phase from its recent pace. */
export interface RemainingEstimate {
  /** Record that `done` of the total are done at `now` (milliseconds, any origin). */
  observe(done: number, now: number): void;
  /** Milliseconds left at `now`, or undefined: too early, or no progress lately (a stall). */
  remainingMs(now: number): number | undefined;
}

/**
 * The time left in a phase of `total` units started at `startedAt`: the units left at the pace of the last
 * half of the phase (at least the last 30 s). A long window rides out the pauses of a busy machine; half the
 * phase forgets its start, whose units may be cheaper or dearer than the rest. Replayed on a recorded
 * 25,000-module first start, it stays within about a fifth of the real time left once past 10 % (see
 * test/builder/report/progress.eta.test.ts).
 * @example
 * const estimate = remainingEstimate(80_000, 0);
 * estimate.observe(8_000, 10_000);
 * estimate.remainingMs(10_000); // → 90000
 */
export function remainingEstimate(total: number, startedAt: number): RemainingEstimate {
  // One sample a second (and the last), oldest first; older than the window they are dropped.
  const samples: { at: number; done: number }[] = [{ at: startedAt, done: 0 }];
  let latest = { at: startedAt, done: 0 };
  const windowStart = (now: number) => now - Math.max(PACE_WINDOW_MIN_MS, (now - startedAt) / 2);
  return {
    observe(done, now) {
      latest = { at: now, done };
      if (now - samples[samples.length - 1]!.at >= 1000) samples.push(latest);
      // The window's start only moves forward, so a dropped sample is never needed again.
      while (samples.length > 2 && samples[1]!.at <= windowStart(now)) samples.shift();
    },
    remainingMs(now) {
      if (latest.done >= total) return 0;
      if (now - startedAt < ESTIMATE_AFTER_MS) return undefined;
      const from = samples[0]!;
      const pace = (latest.done - from.done) / (now - from.at);
      return pace > 0 ? (total - latest.done) / pace : undefined;
    },
  };
}

/**
 * A time left for humans, rounded so that it does not flicker: 5 s steps below a minute, 10 s below ten
 * minutes, then minutes.
 * @example formatRemaining(42_000) // → 'about 40 s left'
 * @example formatRemaining(131_000) // → 'about 2 min 10 s left'
 */
export function formatRemaining(ms: number | undefined): string {
  if (ms === undefined) return 'estimating the time left';
  const seconds = ms / 1000;
  if (seconds < 60) return `about ${Math.max(5, Math.round(seconds / 5) * 5)} s left`;
  if (seconds < 600) {
    const rounded = Math.round(seconds / 10) * 10;
    const rest = rounded % 60;
    return `about ${Math.floor(rounded / 60)} min${rest ? ` ${rest} s` : ''} left`;
  }
  const minutes = Math.round(seconds / 60);
  return minutes < 60
    ? `about ${minutes} min left`
    : `about ${Math.floor(minutes / 60)} h ${minutes % 60} min left`;
}

/** Where progress lines go: a stream, or anything with its `write` (tests). */
export interface LineSink {
  write(text: string): unknown;
}

export interface LogProgressOptions {
  /** At most one line per interval (default 5 s). */
  intervalMs?: number;
  /**
   * Say nothing of a step or phase until it has lasted the interval (the CLI in a log: a quick publish prints
   * its summary line alone, a long one a line every interval). Default false: each step is named at its start
   * (npm start).
   */
  quietStart?: boolean;
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
 * every `intervalMs` (done / total objects in a phase with the time left, the time so far in a step without a
 * count, such as listing), and the count reached when the phase ends (unless the last line said it already,
 * or nothing needed rendering: a publish that reuses everything). So a log is never silent for longer than
 * the interval.
 * @example
 * const progress = logProgress(process.stderr);
 * // listing what the target holds…
 * // listing what the target holds: 5 s so far
 * // rendering and uploading: 80,000 to do… (objects)
 * // rendering and uploading: 12,345 / 80,000 objects (15 %), 30 s, about 2 min 40 s left
 * progress.close();
 */
export function logProgress(sink: LineSink, options: LogProgressOptions = {}): ClosableProgress {
  return new ProgressLog(sink, options);
}

/**
 * The state behind logProgress's lines: the step or the counted phase under way, and when a line was last
 * written. Each method is one event of a publish (a step named, a phase started, a count, its end) or the
 * timer's tick.
 */
class ProgressLog implements ClosableProgress {
  readonly #sink: LineSink;
  readonly #options: LogProgressOptions;
  readonly #intervalMs: number;
  readonly #now: () => number;
  #step: string | undefined;
  #phase: string | undefined;
  #total = 0;
  #done = 0;
  #started = 0;
  #printedAt = 0;
  #printedDone = 0;
  /** A line of the current phase was written (with quietStart, its end is said only then). */
  #shown = false;
  #estimate: RemainingEstimate | undefined;
  #cancel: (() => void) | undefined;

  constructor(sink: LineSink, options: LogProgressOptions) {
    this.#sink = sink;
    this.#options = options;
    this.#intervalMs = options.intervalMs ?? 5000;
    this.#now = options.now ?? (() => performance.now());
  }

  note(name: string): void {
    this.#step = name;
    this.#begin();
    if (this.#options.quietStart) this.#printedAt = this.#now();
    else this.#write(`${name}…`);
  }

  start(name: string, planned: number): void {
    this.#phase = name;
    this.#total = planned;
    this.#done = this.#printedDone = 0;
    this.#begin();
    this.#estimate = remainingEstimate(this.#total, this.#started);
    if (this.#options.quietStart) this.#printedAt = this.#now();
    else this.#write(`${name}: ${count(planned)} to do… (objects)`);
  }

  update(value: number): void {
    this.#done = value;
    this.#estimate?.observe(value, this.#now());
    // Also here, not only on the timer: a busy render loop may hold timers back.
    if (this.#phase !== undefined && this.#due()) this.#countLine();
  }

  stop(): void {
    const unsaid = this.#done !== this.#printedDone && (this.#shown || !this.#options.quietStart);
    if (this.#phase !== undefined && unsaid) this.#countLine();
    this.#phase = undefined;
    this.#step = undefined;
    this.#estimate = undefined;
  }

  close(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#phase = this.#step = undefined;
  }

  /** A step or phase begins: its clock starts, and the timer if it is not running yet. */
  #begin(): void {
    this.#shown = false;
    this.#started = this.#now();
    this.#cancel ??= (this.#options.every ?? everyInterval)(this.#intervalMs, () => this.#tick());
  }

  #tick(): void {
    // A tick a little early (the last line came from an update between ticks) still counts, or the
    // interval would double.
    if (!this.#due(this.#intervalMs / 5)) return;
    if (this.#phase !== undefined) this.#countLine();
    else if (this.#step !== undefined) this.#write(`${this.#step}: ${this.#seconds()} s so far`);
  }

  /** The phase's line: done / total, the share, the time so far and the time left. */
  #countLine(): void {
    const [done, total] = [this.#done, this.#total];
    const percent = total === 0 ? 100 : Math.floor((done * 100) / total);
    const left = done < total ? `, ${formatRemaining(this.#estimate?.remainingMs(this.#now()))}` : '';
    this.#write(
      `${this.#phase}: ${count(done)} / ${count(total)} objects (${percent} %), ${this.#seconds()} s${left}`,
    );
    this.#printedDone = done;
  }

  #due(slack = 0): boolean {
    return this.#now() - this.#printedAt >= this.#intervalMs - slack;
  }

  #seconds(): number {
    return Math.round((this.#now() - this.#started) / 1000);
  }

  #write(text: string): void {
    this.#sink.write(`${text}\n`);
    this.#printedAt = this.#now();
    this.#shown = true;
  }
}

/** Above this many modules a first publish takes minutes (≈170 s at 25,000 on 2 cores), so say so first. */
export const BIG_CATALOGUE_MODULES = 5000;

/**
 * What to say before the first publish of a big catalogue, or undefined for a small one; with the disk it
 * will take when the caller can estimate it.
 * @example firstPublishNotice(25_000, 1.7e9)
 * // → 'first start: publishing 25,000 modules takes a few minutes and about 1.7 GB of disk; later starts serve what is published'
 */
export function firstPublishNotice(modules: number, diskBytes?: number): string | undefined {
  if (modules <= BIG_CATALOGUE_MODULES) return undefined;
  const disk = diskBytes === undefined ? '' : ` and about ${formatBytes(diskBytes)} of disk`;
  return `first start: publishing ${count(modules)} modules takes a few minutes${disk}; later starts serve what is published`;
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
