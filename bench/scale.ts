/**
 * Section 7: costs that must follow the request and the change, not the catalogue's size.
 * - A 100,000-module catalogue (BENCH_SCALE_MODULES): full build (wall, CPU, peak RSS, objects, bytes), then
 *   a one-module incremental publish, through the CLI in a child process.
 * - Pointer size and index shards (count, sizes) at the fixture's 204 modules, the bench's catalogue and the
 *   large one.
 * - Cold start: a fresh process with the real createProxy wiring over each published directory (in-memory
 *   keys and quota): time to its first answer and heap growth, medians of three.
 */
import { existsSync } from 'node:fs';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { generateSnapshot, writeSnapshot } from '../builder/synthetic/generate.js';
import { parsePointer } from '../store/pointer.js';
import { FIXTURE_DIR } from '../test/helpers/builder.js';
import { listObjects, type Measured, rel, runCli } from './build.js';
import { runCommand } from './children.js';
import { progress, type SectionResult } from './report.js';
import type { Settings } from './settings.js';
import { WORK } from './settings.js';
import { fmt, median, table } from './stats.js';

/** Cold start over 25,000 modules may cost at most this many times the fixture's. */
const COLD_START_RATIO = 2;
const POINTER_BYTES = 64 * 1024;
const INCREMENTAL_SHARE = 0.1;

interface ColdStart {
  firstMs: number;
  sinceProcessStartMs: number;
  secondMs: number;
  heapGrowthBytes: number;
  rssBytes: number;
}

interface Published {
  label: string;
  modules: number;
  dir: string;
  pointerBytes: number;
  shards: number;
  shardBytes: number[];
  objects: number;
  bytes: number;
}

async function describePublished(label: string, modules: number, dir: string): Promise<Published> {
  const pointerBytes = await readFile(join(dir, 'current.json'));
  const pointer = parsePointer(pointerBytes);
  if (!pointer) throw new Error(`${dir}/current.json is not a pointer`);
  const shardBytes = await Promise.all(
    pointer.shards.map(async (id) => (await stat(join(dir, 'o', id))).size),
  );
  const objects = await listObjects(dir);
  return {
    label,
    modules,
    dir,
    pointerBytes: pointerBytes.byteLength,
    shards: pointer.shards.length,
    shardBytes,
    objects: objects.size,
    bytes: [...objects.values()].reduce((a, b) => a + b, 0),
  };
}

async function coldStart(dir: string): Promise<ColdStart> {
  const result = await runCommand(process.execPath, [
    '--expose-gc',
    '--import',
    'tsx',
    'bench/servers/coldstart.ts',
    dir,
  ]);
  if (result.code !== 0) throw new Error(`cold start over ${dir} failed: ${result.stderr.slice(-1000)}`);
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as ColdStart;
}

/** The snapshot with one module renamed, written to `dir`. */
async function withOneRename(modules: number, seed: number, dir: string): Promise<void> {
  const snapshot = generateSnapshot({ modules, seed });
  const module = snapshot.modules[Math.floor(snapshot.modules.length / 2)]!;
  module.name = `${module.name} (renamed)`;
  await writeSnapshot(dir, snapshot);
}

export async function benchScale(settings: Settings, benchBuildDir: string): Promise<SectionResult> {
  const commands: string[] = [];
  const published: Published[] = [];

  progress('7. publishing the fixture for the cold-start rows');
  const fixtureOut = join(WORK, 'scale-fixture');
  await rm(fixtureOut, { recursive: true, force: true });
  const fixtureBuild = await runCli(['build', '--source', FIXTURE_DIR, '--out', fixtureOut]);
  commands.push(fixtureBuild.command);
  published.push(await describePublished('fixture', 204, fixtureOut));

  if (existsSync(join(benchBuildDir, 'current.json'))) {
    published.push(await describePublished('bench catalogue', settings.modules, benchBuildDir));
  } else {
    progress(`7. building the ${settings.modules}-module catalogue for the cold-start rows`);
    const snapshotDir = join(WORK, `snapshot-${settings.modules}-${settings.seed}`);
    const run = await runCli(['build', '--source', snapshotDir, '--out', benchBuildDir]);
    commands.push(run.command);
    published.push(await describePublished('bench catalogue', settings.modules, benchBuildDir));
  }

  const large = settings.scaleModules;
  const largeSource = join(WORK, `snapshot-${large}-${settings.seed}`);
  const largeEdited = join(WORK, `snapshot-${large}-${settings.seed}-renamed`);
  const largeOut = join(WORK, 'scale-large');
  let full: Measured | undefined;
  let incremental: Measured | undefined;
  if (large > 0) {
    progress(`7. generating and fully building a ${fmt.int(large)}-module catalogue`);
    await rm(largeSource, { recursive: true, force: true });
    await rm(largeOut, { recursive: true, force: true });
    await writeSnapshot(largeSource, generateSnapshot({ modules: large, seed: settings.seed }));
    full = await runCli(['build', '--source', largeSource, '--out', largeOut]);
    commands.push(full.command);
    published.push(await describePublished('large catalogue', large, largeOut));
    progress(`7. one-module incremental publish at ${fmt.int(large)} modules`);
    await rm(largeEdited, { recursive: true, force: true });
    await withOneRename(large, settings.seed, largeEdited);
    incremental = await runCli(['build', '--source', largeEdited, '--out', largeOut]);
    commands.push(incremental.command);
  }

  const cold = new Map<string, ColdStart[]>();
  for (let round = 0; round < 3; round++) {
    for (const entry of published) {
      progress(`7. cold start ${round + 1}/3 over the ${entry.label} (${fmt.int(entry.modules)} modules)`);
      const runs = cold.get(entry.label) ?? [];
      runs.push(await coldStart(entry.dir));
      cold.set(entry.label, runs);
    }
  }
  commands.push('node --expose-gc --import tsx bench/servers/coldstart.ts <published directory>');
  const med = (label: string, pick: (c: ColdStart) => number) => median(cold.get(label)!.map(pick));

  if (!settings.keep) {
    for (const dir of [fixtureOut, largeOut, largeSource, largeEdited])
      await rm(dir, { recursive: true, force: true });
  }

  const fixtureFirst = med('fixture', (c) => c.firstMs);
  const benchFirst = med('bench catalogue', (c) => c.firstMs);
  const ratio = benchFirst / fixtureFirst;
  const largest = published.at(-1)!;
  const largePointer = published.find((p) => p.label === 'large catalogue');
  const incrementalShare = full && incremental ? incremental.wallSeconds / full.wallSeconds : undefined;

  const markdown = [
    'Each cold start is a fresh `node` process: `createProxy` (the production wiring) over a `DirectoryObjectStore` of the published catalogue, with in-memory keys and quota, then `GET /v1/modules?limit=50` (its first answer: the pointer, one index shard, one range) and `GET /v1/manufacturers?sort=name` (another shard). Heap growth is `heapUsed` after the first answer minus before `createProxy`, both after a forced GC. Medians of three runs, the sizes interleaved.',
    '',
    table(
      [
        'catalogue',
        'modules',
        'pointer',
        'shards',
        'shard size (median / max)',
        'objects, bytes',
        'first answer',
        'process start → first answer',
        'next answer (other shard)',
        'heap growth',
      ],
      published.map((p) => [
        p.label,
        fmt.int(p.modules),
        `${fmt.int(p.pointerBytes)} B`,
        fmt.int(p.shards),
        `${fmt.int(median(p.shardBytes))} / ${fmt.int(Math.max(...p.shardBytes))} B`,
        `${fmt.int(p.objects)}, ${fmt.mb(p.bytes)}`,
        `${fmt.ms(med(p.label, (c) => c.firstMs))} ms`,
        `${fmt.ms(med(p.label, (c) => c.sinceProcessStartMs))} ms`,
        `${fmt.ms(med(p.label, (c) => c.secondMs))} ms`,
        fmt.mb(med(p.label, (c) => c.heapGrowthBytes)),
      ]),
    ),
    '',
    full && incremental
      ? [
          `At ${fmt.int(large)} modules (\`${rel(largeSource)}\`): full build **${fmt.s(full.wallSeconds)} s** (CPU ${fmt.s(full.cpuSeconds)} s, peak RSS ${fmt.mb(full.maxRssBytes)}, load ${full.loadAverage}); ` +
            `one module renamed, incremental publish **${fmt.s(incremental.wallSeconds)} s** (CPU ${fmt.s(incremental.cpuSeconds)} s, peak RSS ${fmt.mb(incremental.maxRssBytes)}) = ${fmt.pct(incrementalShare!)} of the full build.`,
          '',
          `- \`${full.summary}\``,
          `- \`${incremental.summary}\``,
        ].join('\n')
      : `The large catalogue was not built (BENCH_SCALE_MODULES=0).`,
  ].join('\n');

  return {
    markdown,
    commands,
    targets: [
      {
        name: `Cold start, ${fmt.int(settings.modules)} modules vs the fixture`,
        target: `first answer ≤ ${COLD_START_RATIO}× the fixture's`,
        measured: `${fmt.ms(benchFirst)} vs ${fmt.ms(fixtureFirst)} ms (${fmt.x(ratio)}); heap +${fmt.mb(med('bench catalogue', (c) => c.heapGrowthBytes))}`,
        ok: ratio <= COLD_START_RATIO,
      },
      {
        name: `Pointer at ${fmt.int(largest.modules)} modules`,
        target: '≤ 64 KB',
        measured: `${fmt.int(largest.pointerBytes)} B, ${fmt.int(largest.shards)} shards`,
        ok: largest.pointerBytes <= POINTER_BYTES,
      },
      ...(full && incremental && largePointer
        ? [
            {
              name: `Build at ${fmt.int(large)} modules`,
              target: `completes; incremental ≤ ${fmt.pct(INCREMENTAL_SHARE)} of full`,
              measured: `full ${fmt.s(full.wallSeconds)} s, ${fmt.mb(full.maxRssBytes)} RSS, ${fmt.int(largePointer.objects)} objects (${fmt.mb(largePointer.bytes)}); incremental ${fmt.s(incremental.wallSeconds)} s (${fmt.pct(incrementalShare!)})`,
              ok: incrementalShare! <= INCREMENTAL_SHARE,
            },
          ]
        : []),
    ],
  };
}
