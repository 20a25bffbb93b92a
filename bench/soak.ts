/**
 * Section 5: memory under sustained load. The end-to-end proxy (production wiring, started with
 * --expose-gc) is loaded for BENCH_SOAK_SECONDS; every BENCH_SOAK_SAMPLE_SECONDS the child forces a full
 * GC and reports process.memoryUsage(). A leak shows as heapUsed rising across the samples.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PUBLISHED_FILE } from '../local/published.js';
import { checkRun } from './core.js';
import { failuresOf, type Stack } from './e2e.js';
import type { LoadResult } from './load.js';
import { runLoad } from './load.js';
import { bytesUnder, loadAverage, rssOf } from './machine.js';
import { AUTH, coreMix, type MixEntry, type Picks, peerMix, soakMix } from './mix.js';
import { type Running, startNpm, twinOf } from './npm-start.js';
import { progress, type SectionResult } from './report.js';
import { type Settings, WORK } from './settings.js';
import { RSS_BOUND_BYTES, type RssSample, soakFigures } from './soak-verdict.js';
import { fmt, slope, table } from './stats.js';

/** "No growth": heapUsed after within this much of before (and the fitted trend over the run too). */
const GROWTH_BOUND_BYTES = 2 * 2 ** 20;

interface Sample {
  seconds: number;
  heapUsed: number;
  heapTotal: number;
  rss: number;
  external: number;
}

export async function benchSoak(settings: Settings, stack: Stack, picks: Picks): Promise<SectionResult> {
  const child = stack.proxy;
  const port = Number(child.ready.port);
  const mix = await soakMix(port, picks, await peerMix(port, picks));
  const sample = async (started: number): Promise<Sample> => {
    const m = await child.request('heap', { gc: true });
    if (!m.forced) throw new Error('the proxy child cannot force GC (started without --expose-gc?)');
    return {
      seconds: (Date.now() - started) / 1000,
      heapUsed: Number(m.heapUsed),
      heapTotal: Number(m.heapTotal),
      rss: Number(m.rss),
      external: Number(m.external),
    };
  };

  await failuresOf(child); // forget those of earlier sections
  // Warm up first, so lazily built things (SDK clients, sockets, caches) are in the baseline.
  progress(
    `5. soak: warm-up, then ${settings.soakSeconds} s of load with a GC'd heap sample every ${settings.soakSampleSeconds} s`,
  );
  await runLoad({
    port,
    requests: mix,
    seconds: Math.max(2, settings.warmupSeconds),
    connections: settings.connections,
    headers: AUTH,
  });
  const loadAtStart = loadAverage();
  const started = Date.now();
  const samples: Sample[] = [await sample(started)];
  let sampling = Promise.resolve();
  const timer = setInterval(() => {
    sampling = sampling.then(async () => {
      samples.push(await sample(started));
    });
  }, settings.soakSampleSeconds * 1000);
  let result: Awaited<ReturnType<typeof runLoad>>;
  try {
    result = await runLoad({
      port,
      requests: mix,
      seconds: settings.soakSeconds,
      connections: settings.connections,
      headers: AUTH,
    });
  } finally {
    clearInterval(timer);
    await sampling;
  }
  checkRun('soak', result, [200, 304, 404]);
  const failures = await failuresOf(child);
  const after = await sample(started);
  samples.push(after);
  const before = samples[0]!;
  const perMinute = slope(samples.map((s) => ({ x: s.seconds / 60, y: s.heapUsed })));
  const trend = perMinute * (after.seconds / 60);
  const delta = after.heapUsed - before.heapUsed;
  const ok = delta <= GROWTH_BOUND_BYTES && trend <= GROWTH_BOUND_BYTES;

  const markdown = [
    `The end-to-end proxy of section 3 (production wiring over s3rver + dynalite; child started with \`--expose-gc\`), ${fmt.s(result.seconds)} s of load with ${settings.connections} connections over a mix of the section 3 pages plus details, includes, a 404 and a 304 (${mix.length} requests). ` +
      `Before each sample the child runs a full GC twice. Load average at the start: ${loadAtStart}.`,
    '',
    table(
      ['responses', 'req/s', 'p50 ms', 'p99 ms', 'statuses'],
      [
        [
          fmt.int(result.requests),
          fmt.int(result.rps),
          fmt.ms(result.p50),
          fmt.ms(result.p99),
          Object.entries(result.statuses)
            .map(([s, n]) => `${s}: ${fmt.int(n)}`)
            .join(', '),
        ],
      ],
    ),
    '',
    table(
      ['', 'heapUsed', 'heapTotal', 'rss', 'external'],
      [
        [
          'before (after warm-up)',
          fmt.mib(before.heapUsed),
          fmt.mib(before.heapTotal),
          fmt.mib(before.rss),
          fmt.mib(before.external),
        ],
        [
          'after',
          fmt.mib(after.heapUsed),
          fmt.mib(after.heapTotal),
          fmt.mib(after.rss),
          fmt.mib(after.external),
        ],
        [
          'change',
          fmt.mib(delta),
          fmt.mib(after.heapTotal - before.heapTotal),
          fmt.mib(after.rss - before.rss),
          fmt.mib(after.external - before.external),
        ],
      ],
    ),
    '',
    failures,
    '',
    `Least-squares trend of heapUsed over the samples: ${fmt.int(perMinute / 1024)} KiB per minute (${fmt.mib(trend)} over the run). ` +
      `Verdict: ${ok ? 'no growth trend' : '**heap grows**'} (bound: ${fmt.mib(GROWTH_BOUND_BYTES)} for both the before/after change and the fitted trend).`,
    '',
    'Samples (after a forced GC):',
    '',
    table(
      ['t (s)', 'heapUsed', 'heapTotal', 'rss'],
      samples.map((s) => [fmt.s(s.seconds), fmt.mib(s.heapUsed), fmt.mib(s.heapTotal), fmt.mib(s.rss)]),
    ),
    '',
  ].join('\n');
  return {
    markdown,
    commands: [],
    targets: [
      {
        name: `Memory under ${fmt.int(settings.soakSeconds)} s of load`,
        target: 'no heap growth trend',
        measured: `heapUsed ${fmt.mib(before.heapUsed)} → ${fmt.mib(after.heapUsed)}, trend ${fmt.int(perMinute / 1024)} KiB/min over ${fmt.int(result.requests)} requests`,
        ok,
      },
    ],
  };
}

/** Samples every `everySeconds` while `during` runs. */
async function sampled<T>(sample: () => void, everySeconds: number, during: () => Promise<T>): Promise<T> {
  const timer = setInterval(sample, everySeconds * 1000);
  try {
    return await during();
  } finally {
    clearInterval(timer);
  }
}

/** One npm start of the soak: this tree's, or BENCH_BEFORE_REPO's (on a twin data directory). */
interface Soaked {
  side: 'this tree' | 'BENCH_BEFORE_REPO';
  local: string;
  running: Running;
  mix: MixEntry[];
  samples: RssSample[];
  result?: LoadResult;
}

async function startSoaked(snapshotDir: string, picks: Picks): Promise<Soaked[]> {
  const local = join(WORK, 'npm-start');
  progress('15. npm start (a first start publishes the bench catalogue and stops; a second one is soaked)');
  const soaked: Soaked[] = [];
  const add = async (side: Soaked['side'], dir: string, repo?: string) => {
    const options = { layout: 'threads' as const, local: dir, source: snapshotDir, ...(repo && { repo }) };
    // A start that publishes holds the build's heap for a long while (~1 GB at 25,000 modules), which would
    // hide what serving does to memory: it publishes and stops, and the soak loads a start that only serves.
    if (!existsSync(join(dir, PUBLISHED_FILE))) await (await startNpm(options)).stop();
    const running = await startNpm(options);
    soaked.push({ side, local: dir, running, mix: await coreMix(running.port, picks), samples: [] });
  };
  try {
    await add('this tree', local);
    const beforeRepo = process.env.BENCH_BEFORE_REPO?.trim();
    if (beforeRepo) {
      const twin = join(WORK, 'npm-start-before');
      twinOf(local, twin);
      await add('BENCH_BEFORE_REPO', twin, beforeRepo);
    }
  } catch (error) {
    for (const { running } of soaked) await running.stop();
    throw error;
  }
  return soaked;
}

/** Section 15's every sample, each side's as soakFigures (soak-verdict.ts) takes them. */
const SAMPLES_FILE = join(WORK, 'soak-samples.json');

/**
 * Section 15: `npm start` (a start that only serves) under the full mix of section 2: a warm-up of a sixth
 * of the soak, a minute idle (the baseline), BENCH_NPM_SOAK_SECONDS of load (the acceptance run is an hour)
 * and a minute idle, its RSS and its local DynamoDB's data directory sampled every BENCH_SOAK_SAMPLE_SECONDS.
 * What is called flat is soak-verdict.ts's. With BENCH_BEFORE_REPO, that checkout's npm start is loaded at
 * the same time, on a twin data directory, with a load generator of its own.
 */
export async function benchNpmStartSoak(
  settings: Settings,
  snapshotDir: string,
  picks: Picks,
): Promise<SectionResult> {
  const soaked = await startSoaked(snapshotDir, picks);
  const fillSeconds = warmUpSeconds(settings);
  const started = Date.now();
  let phase: RssSample['phase'] = 'fill';
  const sample = () => {
    for (const { running, local, samples } of soaked) {
      samples.push({
        seconds: (Date.now() - started) / 1000,
        rss: rssOf(running.child.pid!),
        dynamodb: bytesUnder(join(local, 'dynamodb')),
        phase,
      });
    }
  };
  const loadAll = (seconds: number) =>
    Promise.all(
      soaked.map((side) =>
        runLoad({
          port: side.running.port,
          requests: side.mix,
          seconds,
          connections: settings.connections,
          headers: AUTH,
        }),
      ),
    );
  const loadAtStart = loadAverage();
  try {
    progress(
      `15. ${fillSeconds} s of warm-up (the byte cache and V8's heap reach their size), then a minute idle`,
    );
    await sampled(sample, settings.soakSampleSeconds, () => loadAll(fillSeconds));
    phase = 'warm';
    await sampled(sample, 10, () => new Promise((resolve) => setTimeout(resolve, 60_000)));
    sample();
    phase = 'load';
    progress(`15. ${settings.npmSoakSeconds} s of load, RSS sampled every ${settings.soakSampleSeconds} s`);
    const results = await sampled(sample, settings.soakSampleSeconds, () => loadAll(settings.npmSoakSeconds));
    soaked.forEach((side, i) => {
      side.result = results[i]!;
      checkRun(
        `npm start soak (${side.side})`,
        side.result,
        side.mix.map((e) => e.expect),
      );
    });
    phase = 'idle';
    await sampled(sample, 10, () => new Promise((resolve) => setTimeout(resolve, 60_000)));
    sample();
  } finally {
    for (const { running } of soaked) await running.stop();
    // Every sample, where the printed table keeps a few: a rule can be judged again from them (soakFigures).
    writeFileSync(SAMPLES_FILE, JSON.stringify(soaked.map(({ side, samples }) => ({ side, samples }))));
  }
  return npmSoakResult(settings, soaked, loadAtStart);
}

/**
 * The soak's warm-up: a sixth of its load (ten minutes of an hour's), at least the bench's warm-up. Under load
 * RSS climbs for minutes while the byte cache fills and V8 sizes its heap, then levels; the baseline is taken
 * idle after that climb, so that what the load adds afterwards is what is judged.
 */
function warmUpSeconds(settings: Settings): number {
  return Math.max(5, settings.warmupSeconds, Math.round(settings.npmSoakSeconds / 6));
}

function npmSoakResult(settings: Settings, soaked: Soaked[], loadAtStart: string): SectionResult {
  const figures = soaked.map((side) => soakFigures(side.samples));
  const ours = figures[0]!;
  const every = Math.max(1, Math.floor(soaked[0]!.samples.length / 24));
  const markdown = [
    `\`npm start\` (default layout, data in \`bench/.work/npm-start\`${soaked.length > 1 ? "; and BENCH_BEFORE_REPO's on a twin, loaded at the same time" : ''}) under section 2's full mix for ${fmt.int(settings.npmSoakSeconds)} s, ${settings.connections} connections each. ` +
      `RSS of the process (every thread: the proxy, the servers' thread) from /proc, and the size of its local DynamoDB's data directory, every ${settings.soakSampleSeconds} s: along a warm-up of ${fmt.int(warmUpSeconds(settings))} s of the same load, idle for 60 s after it, along the load, and idle for 60 s after the load. Load average at the start: ${loadAtStart}, at the end: ${loadAverage()}.`,
    '',
    table(
      [
        'npm start',
        'responses',
        'req/s',
        'RSS along the warm-up',
        'RSS idle after the warm-up',
        'peak',
        'idle after the load',
        'trend (2nd half)',
        'floor of each sixth of the load',
        'floor trend',
        'DynamoDB data: after warm-up → peak → end',
        'verdict',
      ],
      soaked.map((side, i) => {
        const f = figures[i]!;
        return [
          side.side,
          fmt.int(side.result!.requests),
          fmt.int(side.result!.rps),
          f.fill.length === 0
            ? '–'
            : `${fmt.mib(f.fill[0]!.rss)} → ${fmt.mib(Math.max(...f.fill.map((s) => s.rss)))}`,
          fmt.mib(f.warm.rss),
          fmt.mib(f.peak),
          fmt.mib(f.idle.rss),
          `${fmt.mib(f.perHour)}/h`,
          f.floors.map((s) => fmt.mib(s.rss)).join(' → '),
          `${fmt.mib(f.floorPerHour)}/h`,
          `${fmt.mib(f.warm.dynamodb)} → ${fmt.mib(f.peakData)} → ${fmt.mib(f.idle.dynamodb)}`,
          f.ok ? 'flat' : '**grows**',
        ];
      }),
    ),
    '',
    `Flat: RSS idle after the load within ${fmt.mib(RSS_BOUND_BYTES)} of RSS idle after the warm-up, and the floor of every sixth of the load (its lowest RSS: what the process holds after a major collection there, which a leak raises) no more than that above it either. The trends are shown, not judged: they say when the major collections fell. The table below keeps one sample in ${every}; every sample is in \`bench/.work/soak-samples.json\` until the next run.`,
    '',
    table(
      ['t (s)', 'phase', ...soaked.flatMap((side) => [`RSS (${side.side})`, `DynamoDB data (${side.side})`])],
      soaked[0]!.samples
        .map((s, i) => ({ s, i }))
        .filter(({ i }) => i % every === 0 || i === soaked[0]!.samples.length - 1)
        .map(({ s, i }) => [
          fmt.s(s.seconds),
          s.phase,
          ...soaked.flatMap((side) => [
            fmt.mib(side.samples[i]?.rss ?? Number.NaN),
            fmt.mib(side.samples[i]?.dynamodb ?? Number.NaN),
          ]),
        ]),
    ),
    '',
  ].join('\n');
  return {
    markdown,
    commands: [],
    targets: [
      {
        name: `npm start's memory over ${fmt.int(settings.npmSoakSeconds / 60)} min of load`,
        target:
          'flat (RSS idle after the load, and the floor of every sixth of it, within 32 MiB above RSS idle before)',
        measured: `RSS idle ${fmt.mib(ours.warm.rss)} → ${fmt.mib(ours.idle.rss)} (peak ${fmt.mib(ours.peak)}); floor ${ours.floors.map((s) => fmt.mib(s.rss)).join(' → ')} (trend ${fmt.mib(ours.floorPerHour)}/h); DynamoDB data ${fmt.mib(ours.warm.dynamodb)} → ${fmt.mib(ours.idle.dynamodb)}`,
        ok: ours.ok,
      },
    ],
  };
}
