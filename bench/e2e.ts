/**
 * Section 3: end to end. The local stack — s3rver and dynalite in one child process, the catalogue
 * published into s3rver, the production wiring of proxy/app.ts in another — against json-server 0.17 over
 * a db.json of the same catalogue, on equivalent filtered, sorted pages.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { s3Client } from '../aws/sdk.js';
import { renderCatalogue } from '../builder/render/full.js';
import type { Snapshot } from '../builder/snapshot/snapshot.js';
import { objectKeyFor, POINTER_KEY } from '../store/layout.js';
import { S3ObjectStore } from '../store/objects/s3.js';
import { MODULE_FIELDS, variantKey } from '../store/schema.js';
import { forkServer, runCommand, type ServerChild, stopAll } from './children.js';
import { checkRun, cpuMsOf, pairedRatio, roundsTable, type Shared, summarize } from './core.js';
import { get, json } from './http.js';
import { type LoadResult, runLoad } from './load.js';
import { loadAverage } from './machine.js';
import { AUTH, type PeerEntry, type Picks, peerMix, peerQueries } from './mix.js';
import { profileTables, summarizeProfile } from './profile.js';
import { progress, type SectionResult } from './report.js';
import {
  BENCH_DIR,
  CURSOR_SECRET,
  REPO,
  type Settings,
  STACK_BUCKET,
  STACK_PREFIX,
  STACK_TABLES,
  WORK,
} from './settings.js';
import { fmt, median, table } from './stats.js';

export const PEER_FACTOR = 20;

export interface Stack {
  deps: ServerChild;
  proxy: ServerChild;
  s3Endpoint: string;
  dynamoEndpoint: string;
  /** The proxy's environment (its configuration). */
  env: Record<string, string>;
  publish: {
    mode: 'full' | 'mix';
    seconds: number;
    objects: number;
    bytes: number;
    summary: string;
    command: string;
  };
  stop(): Promise<void>;
}

const rel = (path: string) => relative(REPO, path);

/** Upload only what the section 3–5 requests read (plus the pointer): for short development runs. */
async function publishMix(snapshot: Snapshot, picks: Picks, endpoint: string) {
  const started = performance.now();
  const { index, pointer, pointerBytes, objects } = renderCatalogue(snapshot);
  const wanted = new Set<string>(pointer.shards);
  for (const query of peerQueries(picks))
    wanted.add(index.lists[variantKey('modules', query.filters, 'name')]![0]);
  wanted.add(index.modules[picks.moduleId]!);
  wanted.add(index.manufacturers[picks.bigMaker]!);
  wanted.add(index.manufacturers[picks.medianMaker]!);
  const client = s3Client({ endpoint });
  const store = new S3ObjectStore({ client, bucket: STACK_BUCKET });
  let bytes = 0;
  try {
    for (const id of wanted) {
      const body = objects.get(id)!;
      bytes += body.byteLength;
      await store.put(objectKeyFor(STACK_PREFIX, id), body);
    }
    await store.put(`${STACK_PREFIX}${POINTER_KEY}`, pointerBytes, { contentType: 'application/json' });
  } finally {
    client.destroy();
  }
  return {
    mode: 'mix' as const,
    seconds: (performance.now() - started) / 1000,
    objects: wanted.size,
    bytes,
    summary: `${wanted.size} of ${objects.size} objects uploaded (those the requests of sections 3–5 read) and the pointer`,
    command: '(in-process: renderCatalogue, then S3ObjectStore.put of the selected objects and current.json)',
  };
}

/** s3rver + dynalite, the catalogue published into s3rver, and the production proxy over them. */
export async function startStack(
  settings: Settings,
  snapshot: Snapshot,
  snapshotDir: string,
  picks: Picks,
): Promise<Stack> {
  const s3Dir = join(WORK, 's3');
  const ddbDir = join(WORK, 'dynamo');
  await rm(s3Dir, { recursive: true, force: true });
  await rm(ddbDir, { recursive: true, force: true });
  let deps: ServerChild | undefined;
  let proxy: ServerChild | undefined;
  try {
    progress('3. starting s3rver + dynalite');
    deps = await forkServer('s3rver + dynalite', join(BENCH_DIR, 'servers/stack.ts'), {
      args: [s3Dir, ddbDir],
    });
    const s3Endpoint = String(deps.ready.s3Endpoint);
    const dynamoEndpoint = String(deps.ready.dynamoEndpoint);
    let publish: Stack['publish'];
    if (settings.s3Publish === 'full') {
      progress(
        `3. publishing ${settings.modules} modules into s3rver with the CLI (slow: s3rver stores each object as files)`,
      );
      const args = [
        '--import',
        'tsx',
        'builder/cli.ts',
        'build',
        '--source',
        snapshotDir,
        '--out',
        `s3://${STACK_BUCKET}/${STACK_PREFIX}`,
        '--endpoint',
        s3Endpoint,
      ];
      const result = await runCommand(process.execPath, args);
      if (result.code !== 0)
        throw new Error(`publishing into s3rver failed (${result.code}): ${result.stderr.slice(-2000)}`);
      const summary = result.stdout.trim().split('\n').pop() ?? '';
      const bytesMatch = /objects added \(([\d.]+) (B|kB|MB|GB)\)/.exec(summary);
      const unit = { B: 1, kB: 1e3, MB: 1e6, GB: 1e9 }[bytesMatch?.[2] ?? 'B'] ?? 1;
      publish = {
        mode: 'full',
        seconds: result.seconds,
        objects: Number(/: (\d+) objects added/.exec(summary)?.[1] ?? Number.NaN),
        bytes: Number(bytesMatch?.[1] ?? Number.NaN) * unit,
        summary,
        command: `node --import tsx builder/cli.ts build --source ${rel(snapshotDir)} --out s3://${STACK_BUCKET}/${STACK_PREFIX} --endpoint ${s3Endpoint}`,
      };
    } else {
      progress('3. uploading the objects the e2e requests read into s3rver');
      publish = await publishMix(snapshot, picks, s3Endpoint);
    }

    const env = {
      CATALOGUE_BUCKET: STACK_BUCKET,
      CATALOGUE_PREFIX: STACK_PREFIX,
      S3_ENDPOINT: s3Endpoint,
      KEYS_TABLE: STACK_TABLES.keysTable,
      COUNTERS_TABLE: STACK_TABLES.countersTable,
      DYNAMODB_ENDPOINT: dynamoEndpoint,
      CURSOR_SECRET,
    };
    progress('3. starting the proxy (production wiring)');
    proxy = await forkServer('proxy (s3rver + dynalite)', join(BENCH_DIR, 'servers/proxy-app.ts'), {
      env,
      nodeFlags: ['--expose-gc'],
    });
    const stack: Stack = {
      deps,
      proxy,
      s3Endpoint,
      dynamoEndpoint,
      env,
      publish,
      stop: () => stopAll([deps, proxy]),
    };
    return stack;
  } catch (error) {
    await stopAll([deps, proxy]);
    throw error;
  }
}

/** What the 5xx answers of the proxy child were, from its kept log lines (empty when there were none). */
export async function failuresOf(proxy: ServerChild): Promise<string> {
  const answer = await proxy.request('failures');
  const count = Number(answer.count);
  if (count === 0) return '';
  const causes = new Map<string, number>();
  for (const line of answer.lines as { status: number; error?: string }[]) {
    const key = `${line.status} ${line.error ?? '(no error recorded)'}`;
    causes.set(key, (causes.get(key) ?? 0) + 1);
  }
  return `The proxy answered ${count} request${count === 1 ? '' : 's'} with a 5xx; causes from its request log (first ${
    (answer.lines as unknown[]).length
  }): ${[...causes].map(([cause, n]) => `\`${cause}\` ×${n}`).join(', ')}.`;
}

/** db.json for json-server: the module records as the API's default representation shows them. */
async function writeDb(snapshot: Snapshot): Promise<string> {
  const modules = snapshot.modules.map((module) => {
    const record: Record<string, unknown> = {};
    for (const field of MODULE_FIELDS) record[field] = module[field];
    return record;
  });
  const file = join(WORK, 'db.json');
  await writeFile(
    file,
    JSON.stringify({
      modules,
      manufacturers: snapshot.manufacturers,
      standards: snapshot.standards,
      tags: snapshot.tags,
    }),
  );
  return file;
}

interface Check {
  proxyRecords: number;
  peerRecords: number;
  total: string;
  sameIds: string;
}

async function compare(proxyPort: number, peerPort: number, entry: PeerEntry): Promise<Check> {
  const mine = await get(proxyPort, entry.proxy.path, AUTH);
  const theirs = await get(peerPort, entry.peer);
  if (mine.status !== 200 || theirs.status !== 200) {
    throw new Error(`${entry.label}: proxy ${mine.status}, json-server ${theirs.status}`);
  }
  const a = json(mine).data.map((r) => r.id);
  const b = json<{ id: number }[]>(theirs).map((r) => r.id);
  const total = String(theirs.headers['x-total-count'] ?? '?');
  // Both sort by name but with different collations (ours: natural, case- and accent-insensitive; json-server:
  // lodash orderBy, code units), so ids can be compared only where the whole filtered set is one page.
  const whole = Number(total) <= 50 && entry.page === 1;
  const same = [...a].sort((x, y) => x - y).join() === [...b].sort((x, y) => x - y).join();
  return {
    proxyRecords: a.length,
    peerRecords: b.length,
    total,
    sameIds: whole ? (same ? 'yes' : '**no**') : 'n/a (order differs)',
  };
}

export async function benchPeer(
  settings: Settings,
  stack: Stack,
  snapshot: Snapshot,
  picks: Picks,
  shared: Shared,
): Promise<SectionResult> {
  let peer: ServerChild | undefined;
  try {
    const db = await writeDb(snapshot);
    peer = await forkServer('json-server', join(BENCH_DIR, 'servers/json-server.ts'), { args: [db] });
    const peerPort = Number(peer.ready.port);
    const port = Number(stack.proxy.ready.port);
    progress('3. building the peer mix (walking cursors through the stack)');
    const entries = await peerMix(port, picks);
    const checks: Check[] = [];
    for (const entry of entries) checks.push(await compare(port, peerPort, entry));
    const proxyMix = entries.map((e) => e.proxy);
    const peerMixRequests = entries.map((e) => ({ path: e.peer }));

    const loadProxy = (seconds: number) =>
      runLoad({ port, requests: proxyMix, seconds, connections: settings.connections, headers: AUTH });
    const loadPeer = (seconds: number) =>
      runLoad({ port: peerPort, requests: peerMixRequests, seconds, connections: settings.connections });
    const loadAtStart = loadAverage();
    if (settings.warmupSeconds > 0) {
      progress(`3. warm-up (${settings.warmupSeconds} s each)`);
      await loadProxy(settings.warmupSeconds);
      await loadPeer(settings.warmupSeconds);
    }
    const mine: LoadResult[] = [];
    const theirs: LoadResult[] = [];
    // CPU per response of each process involved: where the time goes.
    const cpu = { proxy: [] as number[], deps: [] as number[], peer: [] as number[] };
    const measured = async (children: [ServerChild, number[]][], run: () => Promise<LoadResult>) => {
      const before = await Promise.all(children.map(([child]) => cpuMsOf(child)));
      const result = await run();
      const after = await Promise.all(children.map(([child]) => cpuMsOf(child)));
      children.forEach(([, into], i) => {
        into.push((after[i]! - before[i]!) / result.requests);
      });
      return result;
    };
    for (let round = 0; round < settings.rounds; round++) {
      progress(`3. round ${round + 1}/${settings.rounds} (${settings.seconds} s per server)`);
      const order: (() => Promise<void>)[] = [
        async () => {
          const r = await measured(
            [
              [stack.proxy, cpu.proxy],
              [stack.deps, cpu.deps],
            ],
            () => loadProxy(settings.seconds),
          );
          checkRun('stack', r, [200]);
          mine.push(r);
        },
        async () => {
          const r = await measured([[peer!, cpu.peer]], () => loadPeer(settings.seconds));
          checkRun('json-server', r, [200]);
          theirs.push(r);
        },
      ];
      if (round % 2 === 1) order.reverse();
      for (const run of order) await run();
    }
    const a = summarize(mine);
    const b = summarize(theirs);
    // Per-round ratios (the two ran back to back under the same machine load); their median is the result.
    const factor = pairedRatio(mine, theirs, (r) => r.rps);
    const failures = await failuresOf(stack.proxy);
    const { publish } = stack;
    const proxyCpu = median(cpu.proxy);
    const depsCpu = median(cpu.deps);
    const peerCpu = median(cpu.peer);

    let profile = '';
    if (settings.profile === 'always' || (settings.profile === 'auto' && factor < PEER_FACTOR)) {
      progress('3. profiling the proxy and s3rver + dynalite under the same load (inspector)');
      await stack.proxy.request('profile-start');
      await stack.deps.request('profile-start');
      const profiled = await loadProxy(settings.seconds);
      const proxyFile = join(WORK, 'prof', 'proxy-app.cpuprofile');
      const depsFile = join(WORK, 'prof', 'stack-deps.cpuprofile');
      await stack.proxy.request('profile-stop', { file: proxyFile });
      await stack.deps.request('profile-stop', { file: depsFile });
      profile = [
        `### Profile: the end-to-end proxy process (${fmt.int(profiled.rps)} req/s while profiled)`,
        '',
        profileTables(summarizeProfile(proxyFile)),
        '',
        '### Profile: the s3rver + dynalite process, same run',
        '',
        profileTables(summarizeProfile(depsFile)),
        '',
      ].join('\n');
    }

    // Reference: the same pages from the proxy core of section 2 (what the proxy does without emulators).
    let reference: LoadResult | undefined;
    let referenceCpu = Number.NaN;
    if (shared.coreProxy) {
      progress('3. reference: the same mix against the proxy core of section 2');
      const memoryPort = Number(shared.coreProxy.ready.port);
      const memoryMix = (await peerMix(memoryPort, picks)).map((e) => e.proxy);
      const memory = shared.coreProxy;
      const cpuOf: number[] = [];
      await runLoad({
        port: memoryPort,
        requests: memoryMix,
        seconds: settings.warmupSeconds || 1,
        connections: settings.connections,
        headers: AUTH,
      });
      reference = await measured([[memory, cpuOf]], () =>
        runLoad({
          port: memoryPort,
          requests: memoryMix,
          seconds: settings.seconds,
          connections: settings.connections,
          headers: AUTH,
        }),
      );
      checkRun('proxy core', reference, [200]);
      referenceCpu = cpuOf[0]!;
    }

    const markdown = [
      `Stack: \`bench/servers/stack.ts\` runs s3rver and dynalite (@catalogue/local-aws, packages/local-aws/src/servers.ts) in one child process (tables created, one partner key registered with huge limits); ` +
        `\`bench/servers/proxy-app.ts\` runs \`createProxy(loadConfig())\` — the production wiring: the request path's one client (lean signed requests) for LeanS3ObjectStore, CachedKeyStore over DynamoKeyStore (30 s TTL), DynamoQuotaMeter (one conditional UpdateItem per request), 5 s pointer re-check — behind \`createHttpServer\`, in another. ` +
        'Peer: `bench/servers/json-server.ts` runs json-server 0.17.4 (its default middlewares without the logger, as `json-server --quiet db.json`) over a db.json of the same catalogue (modules with the top-level fields the API shows by default, manufacturers, standards, tags), in a third.',
      '',
      `Catalogue in s3rver: ${
        publish.mode === 'full'
          ? `the whole ${fmt.int(settings.modules)}-module catalogue, published with the CLI (\`${publish.command}\`): **${fmt.s(publish.seconds)} s** for ${fmt.int(publish.objects)} objects (${fmt.mb(publish.bytes)}), ${fmt.s(publish.objects / publish.seconds)} objects/s. CLI: \`${publish.summary}\``
          : `\`BENCH_S3_PUBLISH=mix\`: ${publish.summary} (${fmt.s(publish.seconds)} s). The proxy reads only these objects, so its answers are those of a full publish; the full publish time is measured with \`BENCH_S3_PUBLISH=full\` (the default at 25,000 modules).`
      }`,
      '',
      `Equivalent queries (limit 50, \`sort=name\` vs \`_sort=name\`); the proxy's cursor pages were obtained by walking. Load: autocannon, ${settings.connections} connections, ${settings.warmupSeconds} s warm-up each, ${settings.rounds} alternating rounds of ${settings.seconds} s. Load average at the start: ${loadAtStart}.`,
      '',
      table(
        [
          'query',
          'proxy request',
          'json-server request',
          'records (proxy / json-server)',
          'X-Total-Count',
          'same ids',
        ],
        entries.map((e, i) => [
          e.label,
          `\`${e.proxy.shown}\``,
          `\`${e.peer}\``,
          `${checks[i]!.proxyRecords} / ${checks[i]!.peerRecords}`,
          checks[i]!.total,
          checks[i]!.sameIds,
        ]),
      ),
      '',
      table(
        ['server', 'req/s (median)', 'p50 ms', 'p99 ms', 'CPU ms per response'],
        [
          [
            'proxy over s3rver + dynalite',
            fmt.int(a.rps),
            fmt.ms(a.p50),
            fmt.ms(a.p99),
            `${fmt.ms(proxyCpu + depsCpu)} (proxy ${fmt.ms(proxyCpu)} + s3rver/dynalite ${fmt.ms(depsCpu)})`,
          ],
          ['json-server 0.17', fmt.int(b.rps), fmt.ms(b.p50), fmt.ms(b.p99), fmt.ms(peerCpu)],
          [
            'ratio proxy / json-server: median of the per-round ratios',
            fmt.x(factor),
            fmt.x(pairedRatio(mine, theirs, (r) => r.p50)),
            fmt.x(pairedRatio(mine, theirs, (r) => r.p99)),
            fmt.x((proxyCpu + depsCpu) / peerCpu),
          ],
          ...(reference
            ? [
                [
                  'reference, not the target: the proxy core of section 2 (no emulators), same pages',
                  fmt.int(reference.rps),
                  fmt.ms(reference.p50),
                  fmt.ms(reference.p99),
                  fmt.ms(referenceCpu),
                ],
              ]
            : []),
        ],
      ),
      '',
      `CPU per response is each child's \`process.cpuUsage()\` over a run divided by the responses of that run (median over rounds). ` +
        `Per filtered, sorted page json-server spends ${fmt.ms(peerCpu)} ms of CPU (it filters and sorts the whole collection on every request); the stack spends ${fmt.ms(proxyCpu + depsCpu)} ms: ${fmt.ms(depsCpu)} ms in s3rver and dynalite and ${fmt.ms(proxyCpu)} ms in the proxy process${
          reference
            ? `, of which the core's own work is about ${fmt.ms(referenceCpu)} ms (the reference row: the proxy core of section 2) and the remaining ${fmt.ms(proxyCpu - referenceCpu)} ms is the request path's client's work (lean signed requests; section 8 compares it with the SDK) and its HTTP for one S3 GET and one DynamoDB UpdateItem${profile ? ' (see the profile below)' : ''}`
            : ''
        }. On AWS, S3 and DynamoDB run elsewhere; the clients' share stays in the function. ` +
        `By CPU per page the stack is ${fmt.x(peerCpu / (proxyCpu + depsCpu))} cheaper than json-server; the throughput ratio also depends on how much of the second core the three stack processes get (json-server is one process).`,
      '',
      failures,
      '',
      'Every round:',
      '',
      roundsTable([
        ['stack', a],
        ['json-server', b],
      ]),
      '',
      profile,
    ].join('\n');

    return {
      markdown,
      commands: [
        `node --import tsx bench/servers/stack.ts bench/.work/s3 bench/.work/dynamo`,
        publish.command,
        `${Object.entries(stack.env)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ')} node --import tsx --expose-gc bench/servers/proxy-app.ts`,
        'node --import tsx bench/servers/json-server.ts bench/.work/db.json',
      ],
      targets: [
        {
          name: 'End to end vs json-server (filtered, sorted pages)',
          target: `≥ ${PEER_FACTOR}× json-server's throughput`,
          measured: `${fmt.int(a.rps)} vs ${fmt.int(b.rps)} req/s (medians); per-round ratio ${fmt.x(factor)}; p99 ${fmt.ms(a.p99)} vs ${fmt.ms(b.p99)} ms`,
          ok: factor >= PEER_FACTOR,
        },
      ],
    };
  } finally {
    await stopAll([peer]);
  }
}
