/**
 * Section 5: memory under sustained load. The end-to-end proxy (production wiring, started with
 * --expose-gc) is loaded for BENCH_SOAK_SECONDS; every BENCH_SOAK_SAMPLE_SECONDS the child forces a full
 * GC and reports process.memoryUsage(). A leak shows as heapUsed rising across the samples.
 */
import { checkRun } from './core.js';
import { failuresOf, type Stack } from './e2e.js';
import { runLoad } from './load.js';
import { loadAverage } from './machine.js';
import { AUTH, type Picks, peerMix, soakMix } from './mix.js';
import { progress, type SectionResult } from './report.js';
import type { Settings } from './settings.js';
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
