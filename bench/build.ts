/**
 * Section 1: the builder. Full builds of the snapshot into an empty directory, then incremental publishes
 * into the same directory, each after renaming one more module — all through the CLI in a child process,
 * timed, with peak RSS and CPU time from `/usr/bin/time -v` (or the child's own resourceUsage() where
 * /usr/bin/time is missing). Medians of the repeated runs are reported.
 */
import { existsSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Snapshot } from '../builder/snapshot/snapshot.js';
import { writeSnapshot } from '../builder/synthetic/generate.js';
import { versionOn } from '../test/helpers/builder.js';
import { runCommand } from './children.js';
import { loadAverage } from './machine.js';
import { profileTables, summarizeProfile } from './profile.js';
import { progress, type SectionResult } from './report.js';
import { REPO, type Settings, WORK } from './settings.js';
import { fmt, median, table } from './stats.js';

const TIME = '/usr/bin/time';
const FULL_BUILD_SECONDS = 60;
const FULL_BUILD_RSS_BYTES = 1.5e9;
const INCREMENTAL_SECONDS = 5;
/** An incremental publish may cost at most this share of a full build measured in the same run. */
const INCREMENTAL_SHARE = 0.1;

export interface Measured {
  command: string;
  wallSeconds: number;
  cpuSeconds: number;
  maxRssBytes: number;
  summary: string;
  loadAverage: string;
}

export const rel = (path: string) => relative(REPO, path) || '.';

/** The CLI as `npm run catalogue` runs it (tsx), in a child process, measured. */
const SYNC = '/bin/sync';

/** Write out dirty pages now (a build's 800 MB), so the kernel's writeback does not run into a measurement. */
export async function syncDisks(): Promise<void> {
  if (existsSync(SYNC)) await runCommand(SYNC, []);
}
let launcherReady = false;

/**
 * Run the builder's CLI as users do (`npm run catalogue` = node builder/launch.mjs, a bundle rebuilt when a
 * source changes; brought up to date before the first timed run). With `nodeFlags` (a profiled run) it runs
 * the TypeScript through tsx instead, so the profile names source files.
 */
export async function runCli(args: string[], nodeFlags: string[] = []): Promise<Measured> {
  const viaTsx = nodeFlags.length > 0;
  if (!viaTsx && !launcherReady) {
    const warm = await runCommand(process.execPath, ['builder/launch.mjs', '--help']);
    if (warm.code !== 0) throw new Error(`builder/launch.mjs --help failed: ${warm.stderr.slice(-2000)}`);
    launcherReady = true;
  }
  const node = [process.execPath, ...nodeFlags, ...(viaTsx ? ['--import', 'tsx'] : [])];
  const entry = viaTsx ? 'builder/cli.ts' : 'builder/launch.mjs';
  const useTime = existsSync(TIME);
  const argv = useTime
    ? [TIME, '-v', ...node, entry, ...args]
    : [process.execPath, ...nodeFlags, '--import', 'tsx', 'bench/max-rss.ts', entry, ...args];
  // Each timed run starts with the dirty pages of what ran before written out (the previous build's 800 MB, a
  // removed directory): otherwise a run pays for the writeback of the one before it.
  await syncDisks();
  const load = loadAverage();
  const result = await runCommand(argv[0]!, argv.slice(1));
  const shown = argv
    .map((a) => (a === process.execPath ? 'node' : a !== TIME && a.startsWith('/') ? rel(a) : a))
    .join(' ');
  if (result.code !== 0) {
    throw new Error(`${shown} exited with ${result.code}:\n${result.stderr.slice(-2000)}`);
  }
  const number = (pattern: RegExp) => Number(pattern.exec(result.stderr)?.[1] ?? Number.NaN);
  let maxRssBytes = number(/Maximum resident set size \(kbytes\): (\d+)/) * 1024;
  let cpuSeconds = number(/User time \(seconds\): ([\d.]+)/) + number(/System time \(seconds\): ([\d.]+)/);
  let wallSeconds = result.seconds;
  const elapsed = /Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)/.exec(result.stderr);
  if (elapsed) wallSeconds = elapsed[1]!.split(':').reduce((sum, part) => sum * 60 + Number(part), 0);
  if (!useTime) {
    maxRssBytes = number(/BENCH_MAX_RSS_KB=(\d+)/) * 1024;
    cpuSeconds = number(/BENCH_USER_S=([\d.]+)/) + number(/BENCH_SYSTEM_S=([\d.]+)/);
  }
  const summary = result.stdout.trim().split('\n').pop() ?? '';
  return { command: shown, wallSeconds, cpuSeconds, maxRssBytes, summary, loadAverage: load };
}

export async function listObjects(root: string): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  const dir = join(root, 'o');
  const names = await readdir(dir);
  for (let i = 0; i < names.length; i += 256) {
    const batch = names.slice(i, i + 256).filter((name) => !name.startsWith('.'));
    const stats = await Promise.all(batch.map((name) => stat(join(dir, name))));
    for (const [k, name] of batch.entries()) sizes.set(name, stats[k]!.size);
  }
  return sizes;
}

/** Every object the current version references (data objects and index shards). */
async function readIndex(root: string): Promise<Set<string>> {
  return versionOn(root).objectIds;
}

/** The snapshot with the module at `position` renamed. */
function renamed(snapshot: Snapshot, position: number, suffix: string): { snapshot: Snapshot; id: number } {
  const modules = [...snapshot.modules];
  const module = modules[position]!;
  modules[position] = { ...module, name: `${module.name} ${suffix}` };
  return { snapshot: { ...snapshot, modules }, id: module.id };
}

interface Incremental extends Measured {
  moduleId: number;
  written: number;
  writtenBytes: number;
  changed: number;
  onlyChanged: boolean;
}

async function profileOf(dir: string, title: string, wallSeconds: number): Promise<string> {
  const file = (await readdir(dir)).find((name) => name.endsWith('.cpuprofile'));
  if (!file) return '';
  return `\n### Profile: ${title} (\`--cpu-prof\`, ${fmt.s(wallSeconds)} s wall under the profiler)\n\n${profileTables(
    summarizeProfile(join(dir, file)),
  )}\n`;
}

export async function benchBuild(
  settings: Settings,
  snapshot: Snapshot,
  snapshotDir: string,
): Promise<SectionResult> {
  const out = join(WORK, 'build');
  const commands: string[] = [];
  const fulls: Measured[] = [];
  let objects = new Map<string, number>();
  for (let round = 1; round <= settings.fullBuilds; round++) {
    await rm(out, { recursive: true, force: true });
    progress(`1. full build ${round}/${settings.fullBuilds} of ${settings.modules} modules into ${rel(out)}`);
    const full = await runCli(['build', '--source', snapshotDir, '--out', out]);
    fulls.push(full);
    if (round === 1) commands.push(full.command);
    objects = await listObjects(out);
  }
  const totalBytes = [...objects.values()].reduce((a, b) => a + b, 0);

  // Incremental publishes into the last full build, each renaming one more module.
  const incrementals: Incremental[] = [];
  let current = snapshot;
  for (let round = 1; round <= settings.incrementalBuilds; round++) {
    progress(`1. incremental publish ${round}/${settings.incrementalBuilds} after renaming one module`);
    const position = Math.floor((snapshot.modules.length * round) / (settings.incrementalBuilds + 1));
    const edit = renamed(current, position, `(edit ${round})`);
    current = edit.snapshot;
    const editedDir = join(WORK, `snapshot-edited-${round}`);
    await rm(editedDir, { recursive: true, force: true });
    await writeSnapshot(editedDir, edit.snapshot);
    const before = await readIndex(out);
    const beforeObjects = await listObjects(out);
    const run = await runCli(['build', '--source', editedDir, '--out', out]);
    if (round === 1) commands.push(run.command);
    const afterObjects = await listObjects(out);
    const after = await readIndex(out);
    const written = [...afterObjects.keys()].filter((id) => !beforeObjects.has(id));
    const writtenSet = new Set(written);
    const changed = [...after].filter((id) => !before.has(id));
    incrementals.push({
      ...run,
      moduleId: edit.id,
      written: written.length,
      writtenBytes: written.reduce((sum, id) => sum + afterObjects.get(id)!, 0),
      changed: changed.length,
      onlyChanged: written.length === changed.length && changed.every((id) => writtenSet.has(id)),
    });
    await rm(editedDir, { recursive: true, force: true });
  }

  const fullWall = median(fulls.map((f) => f.wallSeconds));
  const fullRss = Math.max(...fulls.map((f) => f.maxRssBytes));
  const incrementalWall = median(incrementals.map((r) => r.wallSeconds));
  const onlyChanged = incrementals.every((r) => r.onlyChanged);
  const fullOk = fullWall <= FULL_BUILD_SECONDS && fullRss <= FULL_BUILD_RSS_BYTES;
  const incrementalShare = incrementalWall / fullWall;
  const incrementalOk =
    incrementalWall <= INCREMENTAL_SECONDS && incrementalShare <= INCREMENTAL_SHARE && onlyChanged;

  let profile = '';
  const wantProfile =
    settings.profile === 'always' || (settings.profile === 'auto' && !(fullOk && incrementalOk));
  if (wantProfile) {
    const profDir = join(WORK, 'prof');
    await rm(join(profDir, 'incremental'), { recursive: true, force: true });
    await rm(join(profDir, 'full'), { recursive: true, force: true });
    if (!incrementalOk || settings.profile === 'always') {
      // One more one-module edit, published under --cpu-prof: the profile of an incremental publish.
      const edit = renamed(current, snapshot.modules.length - 1, '(profiled edit)');
      const editedDir = join(WORK, 'snapshot-edited-profiled');
      await rm(editedDir, { recursive: true, force: true });
      await writeSnapshot(editedDir, edit.snapshot);
      progress('1. profiling an incremental publish (--cpu-prof)');
      const dir = join(profDir, 'incremental');
      const profiled = await runCli(
        ['build', '--source', editedDir, '--out', out],
        ['--cpu-prof', `--cpu-prof-dir=${dir}`],
      );
      commands.push(profiled.command);
      profile += await profileOf(dir, 'incremental publish', profiled.wallSeconds);
      await rm(editedDir, { recursive: true, force: true });
    }
    if (!fullOk || settings.profile === 'always') {
      progress('1. profiling a full build (--cpu-prof)');
      const dir = join(profDir, 'full');
      const fullOut = join(WORK, 'build-profiled');
      await rm(fullOut, { recursive: true, force: true });
      const profiled = await runCli(
        ['build', '--source', snapshotDir, '--out', fullOut],
        ['--cpu-prof', `--cpu-prof-dir=${dir}`],
      );
      commands.push(profiled.command);
      await rm(fullOut, { recursive: true, force: true });
      profile += await profileOf(dir, 'full build', profiled.wallSeconds);
    }
  }
  // Section 7 starts its cold-start rows over this build; run.ts removes it at the end.

  const markdown = [
    `Snapshot: \`generateSnapshot({modules: ${settings.modules}, seed: ${settings.seed}})\` written to \`${rel(snapshotDir)}\`: ` +
      `${fmt.int(objects.size)} objects, ${fmt.mb(totalBytes)} once built. Every run is the CLI in its own process (\`/usr/bin/time -v\`: wall = "Elapsed", CPU = user + system, peak RSS = "Maximum resident set size"), as \`npm run catalogue\` runs it: builder/launch.mjs and its bundle, start-up included; \`sync\` before each run, so no run pays for the writeback of the one before. ` +
      'Wall time depends on what else the machine runs (load average in the last column); CPU time much less so.',
    '',
    table(
      [
        'run',
        'wall time',
        'CPU time',
        'peak RSS',
        'objects written',
        'bytes written',
        'load average at start',
      ],
      [
        ...fulls.map((f, i) => [
          `full build ${i + 1} (empty directory)`,
          `${fmt.s(f.wallSeconds)} s`,
          `${fmt.s(f.cpuSeconds)} s`,
          fmt.mb(f.maxRssBytes),
          fmt.int(objects.size),
          fmt.mb(totalBytes),
          f.loadAverage,
        ]),
        ...incrementals.map((r, i) => [
          `incremental publish ${i + 1} (module ${r.moduleId} renamed)`,
          `${fmt.s(r.wallSeconds)} s`,
          `${fmt.s(r.cpuSeconds)} s`,
          fmt.mb(r.maxRssBytes),
          fmt.int(r.written),
          fmt.mb(r.writtenBytes),
          r.loadAverage,
        ]),
      ],
    ),
    '',
    `Medians: full build **${fmt.s(fullWall)} s** (CPU ${fmt.s(median(fulls.map((f) => f.cpuSeconds)))} s), peak RSS at most **${fmt.mb(fullRss)}**; ` +
      `incremental publish **${fmt.s(incrementalWall)} s** (CPU ${fmt.s(median(incrementals.map((r) => r.cpuSeconds)))} s).`,
    '',
    `Incremental publishes: the object files new in the directory are ${
      onlyChanged ? 'exactly' : '**not** exactly'
    } the objects the new index references and the previous one did not (${incrementals
      .map((r) => `${fmt.int(r.written)} written / ${fmt.int(r.changed)} changed`)
      .join(
        '; ',
      )}), so only changed objects are uploaded. They are few but large: a variant is one object, so renaming one module rewrites every list variant that holds it (the unfiltered lists and the big filter variants of its standard, width and tags): ${fmt.mb(median(incrementals.map((r) => r.writtenBytes)))} (median) for one name, against ${fmt.mb(totalBytes)} for the whole catalogue. Of the index only the shards holding a changed key are written, plus the small pointer, the version's manifest and the publication log; nothing is listed, and nothing is removed before the 24 h retention. Every other module is unchanged since the version the publish replaces, written by the same builder (the CLI bundle's fingerprint), so it is neither validated nor serialised again: its checks between records still run, and its bytes are read back from that version's unfiltered id list (builder/publish/reuse.ts). What remains of the work per publish is in proportion to the catalogue, not the edit: reading and parsing the snapshot, finding and digesting each record's text, sorting by name, and encoding the large variants that hold the renamed module.`,
    '',
    'CLI summary lines (first full build, first incremental):',
    '',
    `- \`${fulls[0]!.summary}\``,
    `- \`${incrementals[0]!.summary}\``,
    profile,
  ].join('\n');

  return {
    markdown,
    commands,
    targets: [
      {
        name: 'Full build',
        target: `≤ ${FULL_BUILD_SECONDS} s and ≤ 1.5 GB peak RSS`,
        measured: `${fmt.s(fullWall)} s (median of ${fulls.length}; CPU ${fmt.s(median(fulls.map((f) => f.cpuSeconds)))} s), ${fmt.mb(fullRss)}`,
        ok: fullOk,
      },
      {
        name: 'Incremental publish (one module renamed)',
        target: `only changed objects, ≤ ${INCREMENTAL_SECONDS} s and ≤ ${fmt.pct(INCREMENTAL_SHARE)} of a full build`,
        measured: `${incrementals.map((r) => fmt.int(r.written)).join('/')} objects (${incrementals
          .map((r) => fmt.mb(r.writtenBytes))
          .join(
            '/',
          )}) = ${onlyChanged ? 'exactly the changed ones' : 'NOT the changed set'}; ${fmt.s(incrementalWall)} s (median of ${incrementals.length}) = ${fmt.pct(incrementalShare)} of the full build`,
        ok: incrementalOk,
      },
    ],
  };
}
