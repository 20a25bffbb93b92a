/**
 * Section 10: the Lambda function as deployed — the synthesized asset (infra/, esbuild as `cdk synth` runs
 * it) measured as Lambda runs it:
 * - its size, by part (esbuild's metafile, beside the cloud assembly's files, not in the asset);
 * - a fresh Node.js process importing it, against one importing an empty module;
 * - spawn → end of the first answer under the official runtime interface client (aws-lambda-ric, against the
 *   Runtime API emulator of runtime-api.ts), against a hello-world streaming handler run the same way;
 * - CPU per warm request in the function's process;
 * - memory under a flood of distinct valid URLs, with the heap limits Lambda's Node.js runtime sets at 512 MB.
 * The catalogue (the bench snapshot, published into a directory) is served by a loopback S3 stand-in that
 * answers GETs with Range and If-None-Match from the builder's output; keys and counters are in dynalite; the
 * cursor secret comes from a Secrets Manager stand-in. Node.js 24 (the runtime) and 22 (the previous one).
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Snapshot } from '../builder/snapshot/snapshot.js';
import { defaultByteCacheBytes, HEADROOM_MB, PROCESS_BESIDES_CACHE_MB } from '../proxy/cache/bytes.js';
import { generateApiKey } from '../tables/keys.js';
import { LAMBDA_NODE, nodeBinary, PREVIOUS_LAMBDA_NODE } from '../test/helpers/node-release.js';
import { bundledProxy, synth } from '../test/infra/helpers.js';
import { runCli } from './build.js';
import { forkServer } from './children.js';
import {
  benchFunctionEnv,
  coldRun,
  floodRequests,
  functionUrlEvent,
  LAMBDA_512_FLAGS,
  RIC_VERSION,
  runChild,
  runtimeInterfaceClient,
  seedBenchKey,
  startS3StandIn,
  startSecretsStandIn,
  timedRun,
  tinyPageRequests,
} from './function-harness.js';
import { progress, type SectionResult, type Target } from './report.js';
import { BENCH_DIR, BENCH_KEY, type Settings, WORK } from './settings.js';
import { fmt, median, table } from './stats.js';

const MB = 2 ** 20;

const summary = (s: number[]) => `${fmt.ms(median(s))} (${fmt.ms(Math.min(...s))}–${fmt.ms(Math.max(...s))})`;

/** What each part of the bundle weighs, from esbuild's metafile: packages, and our folders. */
export async function bundleParts(metafile: string): Promise<{ part: string; bytes: number }[]> {
  const meta = JSON.parse(await readFile(metafile, 'utf8'));
  const output = Object.values(meta.outputs as Record<string, { entryPoint?: string; inputs: object }>).find(
    (o) => o.entryPoint,
  )!;
  const parts = new Map<string, number>();
  for (const [file, info] of Object.entries(output.inputs as Record<string, { bytesInOutput: number }>)) {
    const packages = [...file.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)/g)].map((m) => m[1]);
    const part =
      packages.length > 0 ? packages.join(' › ') : `${file.replace(/^(\.\.\/)+/, '').split('/')[0]}/`;
    parts.set(part, (parts.get(part) ?? 0) + info.bytesInOutput);
  }
  return [...parts].map(([part, bytes]) => ({ part, bytes })).sort((a, b) => b.bytes - a.bytes);
}

export async function benchFunction(
  settings: Settings,
  snapshot: Snapshot,
  snapshotDir: string,
): Promise<SectionResult> {
  const work = join(WORK, 'function');
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const closers: (() => Promise<unknown>)[] = [];
  const commands: string[] = [];
  const targets: Target[] = [];
  try {
    progress('10. synthesizing the stack: the Lambda asset as `cdk synth` bundles it');
    const asset = bundledProxy(synth().assemblyDir);
    const parts = await bundleParts(asset.metafile);
    const nodes = { 24: nodeBinary(LAMBDA_NODE.version), 22: nodeBinary(PREVIOUS_LAMBDA_NODE.version) };

    progress(`10. publishing the ${fmt.int(snapshot.modules.length)}-module snapshot into a directory`);
    const published = join(work, 'catalogue');
    await runCli(['build', '--source', snapshotDir, '--out', published]);
    const s3 = await startS3StandIn(published);
    closers.push(s3.close);
    const secrets = await startSecretsStandIn();
    closers.push(secrets.close);
    const dynamoChild = await forkServer('dynalite', join(BENCH_DIR, 'servers/dynalite.ts'));
    closers.push(() => dynamoChild.stop());
    const dynamo = { endpoint: String(dynamoChild.ready.endpoint) };
    const floodKeys = Array.from({ length: Number(process.env.BENCH_FLOOD_KEYS ?? 500) }, generateApiKey);
    await seedBenchKey(dynamo.endpoint, floodKeys);

    // The function's environment as the stack sets it, the services on loopback.
    const functionEnv: NodeJS.ProcessEnv = {
      ...benchFunctionEnv({ s3: `${s3.endpoint}`, dynamodb: dynamo.endpoint, secrets: secrets.endpoint }),
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_LOG_GROUP_NAME: '/aws/lambda/bench',
      AWS_LAMBDA_LOG_STREAM_NAME: 'bench',
      KEY_CACHE_TTL_MS: '30000',
      POINTER_TTL_MS: '5000',
      DEPENDENCY_TIMEOUT_MS: '2000',
      PROXY_LOG: join(work, 'proxy.log'),
    };
    const bundleUrl = pathToFileURL(asset.path).href;
    const empty = join(work, 'empty.mjs');
    await writeFile(empty, 'export {};\n');
    const hello = join(work, 'hello');
    await mkdir(hello);
    await writeFile(
      join(hello, 'index.mjs'),
      [
        '// The smallest streaming handler: the reference for spawn → first answer.',
        'export const handler = awslambda.streamifyResponse(async (event, responseStream) => {',
        "  const stream = awslambda.HttpResponseStream.from(responseStream, { statusCode: 200, headers: { 'content-type': 'text/plain' } });",
        "  stream.write('hello');",
        '  stream.end();',
        '});',
        '',
      ].join('\n'),
    );

    // 1. A fresh process importing the asset vs an empty module, alternating.
    const importRuns = Number(process.env.BENCH_IMPORT_RUNS ?? 15);
    const imports: Record<string, { asset: number[]; empty: number[] }> = {};
    for (const [major, node] of Object.entries(nodes)) {
      progress(`10. import: ${importRuns} fresh Node.js ${major} processes each, alternating`);
      const runs = { asset: [] as number[], empty: [] as number[] };
      const script = (url: string) => ['--input-type=module', '-e', `await import(${JSON.stringify(url)})`];
      for (let i = 0; i < importRuns; i++) {
        runs.empty.push(await timedRun(node, script(pathToFileURL(empty).href), functionEnv));
        runs.asset.push(await timedRun(node, script(bundleUrl), functionEnv));
      }
      imports[major] = runs;
    }
    commands.push(
      `<node> --input-type=module -e 'await import("<asset>/index.mjs")' (and the same with an empty module), the function's environment, NODE_OPTIONS=--enable-source-maps`,
    );

    // 2. Spawn → end of the first answer under aws-lambda-ric, against hello world.
    const ric = await runtimeInterfaceClient();
    const coldRuns = Number(process.env.BENCH_COLD_RUNS ?? 10);
    const colds: Record<string, { proxy: number[]; hello: number[]; statuses: number[] }> = {};
    if (ric) {
      const event = functionUrlEvent('/v1/modules', 'limit=20&sort=name', `Bearer ${BENCH_KEY}`);
      for (const [major, node] of Object.entries(nodes)) {
        progress(
          `10. cold start: ${coldRuns} runtime processes each under aws-lambda-ric on Node.js ${major}`,
        );
        const runs = { proxy: [] as number[], hello: [] as number[], statuses: [] as number[] };
        for (let i = 0; i < coldRuns; i++) {
          runs.hello.push((await coldRun(node, ric, hello, functionEnv, event)).ms);
          const proxied = await coldRun(node, ric, dirname(asset.path), functionEnv, event);
          runs.proxy.push(proxied.ms);
          runs.statuses.push(proxied.status);
        }
        colds[major] = runs;
      }
      commands.push(
        `<node> ${LAMBDA_512_FLAGS.join(' ')} ${join('.work', `ric-${RIC_VERSION}`, 'node_modules/aws-lambda-ric/index.mjs')} index.handler (AWS_LAMBDA_RUNTIME_API: the emulator of bench/runtime-api.ts; LAMBDA_TASK_ROOT: the asset, or a hello-world streaming handler)`,
      );
    }

    // 3. CPU per warm request in the function's process.
    const hot = [{ path: '/v1/modules', query: 'limit=20&sort=name', authorization: `Bearer ${BENCH_KEY}` }];
    const hotFile = join(work, 'hot.json');
    await writeFile(hotFile, JSON.stringify(hot));
    const cpu: Record<string, number[]> = {};
    for (const [major, node] of Object.entries(nodes)) {
      progress(`10. CPU per warm request on Node.js ${major}`);
      const result = await runChild<{ cpuUsPerRequest: number[]; statuses: Record<string, number> }>(
        node,
        LAMBDA_512_FLAGS,
        ['cpu', bundleUrl, hotFile, String(Number(process.env.BENCH_CPU_ROUNDS ?? 7)), '500'],
        functionEnv,
      );
      if (Object.keys(result.statuses).some((s) => s !== '200'))
        throw new Error(`warm requests answered ${JSON.stringify(result.statuses)}`);
      cpu[major] = result.cpuUsPerRequest;
    }
    commands.push(`<node> ${LAMBDA_512_FLAGS.join(' ')} bench/function-child.mjs cpu <asset> hot.json 7 500`);

    // 4. Memory under a flood of distinct valid URLs, with the heap limits of a 512 MB function.
    const floodCount = Number(process.env.BENCH_FLOOD_REQUESTS ?? 20_000);
    const floodFile = join(work, 'flood.json');
    await writeFile(floodFile, JSON.stringify(floodRequests(snapshot, floodCount, floodKeys, settings.seed)));
    // And a hostile one: tiny first pages, each a cache entry of its own (BENCH_TINY_FLOOD_REQUESTS of them).
    const tinyCount = Number(process.env.BENCH_TINY_FLOOD_REQUESTS ?? 20_000);
    const tinyFile = join(work, 'flood-tiny.json');
    await writeFile(
      tinyFile,
      JSON.stringify(tinyPageRequests(snapshot, tinyCount, floodKeys, settings.seed)),
    );
    const floods: Flood[] = [];
    for (const [label, cacheMb, file] of [
      ['BYTE_CACHE_MB=32', 32, floodFile],
      ['default (512 MB function)', undefined, floodFile],
      ['tiny pages (limit 1–3, one field), default (512 MB function)', undefined, tinyFile],
    ] as const) {
      const tiny = file === tinyFile;
      const count = tiny ? tinyCount : floodCount;
      progress(`10. flood: ${fmt.int(count)} distinct URLs, ${floodKeys.length} keys, ${label}`);
      const env = { ...functionEnv, ...(cacheMb === undefined ? {} : { BYTE_CACHE_MB: String(cacheMb) }) };
      const result = await runChild<Pick<Flood, 'samples' | 'peakRss' | 'seconds' | 'statuses'>>(
        nodes[24],
        LAMBDA_512_FLAGS,
        ['flood', bundleUrl, file, '1000'],
        env,
      );
      const effective = cacheMb ?? defaultCacheMb(512);
      floods.push({
        cacheMb: effective,
        label,
        count,
        tiny,
        peakRss: result.peakRss,
        finalRss: result.samples.at(-1)!.rss,
        seconds: result.seconds,
        statuses: result.statuses,
        samples: result.samples,
      });
    }
    commands.push(
      `<node 24> ${LAMBDA_512_FLAGS.join(' ')} bench/function-child.mjs flood <asset> flood.json 1000`,
      `<node 24> ${LAMBDA_512_FLAGS.join(' ')} bench/function-child.mjs flood <asset> flood-tiny.json 1000`,
    );

    return report({
      asset,
      parts,
      imports,
      colds,
      cpu,
      floods,
      ric: ric !== undefined,
      commands,
      targets,
      keys: floodKeys.length,
    });
  } finally {
    for (const close of closers.reverse()) await close().catch(() => {});
  }
}

/** One flood of distinct URLs through the asset in a process of its own, with a 512 MB function's heap flags. */
interface Flood {
  cacheMb: number;
  label: string;
  /** Distinct request lines sent. */
  count: number;
  /** The hostile flood of tiny first pages (tinyPageRequests). */
  tiny: boolean;
  peakRss: number;
  finalRss: number;
  seconds: number;
  statuses: Record<string, number>;
  samples: { done: number; rss: number; heapUsed: number; external: number }[];
}

/** The default byte cache at `memoryMb` (proxy/cache/bytes.ts), in MB. */
function defaultCacheMb(memoryMb: number): number {
  return defaultByteCacheBytes({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb) }) / MB;
}

function report(r: {
  asset: { bytes: number; mapBytes: number };
  parts: { part: string; bytes: number }[];
  imports: Record<string, { asset: number[]; empty: number[] }>;
  colds: Record<string, { proxy: number[]; hello: number[]; statuses: number[] }>;
  cpu: Record<string, number[]>;
  floods: Flood[];
  ric: boolean;
  commands: string[];
  targets: Target[];
  keys: number;
}): SectionResult {
  const { targets } = r;
  const lines: string[] = [];
  lines.push(
    `The asset: \`index.mjs\` ${fmt.int(r.asset.bytes)} B (source map ${fmt.int(r.asset.mapBytes)} B, not loaded unless a stack trace is printed).`,
    '',
    table(
      ['part', 'bytes', 'share'],
      r.parts.map((p) => [p.part, fmt.int(p.bytes), `${((100 * p.bytes) / r.asset.bytes).toFixed(1)} %`]),
    ),
    '',
  );
  targets.push({
    name: 'Lambda asset size (without its source map)',
    target: '≤ 256 KB',
    measured: `${fmt.int(r.asset.bytes)} B`,
    ok: r.asset.bytes <= 256 * 1024,
  });
  const rows: (string | number)[][] = [];
  for (const [major, runs] of Object.entries(r.imports)) {
    const ratio = median(runs.asset) / median(runs.empty);
    rows.push([`Node.js ${major}`, summary(runs.empty), summary(runs.asset), fmt.x(ratio)]);
    if (major === String(LAMBDA_NODE.major))
      targets.push({
        name: `Fresh process importing the asset vs an empty module (Node.js ${major})`,
        target: '≤ 1.3×',
        measured: `${fmt.ms(median(runs.asset))} vs ${fmt.ms(median(runs.empty))} ms (${fmt.x(ratio)})`,
        ok: ratio <= 1.3,
      });
  }
  lines.push(
    `Import: wall time from spawn to exit of a fresh process importing the asset, or an empty module; medians (min–max) of ${r.imports[24]?.asset.length} alternating runs, ms.`,
    '',
    table(['runtime', 'empty module', 'the asset', 'ratio of medians'], rows),
    '',
  );
  if (r.ric) {
    const coldRows: (string | number)[][] = [];
    for (const [major, runs] of Object.entries(r.colds)) {
      const ratio = median(runs.proxy) / median(runs.hello);
      coldRows.push([
        `Node.js ${major}`,
        summary(runs.hello),
        summary(runs.proxy),
        fmt.x(ratio),
        runs.statuses.join(' '),
      ]);
      if (major === String(LAMBDA_NODE.major))
        targets.push({
          name: `Spawn → first answer under aws-lambda-ric vs hello world (Node.js ${major})`,
          target: '≤ 1.5×',
          measured: `${fmt.ms(median(runs.proxy))} vs ${fmt.ms(median(runs.hello))} ms (${fmt.x(ratio)})`,
          ok: ratio <= 1.5 && runs.statuses.every((s) => s === 200),
        });
    }
    lines.push(
      `Cold start: spawn of the runtime process → the end of the first answer at the Runtime API emulator, under aws-lambda-ric ${RIC_VERSION} with Lambda's heap flags at 512 MB; the proxy's first request is a filtered, sorted first page with a key (the cursor secret from the Secrets Manager stand-in, the key lookup, the pointer, the shard and the range overlapping where they can, then the metering write). Medians (min–max) of ${r.colds[24]?.proxy.length} alternating runs, ms.`,
      '',
      table(['runtime', 'hello world', 'the proxy', 'ratio of medians', 'statuses'], coldRows),
      '',
    );
  } else lines.push('Cold start: aws-lambda-ric could not be installed on this machine; not measured.', '');
  const cpuRows = Object.entries(r.cpu).map(([major, values]) => [
    `Node.js ${major}`,
    fmt.int(median(values)),
    `${fmt.int(Math.min(...values))}–${fmt.int(Math.max(...values))}`,
  ]);
  const cpu24 = median(r.cpu[24] ?? [Number.NaN]);
  targets.push({
    name: "CPU per warm request in the function's process (Node.js 24)",
    target: '≤ 200 µs',
    measured: `${fmt.int(cpu24)} µs`,
    ok: cpu24 <= 200,
  });
  lines.push(
    "CPU per warm request: the asset's handler in its own process (a runtime stand-in for `awslambda`), a hot filtered, sorted first page (cached key, cached answer, one metering UpdateItem against dynalite in another process); `process.cpuUsage()` around batches of 500, median (min–max) over the batches, µs.",
    '',
    table(['runtime', 'CPU µs per request', 'range'], cpuRows),
    '',
  );
  // What the default sizing sets aside besides the cache (proxy/cache/bytes.ts): a 512 MB function's whole memory.
  const allowanceMb = (f: Flood) => f.cacheMb + PROCESS_BESIDES_CACHE_MB + HEADROOM_MB;
  // What the flood itself added: from the first sample after 1,000 requests (the code loaded and warm) to the peak.
  const rise = (f: Flood) => f.peakRss - (f.samples[1] ?? f.samples[0]!).rss;
  const floodRows = r.floods.map((f) => [
    f.label,
    `${fmt.int(f.cacheMb)} MB`,
    `${fmt.int(f.peakRss / MB)} MB`,
    `${fmt.int(f.finalRss / MB)} MB`,
    `${fmt.int(f.cacheMb + 160)} MB`,
    f.peakRss <= (f.cacheMb + 160) * MB ? 'within' : '**over**',
    `${fmt.int(allowanceMb(f))} MB`,
    f.peakRss <= allowanceMb(f) * MB ? 'within' : '**over**',
    `${fmt.int(rise(f) / MB)} MB`,
    `${fmt.int(f.count / f.seconds)}/s`,
    Object.entries(f.statuses)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', '),
  ]);
  for (const f of r.floods)
    targets.push(
      {
        name: `Memory under a flood of distinct URLs, ${f.label}`,
        target: `≤ byte cache + 160 MB (${fmt.int(f.cacheMb + 160)} MB)`,
        measured: `peak RSS ${fmt.int(f.peakRss / MB)} MB`,
        ok: f.peakRss <= (f.cacheMb + 160) * MB,
      },
      {
        name: `The same flood within what the default sizing sets aside, ${f.label}`,
        target: `≤ byte cache + ${PROCESS_BESIDES_CACHE_MB} + ${HEADROOM_MB} MB (${fmt.int(allowanceMb(f))} MB)`,
        measured: `peak RSS ${fmt.int(f.peakRss / MB)} MB`,
        ok: f.peakRss <= allowanceMb(f) * MB,
      },
    );
  lines.push(
    `Memory: ${fmt.int(r.floods.find((f) => !f.tiny)?.count ?? 0)} distinct valid request lines (module lists over every filter combination, sorts, sparse fields, includes and limits; details with includes; the other lists) spread over ${r.keys} keys, one at a time as a sandbox takes them; then ${fmt.int(r.floods.find((f) => f.tiny)?.count ?? 0)} of a hostile kind, first pages as small as the language allows (limit 1–3, one field, over the list of every manufacturer, width, tag and standard, and of every manufacturer and width together: a cache entry each, of well under a kilobyte), in one process with Lambda's heap flags at 512 MB (${LAMBDA_512_FLAGS.join(' ')}). Peak RSS is the kernel's high-water mark (VmHWM).`,
    '',
    table(
      [
        'byte cache',
        'size',
        'peak RSS',
        'final RSS',
        'cache + 160 MB',
        '',
        `cache + ${PROCESS_BESIDES_CACHE_MB + HEADROOM_MB} MB (the default sizing's allowance)`,
        '',
        'rise after 1,000 requests',
        'rate',
        'statuses',
      ],
      floodRows,
    ),
    '',
    'RSS every 1,000 requests (MB), first run then second: ',
    ...r.floods.map((f) => `- ${f.label}: ${f.samples.map((s) => fmt.int(s.rss / MB)).join(', ')}`),
    '',
  );
  return { markdown: lines.join('\n'), commands: r.commands, targets };
}
