/**
 * Section 14: `npm start` against a dynamic peer on the same machine — fastify 5 over PostgreSQL 15
 * (bench/servers/postgres-fastify.ts: every answer queried, built and hashed per request, one
 * `UPDATE … RETURNING` per request on the key's quota row), on the same catalogue, with the same requests and
 * the same answers (checked: the data of every request of both mixes). Two mixes: the detail path (the mix's
 * four detail requests) and the full mix of section 2. CPU per request is each side's whole: npm start's
 * process (every thread), the peer's process plus the PostgreSQL cluster's (its backends, writer, WAL).
 * With BENCH_BEFORE_REPO naming another checkout (say, main's), its npm start runs too, on a twin data
 * directory: before and after in the same rounds. Servers are loaded in turn, in alternating order, in
 * BENCH_CORE_ROUNDS short rounds; ratios are medians of the per-round ratios.
 * Skipped, with a line saying so, when PostgreSQL is not installed.
 */
import { join } from 'node:path';
import stringify from 'fast-json-stable-stringify';
import type { Snapshot } from '../builder/snapshot/snapshot.js';
import { forkServer, type ServerChild } from './children.js';
import { checkRun, pairedRatio } from './core.js';
import { get } from './http.js';
import { type LoadResult, runLoad } from './load.js';
import { loadAverage } from './machine.js';
import { AUTH, coreMix, type MixEntry, type Picks } from './mix.js';
import { cpuByThread, type Running, startNpm, twinOf } from './npm-start.js';
import { DB_USER, loadCatalogue, type Postgres, postgresBin, startPostgres } from './postgres.js';
import { progress, type SectionResult } from './report.js';
import { BENCH_KEY, HUGE_LIMITS, type Settings, WORK } from './settings.js';
import { fmt, median, table } from './stats.js';

/** The goal: the detail path's CPU per request within this factor of the peer's. */
export const DETAIL_CPU_FACTOR = 1.5;

type Side = 'before' | 'after' | 'peer';
type MixName = 'detail' | 'full';

interface Server {
  side: Side;
  port: number;
  /** CPU ms so far of everything that serves it. */
  cpu(): number;
  mixes: Record<MixName, MixEntry[]>;
}

interface Run {
  side: Side;
  mix: MixName;
  result: LoadResult;
  cpu: number;
}

const SHOWN: Record<Side, string> = {
  before: 'npm start, BENCH_BEFORE_REPO',
  after: 'npm start, this tree',
  peer: 'fastify + PostgreSQL',
};

const totalCpu = (pids: number[]) =>
  pids.reduce((sum, pid) => sum + [...cpuByThread(pid).values()].reduce((a, b) => a + b, 0), 0);

/** The request's answer as the check compares it: status, data (keys sorted), whether a page follows. */
async function answerOf(port: number, entry: MixEntry): Promise<string> {
  const reply = await get(port, entry.path, { ...AUTH, ...entry.headers });
  if (reply.status !== 200) return String(reply.status);
  const body = JSON.parse(reply.body.toString('utf8')) as { data: unknown; page?: { next_cursor: unknown } };
  return `200 ${stringify(body.data)} ${body.page ? (body.page.next_cursor === null ? 'last' : 'more') : ''}`;
}

/** Requests of the two mixes whose answers differ between `a` and `b` (same positions, same meaning). */
async function differences(a: Server, b: Server): Promise<string[]> {
  const found: string[] = [];
  for (const [i, entry] of a.mixes.full.entries()) {
    const other = b.mixes.full[i]!;
    if ((await answerOf(a.port, entry)) !== (await answerOf(b.port, other))) found.push(entry.shown);
  }
  return found;
}

async function mixesOf(port: number, picks: Picks): Promise<Record<MixName, MixEntry[]>> {
  const full = await coreMix(port, picks);
  return { full, detail: full.filter((entry) => entry.category === 'detail') };
}

async function startPeer(postgres: Postgres, snapshot: Snapshot): Promise<ServerChild> {
  progress(
    `14. loading the ${fmt.int(snapshot.modules.length)}-module catalogue into PostgreSQL ${postgres.version}`,
  );
  await loadCatalogue(postgres, snapshot, { key: BENCH_KEY, limits: HUGE_LIMITS });
  return forkServer('fastify + PostgreSQL', 'bench/servers/postgres-fastify.ts', {
    args: [String(postgres.port), DB_USER],
  });
}

/** The servers of the section, started; `stops` collects what ends them. */
async function startServers(
  snapshot: Snapshot,
  snapshotDir: string,
  stops: (() => Promise<void>)[],
): Promise<{ servers: Omit<Server, 'mixes'>[]; postgres: Postgres }> {
  const local = join(WORK, 'npm-start');
  progress('14. npm start (publishes the bench catalogue on a first start)');
  const started: [Side, Running][] = [];
  const after = await startNpm({ layout: 'threads', local, source: snapshotDir });
  stops.push(() => after.stop());
  started.push(['after', after]);
  const beforeRepo = process.env.BENCH_BEFORE_REPO?.trim();
  if (beforeRepo) {
    const twin = join(WORK, 'npm-start-before');
    twinOf(local, twin);
    const before = await startNpm({ layout: 'threads', local: twin, source: snapshotDir, repo: beforeRepo });
    stops.push(() => before.stop());
    started.push(['before', before]);
  }
  const bin = postgresBin()!;
  const postgres = await startPostgres(bin);
  stops.push(() => postgres.stop());
  const peer = await startPeer(postgres, snapshot);
  stops.push(() => peer.stop());
  const servers = started.map(([side, running]) => ({
    side,
    port: running.port,
    cpu: () => totalCpu([running.child.pid!]),
  }));
  servers.push({
    side: 'peer',
    port: Number(peer.ready.port),
    cpu: () => totalCpu([peer.process.pid!, postgres.pid]),
  });
  return { servers, postgres };
}

/** Alternating rounds: each mix, each server in turn (order reversed every round). */
async function measure(settings: Settings, servers: Server[]): Promise<Run[]> {
  const runs: Run[] = [];
  const load = (server: Server, mix: MixName, seconds: number) =>
    runLoad({
      port: server.port,
      requests: server.mixes[mix],
      seconds,
      connections: settings.connections,
      headers: AUTH,
    });
  for (const server of servers) {
    if (settings.warmupSeconds > 0) await load(server, 'full', settings.warmupSeconds);
  }
  for (let round = 0; round < settings.coreRounds; round++) {
    progress(`14. round ${round + 1}/${settings.coreRounds} (${settings.coreSeconds} s per server and mix)`);
    for (const mix of ['detail', 'full'] as const) {
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) {
        const before = server.cpu();
        const result = await load(server, mix, settings.coreSeconds);
        const cpu = (server.cpu() - before) / result.requests;
        checkRun(
          `${SHOWN[server.side]} (${mix})`,
          result,
          server.mixes[mix].map((e) => e.expect),
        );
        runs.push({ side: server.side, mix, result, cpu });
      }
    }
  }
  return runs;
}

interface Figures {
  rows: string[][];
  detailCpuRatio: number;
  cpuOf: (side: Side, mix: MixName) => number;
}

function figures(runs: Run[], sides: Side[]): Figures {
  const of = (side: Side, mix: MixName) => runs.filter((r) => r.side === side && r.mix === mix);
  const ratio = (a: Side, b: Side, mix: MixName, pick: (r: Run) => number) => {
    const x = of(a, mix);
    const y = of(b, mix);
    return median(x.map((r, i) => pick(r) / pick(y[i]!)));
  };
  const rows: string[][] = [];
  for (const mix of ['detail', 'full'] as const) {
    for (const side of sides) {
      const set = of(side, mix);
      rows.push([
        mix,
        SHOWN[side],
        fmt.int(median(set.map((r) => r.result.rps))),
        fmt.ms(median(set.map((r) => r.result.p50))),
        fmt.ms(median(set.map((r) => r.result.p99))),
        fmt.ms(median(set.map((r) => r.cpu))),
        side === 'peer' ? '1' : fmt.x(ratio(side, 'peer', mix, (r) => r.cpu)),
        side === 'peer'
          ? '1'
          : fmt.x(
              pairedRatio(
                of(side, mix).map((r) => r.result),
                of('peer', mix).map((r) => r.result),
                (r) => r.rps,
              ),
            ),
      ]);
    }
    if (sides.includes('before')) {
      rows.push([
        mix,
        'after / before',
        '',
        '',
        '',
        fmt.x(ratio('after', 'before', mix, (r) => r.cpu)),
        '',
        fmt.x(ratio('after', 'before', mix, (r) => r.result.rps)),
      ]);
    }
  }
  return {
    rows,
    detailCpuRatio: ratio('after', 'peer', 'detail', (r) => r.cpu),
    cpuOf: (side, mix) => median(of(side, mix).map((r) => r.cpu)),
  };
}

export async function benchNpmStartPeer(
  settings: Settings,
  snapshot: Snapshot,
  snapshotDir: string,
  picks: Picks,
): Promise<SectionResult> {
  if (!postgresBin()) {
    return {
      markdown:
        'Skipped: PostgreSQL is not installed (no `initdb` on PATH or under /usr/lib/postgresql); `apt-get install -y postgresql` provides it.\n',
      commands: [],
      targets: [],
    };
  }
  const stops: (() => Promise<void>)[] = [];
  const loadAtStart = loadAverage();
  let runs: Run[];
  let servers: Server[];
  let mismatches: string[];
  let version: string;
  try {
    const started = await startServers(snapshot, snapshotDir, stops);
    version = started.postgres.version;
    servers = [];
    for (const server of started.servers)
      servers.push({ ...server, mixes: await mixesOf(server.port, picks) });
    const peer = servers.find((s) => s.side === 'peer')!;
    mismatches = [];
    for (const server of servers.filter((s) => s.side !== 'peer')) {
      mismatches.push(...(await differences(server, peer)).map((shown) => `${server.side}: ${shown}`));
    }
    if (mismatches.length > 0)
      throw new Error(`the peer's answers differ from npm start's: ${mismatches.join('; ')}`);
    runs = await measure(settings, servers);
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
  }
  const sides = servers.map((s) => s.side);
  const { rows, detailCpuRatio, cpuOf } = figures(runs, sides);
  const markdown = [
    `\`npm start\` (its default layout; data in \`bench/.work/npm-start\`) against fastify 5 over PostgreSQL ${version} (a throwaway cluster, \`synchronous_commit=off\`; the peer's process and the whole cluster counted) on the same ${fmt.int(snapshot.modules.length)}-module catalogue, with the same requests: the answers of every request of both mixes were compared first (status, data, whether a page follows) and are the same. ` +
      `Mixes: the detail path (${servers[0]!.mixes.detail.length} detail requests of section 2's mix: a module, with every include, a manufacturer, with its modules) and section 2's full mix (${servers[0]!.mixes.full.length} requests). ` +
      `${settings.coreRounds} rounds of ${settings.coreSeconds} s per server and mix, ${settings.connections} connections, in turn and alternating order; CPU per response from /proc (every thread and child). Load average at the start: ${loadAtStart}, at the end: ${loadAverage()}.`,
    '',
    table(
      [
        'mix',
        'server',
        'req/s (median)',
        'p50 ms',
        'p99 ms',
        'CPU ms per response',
        'CPU / peer (per-round median)',
        'throughput / peer',
      ],
      rows,
    ),
    '',
  ].join('\n');
  return {
    markdown,
    commands: ['node bench/servers/postgres-fastify.ts <PostgreSQL port> bench (with --import tsx)'],
    targets: [
      {
        name: "npm start's detail path, CPU per request against fastify + PostgreSQL",
        target: `≤ ${fmt.x(DETAIL_CPU_FACTOR)}`,
        measured: `${fmt.ms(cpuOf('after', 'detail'))} vs ${fmt.ms(cpuOf('peer', 'detail'))} ms (medians); per-round ratio ${fmt.x(detailCpuRatio)}`,
        ok: detailCpuRatio <= DETAIL_CPU_FACTOR,
      },
    ],
  };
}
