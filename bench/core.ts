/**
 * Section 2: the proxy core against the static limit. (a) the proxy behind the node:http adapter, over the
 * catalogue published into a directory, with in-memory keys and quota; (b) a bare node:http server answering
 * the same requests with the exact bytes (a) returned. Both are child processes; the load generator
 * (autocannon, in this process) drives them with the same mix, the same connections and duration, alternating
 * rounds; medians are reported.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { rel, runCli, syncDisks } from './build.js';
import { forkServer, type ServerChild, stopAll } from './children.js';
import { get } from './http.js';
import { type LoadResult, runLoad, unexpected } from './load.js';
import { loadAverage } from './machine.js';
import { AUTH, coreMix, type Picks } from './mix.js';
import { profileTables, summarizeProfile } from './profile.js';
import { progress, type SectionResult } from './report.js';
import { BENCH_DIR, type Settings, WORK } from './settings.js';
import { fmt, median, table } from './stats.js';

/** The base tree's proxy-core server: bench/ since the bench became its own package, test/bench/ before. */
function baseProxyCore(base: string): string {
  const script = join(base, 'bench/servers/proxy-core.ts');
  return existsSync(script) ? script : join(base, 'test/bench/servers/proxy-core.ts');
}

export const THROUGHPUT_SHARE = 0.7;
export const P99_FACTOR = 2;

export interface Rounds {
  results: LoadResult[];
  rps: number;
  p50: number;
  p99: number;
}

export function summarize(results: LoadResult[]): Rounds {
  return {
    results,
    rps: median(results.map((r) => r.rps)),
    p50: median(results.map((r) => r.p50)),
    p99: median(results.map((r) => r.p99)),
  };
}

export function roundsTable(rows: [string, Rounds][]): string {
  const body: string[][] = [];
  for (const [name, rounds] of rows) {
    rounds.results.forEach((r, i) => {
      body.push([
        name,
        String(i + 1),
        fmt.int(r.requests),
        fmt.int(r.rps),
        fmt.ms(r.p50),
        fmt.ms(r.p90),
        fmt.ms(r.p99),
        fmt.ms(r.max),
        fmt.pct(r.generatorCpu),
        Object.entries(r.statuses)
          .map(([s, n]) => `${s}: ${fmt.int(n)}`)
          .join(', ') + (r.errors ? `, errors: ${r.errors}` : ''),
      ]);
    });
  }
  return table(
    [
      'server',
      'round',
      'responses',
      'req/s',
      'p50 ms',
      'p90 ms',
      'p99 ms',
      'max ms',
      'load generator CPU',
      'statuses',
    ],
    body,
  );
}

/** Check a run: only the statuses the mix expects, no socket errors. */
/**
 * Check a run: answers other than the expected statuses (e.g. a dependency's 503 under load) are reported,
 * not hidden; above 1 % of the responses the run does not measure what it claims, and that is an error.
 * Returns the unexpected statuses (`503×10`), or '' when there were none.
 */
export function checkRun(name: string, result: LoadResult, expected: readonly number[]): string {
  const odd = unexpected(result, expected);
  const oddCount = Object.entries(result.statuses)
    .filter(([status]) => !expected.includes(Number(status)))
    .reduce((sum, [, n]) => sum + n, 0);
  if (oddCount + result.errors > 0.01 * Math.max(1, result.requests)) {
    throw new Error(
      `${name}: unexpected answers under load (${odd || 'none'}; ${result.errors} socket errors)`,
    );
  }
  return [odd, result.errors ? `${result.errors} socket errors` : ''].filter(Boolean).join(', ');
}

/** Median of the per-round ratios a[i] / b[i] (rounds run back to back, so each pair saw the same machine). */
export function pairedRatio(
  a: readonly LoadResult[],
  b: readonly LoadResult[],
  pick: (r: LoadResult) => number,
): number {
  return median(a.map((r, i) => pick(r) / pick(b[i]!)));
}

/** Servers kept alive across sections (stopped by run.ts). */
export interface Shared {
  coreProxy?: ServerChild;
}

/** CPU time (user + system, ms) a child has used so far. */
export async function cpuMsOf(child: ServerChild): Promise<number> {
  const m = await child.request('cpu');
  return (Number(m.user) + Number(m.system)) / 1000;
}

export async function benchCore(
  settings: Settings,
  snapshotDir: string,
  picks: Picks,
  shared: Shared,
): Promise<SectionResult> {
  let proxy: ServerChild | undefined;
  let bare: ServerChild | undefined;
  let base: ServerChild | undefined;
  try {
    // Published by the CLI (an incremental publish: a no-op when the directory already holds this catalogue).
    progress('2. publishing the catalogue into a directory for the proxy core');
    const storeDir = join(WORK, 'core-store');
    const published = await runCli(['build', '--source', snapshotDir, '--out', storeDir]);
    await syncDisks();
    progress('2. starting the proxy core');
    proxy = await forkServer('proxy core', join(BENCH_DIR, 'servers/proxy-core.ts'), {
      args: [storeDir],
      bundled: true,
    });
    const port = Number(proxy.ready.port);
    progress('2. building the request mix (walking cursors)');
    const mix = await coreMix(port, picks);

    // Capture what the proxy answers to each request of the mix: the static server replays exactly that.
    const captured = [];
    const sizes: number[] = [];
    for (const entry of mix) {
      const reply = await get(port, entry.path, { ...AUTH, ...entry.headers });
      if (reply.status !== entry.expect) {
        throw new Error(
          `${entry.shown}: expected ${entry.expect}, got ${reply.status}: ${reply.body.toString().slice(0, 300)}`,
        );
      }
      sizes.push(reply.body.byteLength);
      captured.push({
        url: entry.path,
        ifNoneMatch: entry.headers?.['if-none-match'] ?? '',
        status: reply.status,
        headers: reply.headers,
        body: reply.body.toString('base64'),
      });
    }
    const capturedFile = join(WORK, 'captured.json');
    await writeFile(capturedFile, JSON.stringify(captured));
    bare = await forkServer('static bytes', join(BENCH_DIR, 'servers/static.ts'), {
      args: [capturedFile],
      bundled: true,
    });
    const staticPort = Number(bare.ready.port);
    for (const [i, entry] of mix.entries()) {
      const reply = await get(staticPort, entry.path, { ...AUTH, ...entry.headers });
      if (reply.status !== entry.expect || reply.body.byteLength !== sizes[i]) {
        throw new Error(`static server does not replay ${entry.shown}`);
      }
    }

    if (settings.coreBase) {
      progress(`2. starting the proxy core of ${settings.coreBase} beside it`);
      base = await forkServer('proxy core (base)', baseProxyCore(settings.coreBase), {
        args: [storeDir],
        bundled: true,
        bundleName: 'proxy-core-base',
      });
      for (const [i, entry] of mix.entries()) {
        const reply = await get(Number(base.ready.port), entry.path, { ...AUTH, ...entry.headers });
        if (reply.status !== entry.expect || reply.body.byteLength !== sizes[i]) {
          throw new Error(`the base tree's proxy core does not answer ${entry.shown} as this one does`);
        }
      }
    }

    const load = (p: number, seconds: number) =>
      runLoad({ port: p, requests: mix, seconds, connections: settings.connections, headers: AUTH });
    const loadAtStart = loadAverage();
    const proxyRuns: LoadResult[] = [];
    const staticRuns: LoadResult[] = [];
    const baseRuns: LoadResult[] = [];
    const servers: [ServerChild, number, LoadResult[]][] = [
      [proxy, port, proxyRuns],
      [bare, staticPort, staticRuns],
    ];
    if (base) servers.push([base, Number(base.ready.port), baseRuns]);
    if (settings.warmupSeconds > 0) {
      progress(`2. warm-up (${settings.warmupSeconds} s each)`);
      for (const [, p] of servers) await load(p, settings.warmupSeconds);
    }
    const cpu = new Map<ServerChild, number[]>(servers.map(([child]) => [child, []]));
    for (let round = 0; round < settings.coreRounds; round++) {
      progress(`2. round ${round + 1}/${settings.coreRounds} (${settings.coreSeconds} s per server)`);
      // Each server goes first in turn: a burst of the host's other work does not always fall on the same one.
      const order = servers.map((_, i) => servers[(i + round) % servers.length]!);
      for (const [child, p, runs] of order) {
        const cpuBefore = await cpuMsOf(child);
        const result = await load(p, settings.coreSeconds);
        cpu.get(child)!.push(((await cpuMsOf(child)) - cpuBefore) / result.requests);
        checkRun(
          child.name,
          result,
          mix.map((e) => e.expect),
        );
        runs.push(result);
      }
    }
    const a = summarize(proxyRuns);
    const b = summarize(staticRuns);
    // Ratios are taken per round (the two servers ran back to back) and their median is reported.
    const share = pairedRatio(proxyRuns, staticRuns, (r) => r.rps);
    const p99Factor = pairedRatio(proxyRuns, staticRuns, (r) => r.p99);
    const ok = share >= THROUGHPUT_SHARE && p99Factor <= P99_FACTOR;
    const proxyCpu = median(cpu.get(proxy)!);
    const staticCpu = median(cpu.get(bare)!);
    const baseTable = base
      ? baseRows(summarize(baseRuns), {
          proxyRuns,
          staticRuns,
          baseRuns,
          cpu: { proxy: proxyCpu, static: staticCpu, base: median(cpu.get(base)!) },
        })
      : '';

    let profile = '';
    if (settings.profile === 'always' || (settings.profile === 'auto' && !ok)) {
      progress('2. profiling the proxy under the same load (inspector)');
      await proxy.request('profile-start');
      const profiled = await load(port, settings.seconds);
      const file = join(WORK, 'prof', 'proxy-core.cpuprofile');
      await proxy.request('profile-stop', { file });
      profile = [
        `### Profile: proxy process under the mix (${fmt.int(profiled.rps)} req/s while profiled)`,
        '',
        profileTables(summarizeProfile(file)),
        '',
      ].join('\n');
    }
    progress('2. the core alone: handler cost per request, without HTTP');
    const iterations = 200 * settings.seconds;
    const costAnswer = await proxy.request(
      'handler-cost',
      { requests: mix.map((e) => ({ path: e.path, headers: { ...AUTH, ...e.headers } })), iterations },
      600_000,
    );
    const costs = costAnswer.costs as { cpuUs: number; wallUs: number }[];
    const byCategory = new Map<string, number[]>();
    mix.forEach((e, i) => {
      byCategory.set(e.category, [...(byCategory.get(e.category) ?? []), costs[i]!.cpuUs]);
    });
    const meanCost = costs.reduce((sum, c) => sum + c.cpuUs, 0) / costs.length;

    const markdown = [
      `Servers: (a) \`bench/servers/proxy-core.ts\` — \`createProxy\` (proxy/app.ts) over a DirectoryObjectStore of the catalogue as the CLI publishes it (\`${rel(storeDir)}\`; \`${published.summary}\`): a container's reads, which the byte cache ends once warm (section 4: 0 reads per request), so the process holds what a container holds rather than the whole catalogue; a MemoryKeyStore with one partner key behind the container's key cache (\`cachedKeys\`, as deployed over DynamoDB), a MemoryQuotaMeter with huge limits, the default JSON request log (to /dev/null), behind \`createHttpServer\` (proxy/adapters/http.ts); ` +
        '(b) `bench/servers/static.ts` — a bare `node:http` server answering from a Map keyed by URL + If-None-Match with the status, headers and body (a) returned for that request (captured once, replayed byte for byte; `date`/`connection`/`keep-alive` are added by Node in both).',
      '',
      `Load: autocannon 9 in the parent process (a separate process from both servers; the machine has 2 cores, so the generator and the server under test each get about one), ${settings.connections} connections, ` +
        `${settings.warmupSeconds} s warm-up per server, then ${settings.coreRounds} rounds of ${settings.coreSeconds} s per server, alternating which goes first (short rounds: a burst of the host's other work spoils one pair of rounds, and the median of the per-round ratios leaves it out). ` +
        `Each connection loops over the ${mix.length} requests of the mix in order, so every request type has the same weight. Latency percentiles are over every response (304s included); server CPU is the child's \`process.cpuUsage()\` (user + system) over the run divided by its responses — less sensitive than req/s to what else the machine is doing. Load average at the start: ${loadAtStart}.`,
      '',
      table(
        ['server', 'req/s (median)', 'p50 ms', 'p99 ms', 'server CPU µs per response'],
        [
          ['(a) proxy core', fmt.int(a.rps), fmt.ms(a.p50), fmt.ms(a.p99), fmt.int(proxyCpu * 1000)],
          ['(b) static bytes', fmt.int(b.rps), fmt.ms(b.p50), fmt.ms(b.p99), fmt.int(staticCpu * 1000)],
          [
            'ratio (a)/(b): median of the per-round ratios',
            fmt.pct(share),
            fmt.x(pairedRatio(proxyRuns, staticRuns, (r) => r.p50)),
            fmt.x(p99Factor),
            fmt.x(proxyCpu / staticCpu),
          ],
        ],
      ),
      '',
      `The load generator used ${fmt.pct(median(staticRuns.map((r) => r.generatorCpu)))} of a core while driving the static server (${fmt.pct(median(proxyRuns.map((r) => r.generatorCpu)))} for the proxy)${
        median(staticRuns.map((r) => r.generatorCpu)) >= 0.8
          ? ': on two cores it, not the static server, sets the static rate, so the real static limit is higher and the throughput ratio above is an upper bound. The CPU-per-response ratio does not depend on the generator'
          : ''
      }.`,
      '',
      'Every round:',
      '',
      baseTable,
      '',
      roundsTable([
        ['proxy', a],
        ['static', b],
        ...(base ? [['proxy (base)', summarize(baseRuns)] as [string, Rounds]] : []),
      ]),
      '',
      `Where the difference goes: the proxy core alone (the handler called in-process, no HTTP, ${fmt.int(iterations)} sequential calls per request after a warm-up; request id, request log line, key cache, in-memory quota and byte-cache hits included) costs on average **${fmt.int(meanCost)} µs of CPU per request** over the mix; the static server's whole HTTP exchange costs ${fmt.int(staticCpu * 1000)} µs. By category (mean µs per call): ${[
        ...byCategory,
      ]
        .map(
          ([category, values]) => `${category} ${fmt.int(values.reduce((a, v) => a + v, 0) / values.length)}`,
        )
        .join(', ')}.`,
      '',
      "The request mix (cursors obtained by walking `page.next_cursor`; ETags by asking once), with the core's cost of each:",
      '',
      table(
        ['#', 'category', 'request', 'path', 'If-None-Match', 'status', 'body bytes', 'core CPU µs/call'],
        mix.map((e, i) => [
          i + 1,
          e.category,
          e.label,
          `\`${e.shown}\``,
          e.headers?.['if-none-match'] ? 'yes' : '',
          e.expect,
          fmt.int(sizes[i]!),
          fmt.int(costs[i]!.cpuUs),
        ]),
      ),
      '',
      profile,
    ].join('\n');

    return {
      markdown,
      data: { cpuMs: proxyCpu },
      commands: [
        published.command,
        `node --import tsx bench/servers/proxy-core.ts ${rel(storeDir)}`,
        'node --import tsx bench/servers/static.ts bench/.work/captured.json',
      ],
      targets: [
        {
          name: 'Proxy core vs static bytes: throughput',
          target: `≥ ${fmt.pct(THROUGHPUT_SHARE)} of static`,
          measured: `${fmt.int(a.rps)} vs ${fmt.int(b.rps)} req/s (medians); per-round ratio ${fmt.pct(share)}; CPU per response ${fmt.x(proxyCpu / staticCpu)}`,
          ok: share >= THROUGHPUT_SHARE,
        },
        {
          name: 'Proxy core vs static bytes: p99',
          target: `within ${P99_FACTOR}× of static`,
          measured: `${fmt.ms(a.p99)} vs ${fmt.ms(b.p99)} ms (medians); per-round ratio ${fmt.x(p99Factor)}`,
          ok: p99Factor <= P99_FACTOR,
        },
      ],
    };
  } finally {
    // The proxy core stays up for section 3's reference row; run.ts stops it.
    if (proxy) shared.coreProxy = proxy;
    await stopAll([bare, base]);
  }
}

/**
 * The base tree's proxy core (BENCH_CORE_BASE) beside this one's: its figures, its ratio to the static server,
 * and this tree's to it — each the median of the per-round ratios of servers that ran in the same rounds.
 */
function baseRows(
  rounds: Rounds,
  runs: {
    proxyRuns: LoadResult[];
    staticRuns: LoadResult[];
    baseRuns: LoadResult[];
    /** Median CPU ms per response of each server. */
    cpu: { proxy: number; static: number; base: number };
  },
): string {
  const { proxyRuns, staticRuns, baseRuns, cpu } = runs;
  return [
    `The base tree's proxy core (\`BENCH_CORE_BASE\`, bundled from its own \`bench/servers/proxy-core.ts\` over the same directory) ran in the same rounds, each server first in turn:`,
    '',
    table(
      ['server', 'req/s (median)', 'p50 ms', 'p99 ms', 'server CPU µs per response'],
      [
        [
          '(a′) proxy core, base tree',
          fmt.int(rounds.rps),
          fmt.ms(rounds.p50),
          fmt.ms(rounds.p99),
          fmt.int(cpu.base * 1000),
        ],
        [
          "ratio (a′)/(b): the base tree's to static",
          fmt.pct(pairedRatio(baseRuns, staticRuns, (r) => r.rps)),
          fmt.x(pairedRatio(baseRuns, staticRuns, (r) => r.p50)),
          fmt.x(pairedRatio(baseRuns, staticRuns, (r) => r.p99)),
          fmt.x(cpu.base / cpu.static),
        ],
        [
          'ratio (a)/(a′): this tree to the base tree',
          fmt.x(pairedRatio(proxyRuns, baseRuns, (r) => r.rps)),
          fmt.x(pairedRatio(proxyRuns, baseRuns, (r) => r.p50)),
          fmt.x(pairedRatio(proxyRuns, baseRuns, (r) => r.p99)),
          fmt.x(cpu.proxy / cpu.base),
        ],
      ],
    ),
  ].join('\n');
}
