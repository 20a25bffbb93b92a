/**
 * What reading a snapshot costs (not part of npm test): `loadSnapshot` — every file's records scanned, parsed
 * and validated, as `validate`, `upload`, the builder and `npm start` read one — over a generated catalogue, in
 * MB of JSON per second of wall time and of CPU time (the medians of the runs: on a shared machine the CPU time
 * is the steadier figure) and the process's peak RSS. Run it on two trees to compare:
 * `npx tsx bench/snapshot-read.ts [modules] [runs]` (default 100,000 modules, 5 runs). It prints JSON.
 * With SNAPSHOT_DIR the catalogue is written there once and read from there on later runs: the peak RSS is
 * then the read's alone, not the generator's.
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSnapshot } from '../builder/snapshot/load.js';
import { generateSnapshot, writeSnapshot } from '../builder/synthetic/generate.js';
import { statusBytes } from './machine.js';

const MODULES = Number(process.argv[2] ?? 100_000);
const RUNS = Number(process.argv[3] ?? 5);

const kept = process.env.SNAPSHOT_DIR;
const dir = kept ?? (await mkdtemp(join(tmpdir(), 'snapshot-read-')));
try {
  if (!(await stat(join(dir, 'modules.json')).catch(() => undefined))) {
    await writeSnapshot(dir, generateSnapshot({ modules: MODULES, seed: 7 }));
  }
  let bytes = 0;
  for (const file of await readdir(dir)) bytes += (await stat(join(dir, file))).size;
  const seconds: number[] = [];
  const cpuSeconds: number[] = [];
  for (let run = 0; run < RUNS + 1; run++) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    const loaded = await loadSnapshot(dir);
    const took = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    if (!loaded.ok) throw new Error(`the generated snapshot was refused: ${loaded.problems[0]?.reason}`);
    if (run === 0) continue; // the first run warms the JIT
    seconds.push(took);
    cpuSeconds.push((used.user + used.system) / 1e6);
  }
  const medianOf = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const median = medianOf(seconds);
  const medianCpu = medianOf(cpuSeconds);
  const peak = statusBytes(process.pid, 'VmHWM');
  console.log(
    JSON.stringify({
      modules: MODULES,
      bytes,
      runs: seconds.map((s) => Number(s.toFixed(3))),
      median_seconds: Number(median.toFixed(3)),
      mb_per_second: Number((bytes / 1e6 / median).toFixed(1)),
      cpu_runs: cpuSeconds.map((s) => Number(s.toFixed(3))),
      median_cpu_seconds: Number(medianCpu.toFixed(3)),
      mb_per_cpu_second: Number((bytes / 1e6 / medianCpu).toFixed(1)),
      peak_rss_mb: peak === undefined ? null : Math.round(peak / 1e6),
      node: process.version,
    }),
  );
} finally {
  if (!kept) await rm(dir, { recursive: true, force: true });
}
