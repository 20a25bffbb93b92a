/** Progress and summary output of the CLI: a bar on a terminal, one summary line otherwise. */
import cliProgress from 'cli-progress';
import type { IndexEntry } from '../proxy/format.js';
import type { PublishProgress, PublishSummary } from './publish.js';

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
          format: `${phase} [{bar}] {percentage}% | {value}/{total} variants | {duration_formatted}`,
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
  for (const { key, before, after } of summary.changes ?? []) {
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
  return lines;
}
