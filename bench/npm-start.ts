/**
 * Section 11: `npm start` itself under the request mix of section 2, with its protocol servers (s3rver,
 * dynalite) on the proxy's thread (`CATALOGUE_LOCAL_SERVERS=in-process`, the layout before issue 31) and on
 * a thread of their own (the default), side by side in one run: two npm starts running at once on twin data
 * directories (the bench catalogue published once by npm start's own first start, then linked into a second
 * directory), loaded in turn in short alternating rounds as section 2 does, so that both meet the same
 * machine. Throughput, latency, and CPU per request of the whole process (every thread: the proxy's, the
 * servers', V8's and libuv's; and any child process), with the share of each thread.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, cpSync, existsSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { trackChild } from './children.js';
import { checkRun, pairedRatio, roundsTable, summarize } from './core.js';
import { get } from './http.js';
import { type LoadResult, runLoad } from './load.js';
import { loadAverage, statusBytes } from './machine.js';
import { AUTH, coreMix, type MixEntry, type Picks } from './mix.js';
import { progress, type SectionResult } from './report.js';
import { BENCH_KEY, HUGE_LIMITS, REPO, type Settings, WORK } from './settings.js';
import { fmt, median, table } from './stats.js';

/** The target: npm start with its servers off the proxy's thread serves this much more. */
export const THROUGHPUT_GAIN = 1.5;

const LAYOUTS = ['in-process', 'threads'] as const;
export type Layout = (typeof LAYOUTS)[number];
const SHOWN: Record<Layout, string> = {
  'in-process': 'servers on the proxy’s thread (before)',
  threads: 'servers on a thread of their own (after)',
};

const TICK_MS = (() => {
  try {
    return 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  } catch {
    return 10;
  }
})();

/** utime + stime of a /proc stat line, in ms, and its command name. */
function statOf(path: string): { name: string; ms: number } | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    const close = text.lastIndexOf(')');
    const name = text.slice(text.indexOf('(') + 1, close);
    // After the name: state is field 3, utime field 14, stime field 15.
    const fields = text.slice(close + 2).split(' ');
    return { name, ms: (Number(fields[11]) + Number(fields[12])) * TICK_MS };
  } catch {
    return undefined;
  }
}

/** CPU ms by thread name of `pid` (threads of one name summed), and of its child processes, recursively. */
export function cpuByThread(pid: number, into = new Map<string, number>()): Map<string, number> {
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return into;
  }
  for (const task of tasks) {
    const stat = statOf(`/proc/${pid}/task/${task}/stat`);
    if (!stat) continue;
    const name = Number(task) === pid ? 'main (the proxy)' : stat.name;
    into.set(name, (into.get(name) ?? 0) + stat.ms);
    let children: string[] = [];
    try {
      children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(' ').filter(Boolean);
    } catch {
      // no children file: no children to count
    }
    for (const child of children) cpuByThread(Number(child), into);
  }
  return into;
}

export function peakRssMb(pid: number): number {
  try {
    return (statusBytes(pid, 'VmHWM') ?? Number.NaN) / 2 ** 20;
  } catch {
    return Number.NaN;
  }
}

export interface Running {
  child: ChildProcess;
  port: number;
  /** Spawn → the ready line, ms. */
  readyMs: number;
  output: () => string;
  stop(): Promise<void>;
}

export interface NpmStartOptions {
  layout: Layout;
  /** Its data directory (CATALOGUE_LOCAL_DIR). */
  local: string;
  /** The snapshot it publishes, when it has to (CATALOGUE_SOURCE). */
  source: string;
  readyWithinMs?: number;
  /** The checkout it runs from (another tree, for a before/after comparison); this one by default. */
  repo?: string;
}

/** `node --import tsx local/start.ts` (what `npm start` runs) with `layout`, until its ready lines. */
export async function startNpm(options: NpmStartOptions): Promise<Running> {
  const { layout, local, source, readyWithinMs = 3_600_000, repo = REPO } = options;
  const logFile = join(WORK, `npm-start-${layout}-${local.split('/').pop()}.log`);
  // The request log (stdout) goes to a file, as a terminal would take it: the bench process does not read it.
  const stdout = openSync(logFile, 'w');
  const begun = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: repo,
    env: {
      ...process.env,
      PORT: '0',
      CATALOGUE_LOCAL_DIR: local,
      CATALOGUE_SOURCE: source,
      CATALOGUE_LOCAL_SERVERS: layout,
      CATALOGUE_DEV_KEYS: `partner:${BENCH_KEY}`,
      PARTNER_LIMIT_MINUTE: String(HUGE_LIMITS.minute),
      PARTNER_LIMIT_MONTH: String(HUGE_LIMITS.month),
    },
    stdio: ['ignore', stdout, 'pipe'],
  });
  closeSync(stdout);
  trackChild(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const output = () => `${readFileSync(logFile, 'utf8').slice(0, 4000)}\n${stderr.slice(-4000)}`;
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      clearInterval(poll);
      reject(new Error(`npm start (${layout}) not ready in time:\n${output()}`));
    }, readyWithinMs);
    const poll = setInterval(() => {
      const head = readFileSync(logFile, 'utf8').slice(0, 8000);
      const ready = /ready at http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(head);
      if (ready && head.includes('Ctrl-C stops it.')) {
        clearInterval(poll);
        clearTimeout(timer);
        child.off('exit', exited);
        resolve(Number(ready[1]));
      }
    }, 50);
    const exited = (code: number | null) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`npm start (${layout}) exited with ${code}:\n${output()}`));
    };
    child.once('exit', exited);
  });
  return {
    child,
    port,
    readyMs: performance.now() - begun,
    output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
      rmSync(logFile, { force: true });
    },
  };
}

interface Run {
  layout: Layout;
  result: LoadResult;
  /** CPU ms per response, all threads (and children). */
  cpu: number;
  /** CPU ms per response by thread. */
  threads: Map<string, number>;
}

/**
 * A second data directory holding what `from` holds: the local S3's files hard-linked (npm start only reads
 * them while it serves an unchanged source), the rest copied; not its lock, nor its recorded ports (the twin
 * runs at the same time, on ports of its own). Kept while `from` publishes the same version.
 */
export function twinOf(from: string, to: string): void {
  const published = (dir: string) => {
    try {
      return readFileSync(join(dir, 'published.json'), 'utf8');
    } catch {
      return undefined;
    }
  };
  if (existsSync(to) && published(to) === published(from)) return;
  rmSync(to, { recursive: true, force: true });
  execFileSync('mkdir', ['-p', to]);
  execFileSync('cp', ['-al', join(from, 's3'), join(to, 's3')]);
  for (const name of readdirSync(from)) {
    if (name === 's3' || name === 'npm-start.lock' || name === 'endpoints.json') continue;
    cpSync(join(from, name), join(to, name), { recursive: true });
  }
}

export async function benchNpmStart(
  settings: Settings,
  snapshotDir: string,
  picks: Picks,
): Promise<SectionResult> {
  // Kept across runs with BENCH_KEEP=1: npm start then finds its source already published there.
  const local = join(WORK, 'npm-start');
  progress(
    `11. first start: npm start publishes the ${fmt.int(settings.modules)}-module catalogue into its s3rver`,
  );
  const first = await startNpm({ layout: 'threads', local, source: snapshotDir });
  const published = /published \S+ to \S+: .*/.exec(first.output())?.[0] ?? 'already published (kept data)';
  let mix: MixEntry[];
  try {
    progress('11. building the request mix (walking cursors)');
    mix = await coreMix(first.port, picks);
    for (const entry of mix) {
      const reply = await get(first.port, entry.path, { ...AUTH, ...entry.headers });
      if (reply.status !== entry.expect) {
        throw new Error(`${entry.shown}: expected ${entry.expect}, got ${reply.status}`);
      }
    }
  } finally {
    await first.stop();
  }
  progress('11. a twin data directory (hard links), and both layouts started');
  twinOf(local, join(WORK, 'npm-start-twin'));
  const running = new Map<Layout, Running>();
  const peakRss = new Map<Layout, number>();
  const runs: Run[] = [];
  const loadAtStart = loadAverage();
  const load = (port: number, seconds: number) =>
    runLoad({ port, requests: mix, seconds, connections: settings.connections, headers: AUTH });
  try {
    running.set(
      'in-process',
      await startNpm({ layout: 'in-process', local, source: snapshotDir, readyWithinMs: 600_000 }),
    );
    const twin = join(WORK, 'npm-start-twin');
    running.set(
      'threads',
      await startNpm({ layout: 'threads', local: twin, source: snapshotDir, readyWithinMs: 600_000 }),
    );
    for (const layout of LAYOUTS) {
      if (settings.warmupSeconds > 0) await load(running.get(layout)!.port, settings.warmupSeconds);
    }
    for (let round = 0; round < settings.coreRounds; round++) {
      progress(`11. round ${round + 1}/${settings.coreRounds} (${settings.coreSeconds} s per layout)`);
      const order = round % 2 === 0 ? [...LAYOUTS] : [...LAYOUTS].reverse();
      for (const layout of order) {
        const { child, port } = running.get(layout)!;
        const before = cpuByThread(child.pid!);
        const result = await load(port, settings.coreSeconds);
        const after = cpuByThread(child.pid!);
        checkRun(
          `npm start (${layout})`,
          result,
          mix.map((e) => e.expect),
        );
        const threads = new Map<string, number>();
        for (const [name, ms] of after) threads.set(name, (ms - (before.get(name) ?? 0)) / result.requests);
        const cpu = [...threads.values()].reduce((sum, ms) => sum + ms, 0);
        runs.push({ layout, result, cpu, threads });
      }
    }
  } finally {
    for (const [layout, server] of running) {
      peakRss.set(layout, peakRssMb(server.child.pid!));
      await server.stop();
    }
  }
  const readyMs = (layout: Layout) => running.get(layout)!.readyMs;

  const of = (layout: Layout) => runs.filter((run) => run.layout === layout);
  const before = of('in-process');
  const after = of('threads');
  const afterResults = after.map((r) => r.result);
  const beforeResults = before.map((r) => r.result);
  const a = summarize(afterResults);
  const b = summarize(beforeResults);
  const gain = pairedRatio(afterResults, beforeResults, (r) => r.rps);
  const cpuAfter = median(after.map((r) => r.cpu));
  const cpuBefore = median(before.map((r) => r.cpu));
  const cpuRatio = median(after.map((r, i) => r.cpu / before[i]!.cpu));
  const threadNames = [...new Set(runs.flatMap((r) => [...r.threads.keys()]))].sort((x, y) =>
    x.startsWith('main') ? -1 : y.startsWith('main') ? 1 : x < y ? -1 : 1,
  );
  const threadShare = (set: Run[], name: string) => median(set.map((r) => r.threads.get(name) ?? 0));

  const markdown = [
    `\`npm start\` as users run it (\`node --import tsx local/start.ts\`, what the script runs), on a data directory (\`bench/.work/npm-start\`) holding the ${fmt.int(settings.modules)}-module bench catalogue, published there by npm start's own first start (\`CATALOGUE_SOURCE\` = the bench snapshot; first start ${fmt.s(first.readyMs / 1000)} s to the ready line: ${published}), and on a twin of it (\`npm-start-twin\`: the local S3's files hard-linked, the rest copied). ` +
      `Two npm starts run at once: \`CATALOGUE_LOCAL_SERVERS=in-process\` (s3rver and dynalite on the proxy's thread, the layout before issue 31) on the first, \`threads\` (on a worker thread of their own, the default) on the twin. ` +
      `Load: the request mix of section 2 (${mix.length} requests, every kind a consumer makes, cursors walked, ETags asked once), autocannon in the bench process, ${settings.connections} connections; ${settings.warmupSeconds} s warm-up each, then ${settings.coreRounds} rounds of ${settings.coreSeconds} s per layout, alternating which goes first (as section 2: a burst of the host's other work spoils one pair of rounds, and the median of the per-round ratios leaves it out). ` +
      `CPU is the npm start process's, every thread of it (user + system from /proc/<pid>/task/*/stat, ${TICK_MS} ms ticks) and any child process, over the measured run divided by its responses. Load average at the start: ${loadAtStart}.`,
    '',
    table(
      [
        'npm start',
        'req/s (median)',
        'p50 ms',
        'p99 ms',
        'CPU ms per response (all threads)',
        'ready after (s)',
        'peak RSS (MB)',
      ],
      [
        [
          SHOWN['in-process'],
          fmt.int(b.rps),
          fmt.ms(b.p50),
          fmt.ms(b.p99),
          fmt.ms(cpuBefore),
          fmt.s(readyMs('in-process') / 1000),
          fmt.int(peakRss.get('in-process')!),
        ],
        [
          SHOWN.threads,
          fmt.int(a.rps),
          fmt.ms(a.p50),
          fmt.ms(a.p99),
          fmt.ms(cpuAfter),
          fmt.s(readyMs('threads') / 1000),
          fmt.int(peakRss.get('threads')!),
        ],
        [
          'after / before: median of the per-round ratios',
          fmt.x(gain),
          fmt.x(pairedRatio(afterResults, beforeResults, (r) => r.p50)),
          fmt.x(pairedRatio(afterResults, beforeResults, (r) => r.p99)),
          fmt.x(cpuRatio),
          '',
          '',
        ],
      ],
    ),
    '',
    'CPU per response by thread (ms, medians over the rounds; V8Worker: the garbage collector and compiler helpers, libuv-worker: file system and DNS work):',
    '',
    table(
      ['thread', SHOWN['in-process'], SHOWN.threads],
      threadNames.map((name) => [name, fmt.ms(threadShare(before, name)), fmt.ms(threadShare(after, name))]),
    ),
    '',
    `The load generator used ${fmt.pct(median(before.map((r) => r.result.generatorCpu)))} of a core before and ${fmt.pct(median(after.map((r) => r.result.generatorCpu)))} after: on 2 cores it competes with npm start for the second one.`,
    '',
    'Every round:',
    '',
    roundsTable([
      [SHOWN['in-process'], b],
      [SHOWN.threads, a],
    ]),
    '',
  ].join('\n');

  return {
    markdown,
    commands: [
      `PORT=0 CATALOGUE_LOCAL_DIR=bench/.work/npm-start CATALOGUE_SOURCE=<the bench snapshot> CATALOGUE_DEV_KEYS=partner:<bench key> CATALOGUE_LOCAL_SERVERS=in-process node --import tsx local/start.ts`,
      `PORT=0 CATALOGUE_LOCAL_DIR=bench/.work/npm-start-twin CATALOGUE_SOURCE=<the bench snapshot> CATALOGUE_DEV_KEYS=partner:<bench key> CATALOGUE_LOCAL_SERVERS=threads node --import tsx local/start.ts`,
    ],
    targets: [
      {
        name: 'npm start throughput, protocol servers off the proxy’s thread vs on it',
        target: `≥ ${fmt.x(THROUGHPUT_GAIN)}`,
        measured: `${fmt.int(a.rps)} vs ${fmt.int(b.rps)} req/s (medians); per-round ratio ${fmt.x(gain)}`,
        ok: gain >= THROUGHPUT_GAIN,
      },
      {
        name: 'npm start CPU per request, same comparison (every thread)',
        target: 'no higher',
        measured: `${fmt.ms(cpuAfter)} vs ${fmt.ms(cpuBefore)} ms (medians); per-round ratio ${fmt.x(cpuRatio)}`,
        ok: cpuRatio <= 1,
      },
    ],
  };
}
