/**
 * Section 6: content coding — CPU and bytes per response with and without compression, for a first page of
 * 100 records with every include and a default 50-record page. "Cached" is the byte cache's hit (the coded
 * bytes of a hot answer, compressed once); "per request" is the same proxy with `BYTE_CACHE_MB=0`, which
 * compresses every coded answer. Measured twice: the core alone (handler calls in-process) and the whole
 * HTTP exchange (sequential keep-alive GETs, the server child's CPU per response). Then the settings table:
 * gzip levels and brotli qualities on the large page, and sync against async zlib.
 */
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  brotliCompress,
  brotliCompressSync,
  brotliDecompressSync,
  constants,
  gunzipSync,
  gzip,
  gzipSync,
} from 'node:zlib';
import { forkServer, type ServerChild } from './children.js';
import { cpuMsOf } from './core.js';
import { get } from './http.js';
import { AUTH } from './mix.js';
import { progress, type SectionResult } from './report.js';
import { BENCH_DIR, type Settings } from './settings.js';
import { fmt, median, table } from './stats.js';

const PAGES = [
  ['first page, 100 records, every include', '/v1/modules?limit=100&include=ins,outs,tags,panels'],
  ['default page (50 records, all fields)', '/v1/modules'],
] as const;

type Cache = 'hot' | 'cold';
const VARIANTS: [label: string, coding: 'gzip' | 'br' | undefined, cache: Cache][] = [
  ['identity (no Accept-Encoding)', undefined, 'hot'],
  ['gzip, cached', 'gzip', 'hot'],
  ['gzip, compressed per request', 'gzip', 'cold'],
  ['br, cached', 'br', 'hot'],
  ['br, compressed per request', 'br', 'cold'],
];

const decode = { br: brotliDecompressSync, gzip: gunzipSync } as const;

export async function benchCoding(settings: Settings, snapshotDir: string): Promise<SectionResult> {
  let child: ServerChild | undefined;
  try {
    progress('6. starting the proxy with and without a byte cache (renders the catalogue in memory)');
    child = await forkServer('proxy (content coding)', join(BENCH_DIR, 'servers/proxy-coding.ts'), {
      args: [snapshotDir],
      nodeFlags: ['--max-old-space-size=4096'],
    });
    const server = child;
    const ports: Record<Cache, number> = {
      hot: Number(server.ready.hotPort),
      cold: Number(server.ready.coldPort),
    };
    const iterations = 100 * settings.seconds;
    const rows: string[][] = [];
    const bodies = new Map<string, Buffer>();
    for (const [pageLabel, path] of PAGES) {
      let identityBytes = 0;
      let identityCpu = 0;
      for (const [label, coding, cache] of VARIANTS) {
        progress(`6. ${pageLabel}: ${label}`);
        const headers: Record<string, string> = { ...AUTH, ...(coding ? { 'accept-encoding': coding } : {}) };
        const core = await server.request('handler-cost', { path, headers, iterations, cache }, 600_000);

        // The whole exchange over HTTP: sequential GETs, the server's CPU per response.
        const port = ports[cache];
        let reply = await get(port, path, headers);
        for (let i = 0; i < 20; i++) reply = await get(port, path, headers);
        const cpuBefore = await cpuMsOf(server);
        const started = performance.now();
        for (let i = 0; i < iterations; i++) reply = await get(port, path, headers);
        const wallUs = ((performance.now() - started) * 1000) / iterations;
        const serverCpuUs = (((await cpuMsOf(server)) - cpuBefore) * 1000) / iterations;
        if (reply.status !== 200 || reply.headers['content-encoding'] !== coding)
          throw new Error(`${path} (${label}): ${reply.status}, coding ${reply.headers['content-encoding']}`);
        const plain = coding ? decode[coding](reply.body) : reply.body;
        if (!coding) bodies.set(path, reply.body);
        else if (!plain.equals(bodies.get(path)!)) throw new Error(`${path} (${label}) does not decode`);
        if (!coding) {
          identityBytes = reply.body.byteLength;
          identityCpu = serverCpuUs;
        }
        rows.push([
          pageLabel,
          label,
          fmt.int(reply.body.byteLength),
          coding ? fmt.pct(reply.body.byteLength / identityBytes) : '100 %',
          fmt.int(Number(core.cpuUs)),
          fmt.int(serverCpuUs),
          coding
            ? `${serverCpuUs >= identityCpu ? '+' : '−'}${fmt.int(Math.abs(serverCpuUs - identityCpu))}`
            : '',
          fmt.int(wallUs),
        ]);
      }
    }

    progress('6. compression settings on the large page');
    const large = bodies.get(PAGES[0][1])!;
    const settingsTable = compressionSettings(large, settings.seconds);
    const asyncTable = await syncAgainstAsync(large, bodies.get(PAGES[1][1])!, settings.seconds);

    const markdown = [
      'Server: `bench/servers/proxy-coding.ts` — `createProxy` over a MemoryObjectStore holding the rendered catalogue, twice: ' +
        'with a 64 MB byte cache ("cached": the coded bytes of a hot answer, compressed once) and with `BYTE_CACHE_MB=0` ("per request": compressed on every request), each behind `createHttpServer`. ' +
        `Core: the handler called in-process, ${fmt.int(iterations)} sequential calls after a warm-up. HTTP: ${fmt.int(iterations)} sequential keep-alive GETs from this process; the server's CPU (\`process.cpuUsage()\` of the child) per response, and the client's wall time per request (loopback).`,
      '',
      table(
        [
          'page',
          'answer',
          'bytes sent',
          'of identity',
          'core CPU µs/call',
          'server CPU µs/response (HTTP)',
          'vs identity',
          'wall µs/request',
        ],
        rows,
      ),
      '',
      `Compression alone on the large page (${fmt.int(large.byteLength)} B identity), CPU µs per call (median of rounds, sync zlib in the bench process); the proxy uses **br quality 5** and **gzip level 6**:`,
      '',
      settingsTable,
      '',
      'Sync against async zlib (the proxy compresses synchronously: a Lambda container serves one request at a time, and the threadpool hop costs CPU on every miss):',
      '',
      asyncTable,
      '',
    ].join('\n');
    return {
      markdown,
      targets: [],
      commands: [
        `node --import tsx --max-old-space-size=4096 bench/servers/proxy-coding.ts ${snapshotDir.replace(BENCH_DIR, 'bench/')}`,
      ],
    };
  } finally {
    await child?.stop();
  }
}

/** Median CPU µs per call of `work`, over rounds of ~40 ms each. */
function cpuPerCall(work: () => unknown, rounds: number): number {
  for (let i = 0; i < 5; i++) work();
  const samples: number[] = [];
  for (let round = 0; round < rounds; round++) {
    let n = 0;
    const cpu = process.cpuUsage();
    const started = performance.now();
    while (performance.now() - started < 40) {
      work();
      n++;
    }
    const used = process.cpuUsage(cpu);
    samples.push((used.user + used.system) / n);
  }
  return median(samples);
}

const brotliOptions = (body: Buffer, quality: number) => ({
  params: {
    [constants.BROTLI_PARAM_QUALITY]: quality,
    [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
    [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength,
  },
});

function compressionSettings(body: Buffer, seconds: number): string {
  const rounds = Math.max(5, 3 * seconds);
  const rows: string[][] = [];
  const add = (name: string, work: () => Buffer) => {
    const size = work().byteLength;
    rows.push([name, fmt.int(size), fmt.x(body.byteLength / size), fmt.int(cpuPerCall(work, rounds))]);
  };
  for (const level of [1, 4, 5, 6, 9]) add(`gzip ${level}`, () => gzipSync(body, { level }));
  for (const quality of [3, 4, 5, 6, 8])
    add(`br ${quality}`, () => brotliCompressSync(body, brotliOptions(body, quality)));
  return table(['setting', 'bytes', 'ratio', 'CPU µs/call'], rows);
}

async function syncAgainstAsync(large: Buffer, small: Buffer, seconds: number): Promise<string> {
  const gzipAsync = promisify(gzip);
  const brotliAsync = promisify(brotliCompress);
  const calls = 50 * seconds;
  const rows: string[][] = [];
  for (const [label, body] of [
    [`large page (${fmt.int(large.byteLength)} B)`, large],
    [`default page (${fmt.int(small.byteLength)} B)`, small],
  ] as const) {
    const work = {
      'gzip 6': {
        sync: () => gzipSync(body, { level: 6 }),
        async: () => gzipAsync(body, { level: 6 }),
      },
      'br 5': {
        sync: () => brotliCompressSync(body, brotliOptions(body, 5)),
        async: () => brotliAsync(body, brotliOptions(body, 5)),
      },
    };
    for (const [name, { sync, async }] of Object.entries(work)) {
      const syncCpu = cpuPerCall(sync, Math.max(5, 3 * seconds));
      for (let i = 0; i < 10; i++) await async();
      const cpu = process.cpuUsage();
      const started = performance.now();
      for (let i = 0; i < calls; i++) await async();
      const used = process.cpuUsage(cpu);
      const asyncCpu = (used.user + used.system) / calls;
      rows.push([
        label,
        name,
        fmt.int(syncCpu),
        fmt.int(asyncCpu),
        `${asyncCpu >= syncCpu ? '+' : '−'}${fmt.int(Math.abs(asyncCpu - syncCpu))}`,
        fmt.int(((performance.now() - started) * 1000) / calls),
      ]);
    }
  }
  return table(
    ['body', 'coding', 'sync CPU µs', 'async CPU µs (all threads)', 'async extra', 'async wall µs'],
    rows,
  );
}
